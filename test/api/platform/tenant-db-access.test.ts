import { expect } from 'chai';
import type { Job } from 'bullmq';
import { recordRunFailure } from '../../../jobs/tenant-db.js';
import type { TenantDbJobData } from '../../../api/platform/tenant-db/runs.js';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { createQueues } from '../../../jobs/queues.js';
import { closeTenantPools } from '../../../db/tenant-pools.js';
import { sealRolePassword, STEPS, TENANT_DB_STATUSES, type RunKind } from '../../../api/platform/tenant-db/state.js';
import { platformAdminToken } from './support.js';
import { runJob, saveTenantDbCredential, tenantDbCredential } from './tenant-db-support.js';

type Step = { method: string; path: string; kind?: RunKind; phrase?: string; body?: object };
const STEP_ROUTES: Step[] = [
  { method: 'POST', path: 'pilot-db/preview', body: {} },
  { method: 'POST', path: 'pilot-db/run', kind: 'pilot_run', phrase: 'RUN DB PILOT' },
  { method: 'POST', path: 'pilot-db/rollback', kind: 'pilot_rollback', phrase: 'ROLLBACK DB PILOT' },
  { method: 'POST', path: 'tenant-db/test', body: {} },
  { method: 'GET', path: 'tenant-schema/preview' },
  { method: 'POST', path: 'tenant-schema/run', kind: 'schema_run', phrase: 'RUN TENANT SCHEMA' },
  { method: 'POST', path: 'data-copy/dry-run', kind: 'copy_dry_run', body: {} },
  { method: 'POST', path: 'data-copy/run', kind: 'copy_run', phrase: 'COPY TENANT DATA PILOT' },
  { method: 'POST', path: 'data-copy/rollback', kind: 'copy_rollback', phrase: 'ROLLBACK TENANT DATA PILOT' },
];
const bodyOf = (s: Step) => s.body ?? (s.phrase ? { confirm_phrase: s.phrase } : undefined);

/**
 * Issue 14 items 1-6: who may call the tenant database routes, the phrases, each step from each
 * status, a second unfinished run, no credential, Redis down. Runs are only queued here (no worker);
 * tenant-db-lifecycle.test.ts runs them.
 */
describe('tenant databases: access, phrases and transitions', function () {
  this.timeout(60_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  let a: TenantFixture;
  const url = (s: Step, ref: string | number = a.tenant.slug) => `/api/platform/tenants/${ref}/provisioning/${s.path}`;
  const runs = async (tenantId = a.tenant.id) => env.knex('tenant_db_runs').where({ tenant_id: tenantId });
  const jobs = async () => (await app.queues.get('tenant-db').getJobs(['waiting', 'delayed', 'active'])).length;
  const clearRuns = async () => {
    await env.knex('tenant_db_runs').where({ tenant_id: a.tenant.id }).delete();
    await app.queues.get('tenant-db').obliterate({ force: true });
  };
  /** A tenant_databases row in `status`, reachable: the test database as the superuser (sealed). */
  const setStatus = async (status: string) => {
    const c = tenantDbCredential();
    const u = new URL(env.databaseUrl);
    const fields = {
      status,
      database_name: u.pathname.slice(1),
      role_name: c.admin_user,
      server_host: c.host,
      server_port: c.port,
      subdomain: a.tenant.slug,
      db_user_host: '%',
      role_password_enc: sealRolePassword(TEST_WEB_APP_KEY, a.tenant.id, c.admin_password),
    };
    await env
      .knex('tenant_databases')
      .insert({ tenant_id: a.tenant.id, ...fields })
      .onConflict('tenant_id')
      .merge(fields);
  };

  before(async () => {
    app = await startTestApp();
    ops = await platformAdminToken();
    await env.knex('provisioning_credentials').del();
    a = await makeTenant();
  });
  after(() => closeTenantPools());

  it('no tenant_db credential: 422 INVALID_TRANSITION, no run', async () => {
    const r = await app.request('POST', url(STEP_ROUTES[1]), {
      token: ops.token,
      body: { confirm_phrase: 'RUN DB PILOT' },
    });
    expect(r.status).to.equal(422);
    expect(r.body.code).to.equal('INVALID_TRANSITION');
    expect(await runs()).to.have.length(0);
    await saveTenantDbCredential(app, ops.token);
  });

  it('every endpoint: platform admin 2xx, tenant Super Admin 403, integration token 401, none 401; unknown tenant 404', async () => {
    const integration = await makeIntegrationToken(a, 'read_write');
    for (const s of STEP_ROUTES) {
      const status = s.kind ? STEPS[s.kind].from[0] : 'pilot_created';
      await setStatus(s.path === 'pilot-db/preview' ? 'none' : status);
      if (s.kind === 'copy_run')
        await env.knex('tenant_db_runs').insert({
          tenant_id: a.tenant.id,
          kind: 'copy_dry_run',
          status: 'succeeded',
          result: JSON.stringify({ collisions_total: 0 }),
        });
      if (s.kind === 'pilot_run') await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).delete();
      const ok = await app.request(s.method, url(s), { token: ops.token, body: bodyOf(s) });
      expect(ok.status, `${s.path}: ${ok.text}`).to.equal(s.kind ? 202 : 200);
      if (s.kind) expect(ok.body.data).to.include({ kind: s.kind, status: 'queued', requested_by: ops.id });
      expect((await app.request(s.method, url(s), { token: a.adminToken, body: bodyOf(s) })).status, s.path).to.equal(
        403,
      );
      expect(
        (await app.request(s.method, url(s), { token: integration.token, body: bodyOf(s) })).status,
        s.path,
      ).to.equal(401);
      expect((await app.request(s.method, url(s), { body: bodyOf(s) })).status, s.path).to.equal(401);
      const unknown = await app.request(s.method, url(s, 'no-such-tenant'), { token: ops.token, body: bodyOf(s) });
      expect(unknown.status, s.path).to.equal(404);
      expect((await app.request(s.method, url(s, 2147483000), { token: ops.token, body: bodyOf(s) })).status).to.equal(
        404,
      );
      await clearRuns();
    }
    const audit = await env.knex('platform_audit_log').where({ subject_type: 'tenant', subject_id: a.tenant.id });
    expect(audit.map((x) => x.action).sort()).to.deep.equal(
      STEP_ROUTES.filter((s) => s.kind)
        .map((s) => `platform.tenant_db_${s.kind}`)
        .sort(),
    );
  });

  it('each phrase absent, lower-case or wrong: 422 errors.confirm_phrase, no run, no job', async () => {
    for (const s of STEP_ROUTES.filter((x) => x.phrase)) {
      await setStatus(STEPS[s.kind!].from[0]);
      if (s.kind === 'pilot_run') await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).delete();
      for (const body of [{}, { confirm_phrase: s.phrase!.toLowerCase() }, { confirm_phrase: `${s.phrase} NOW` }]) {
        const r = await app.request('POST', url(s), { token: ops.token, body });
        expect(r.status, `${s.path} ${JSON.stringify(body)}`).to.equal(422);
        expect(r.body.code).to.equal('VALIDATION_FAILED');
        expect(r.body.errors).to.have.property('confirm_phrase');
      }
    }
    expect(await runs()).to.have.length(0);
    expect(await jobs()).to.equal(0);
  });

  it('each step from each status: accepted or 422 INVALID_TRANSITION; a second unfinished run refused', async () => {
    const seen: string[] = [];
    for (const status of TENANT_DB_STATUSES) {
      for (const s of STEP_ROUTES.filter((x) => x.kind)) {
        await setStatus(status);
        await env.knex('tenant_db_runs').insert({
          tenant_id: a.tenant.id,
          kind: 'copy_dry_run',
          status: 'succeeded',
          result: JSON.stringify({ collisions_total: 0 }),
        });
        const r = await app.request('POST', url(s), { token: ops.token, body: bodyOf(s) });
        const allowed = STEPS[s.kind!].from.includes(status);
        expect(r.status, `${s.kind} from ${status}: ${r.text}`).to.equal(allowed ? 202 : 422);
        if (!allowed) expect(r.body.code).to.equal('INVALID_TRANSITION');
        else {
          seen.push(`${s.kind}<-${status}`);
          const second = await app.request('POST', url(s), { token: ops.token, body: bodyOf(s) });
          expect(second.status).to.equal(422);
          expect(second.body.code).to.equal('INVALID_TRANSITION');
          expect(second.body.message).to.contain('unfinished');
        }
        await clearRuns();
      }
    }
    expect(seen).to.have.length(11);
    // test and the schema preview need a pilot
    await setStatus('none');
    for (const s of STEP_ROUTES.filter((x) => x.path === 'tenant-db/test' || x.path === 'tenant-schema/preview')) {
      const r = await app.request(s.method, url(s), { token: ops.token, body: bodyOf(s) });
      expect(r.status, s.path).to.equal(422);
      expect(r.body.code).to.equal('INVALID_TRANSITION');
    }
  });

  it('data-copy/run needs a dry-run since the last schema run with zero collisions', async () => {
    const s = STEP_ROUTES.find((x) => x.kind === 'copy_run')!;
    await setStatus('schema_migrated');
    await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).update({ schema_run_at: env.knex.fn.now() });
    const none = await app.request('POST', url(s), { token: ops.token, body: bodyOf(s) });
    expect(none.status).to.equal(422);
    expect(none.body.message).to.contain('without a dry-run');
    await env.knex('tenant_db_runs').insert({
      tenant_id: a.tenant.id,
      kind: 'copy_dry_run',
      status: 'succeeded',
      result: JSON.stringify({ collisions_total: 2 }),
      created_at: new Date(Date.now() + 60_000),
    });
    const dirty = await app.request('POST', url(s), { token: ops.token, body: bodyOf(s) });
    expect(dirty.status).to.equal(422);
    expect(dirty.body.message).to.contain('2 collisions');
    await clearRuns();
  });

  it('bad subdomain, domain, db_user_host: 422 field errors; the master tenant is refused', async () => {
    await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).delete();
    const s = STEP_ROUTES[1];
    const r = await app.request('POST', url(s), {
      token: ops.token,
      body: { subdomain: '-bad-', domain: 'not a host', db_user_host: '10.0.0.300', confirm_phrase: s.phrase },
    });
    expect(r.status).to.equal(422);
    expect(Object.keys(r.body.errors).sort()).to.deep.equal(['db_user_host', 'domain', 'subdomain']);
    const long = await app.request('POST', url(STEP_ROUTES[0]), {
      token: ops.token,
      body: { subdomain: 'a'.repeat(41) },
    });
    expect(long.status).to.equal(422);
    expect(long.body.errors).to.have.property('subdomain');
    for (const host of ['localhost', '%', '192.168.1.7', '10.0.0.0/8', '::1', 'fd00::/8']) {
      const p = await app.request('POST', url(STEP_ROUTES[0]), { token: ops.token, body: { db_user_host: host } });
      expect(p.status, `${host}: ${p.text}`).to.equal(200);
      expect(p.body.data.pg_hba_conf.length).to.be.greaterThan(0);
    }
    const m = await makeTenant();
    // another file of the shard (the fuzzer's PUT tenants) may have left a master: at most one exists
    await env.knex('tenants').where({ is_master: true }).update({ is_master: false });
    await env.knex('tenants').where({ id: m.tenant.id }).update({ is_master: true });
    const master = await app.request('POST', url(s, m.tenant.slug), {
      token: ops.token,
      body: { confirm_phrase: s.phrase },
    });
    expect(master.status).to.equal(422);
    expect(master.body.code).to.equal('INVALID_TRANSITION');
    await env.knex('tenants').where({ id: m.tenant.id }).update({ is_master: false });
    expect(await runs(m.tenant.id)).to.have.length(0);
    expect(await runs()).to.have.length(0);
  });

  it('job: data {runId} only, 5 attempts from 2 s; refused connection retried then failed; bad password fails at once', async () => {
    const s = STEP_ROUTES.find((x) => x.kind === 'schema_run')!;
    await setStatus('pilot_created');
    await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).update({ server_port: 1 });
    const r = await app.request('POST', url(s), { token: ops.token, body: bodyOf(s) });
    expect(r.status, r.text).to.equal(202);
    const job = await app.queues.get('tenant-db').getJob(`tdb-run-${r.body.data.id}`);
    expect(job!.data).to.deep.equal({ runId: r.body.data.id });
    expect(job!.opts).to.deep.include({ attempts: 5, backoff: { type: 'exponential', delay: 2000 } });
    const first = await runJob(app, r.body.data.id, { attemptsMade: 0 });
    expect(first.status).to.equal('running');
    expect(first.error).to.match(/^attempt 1: .*ECONNREFUSED/);
    const last = await runJob(app, r.body.data.id, { attemptsMade: 4 });
    expect(last.status).to.equal('failed');
    expect(last.error).to.contain('ECONNREFUSED');
    expect((await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first()).status).to.equal(
      'pilot_created',
    );
    await clearRuns();
    await setStatus('pilot_created');
    await env
      .knex('tenant_databases')
      .where({ tenant_id: a.tenant.id })
      .update({ role_password_enc: sealRolePassword(TEST_WEB_APP_KEY, a.tenant.id, 'not-the-password') });
    const bad = await app.request('POST', url(s), { token: ops.token, body: bodyOf(s) });
    const failed = await runJob(app, bad.body.data.id, { attemptsMade: 0 });
    expect(failed.status).to.equal('failed');
    expect(failed.error).to.contain('password authentication failed');
    const t = await app.request('POST', url(STEP_ROUTES[3]), { token: ops.token, body: {} });
    expect(t.status).to.equal(422);
    expect(t.body.code).to.equal('tenant_db_unreachable');
    expect(t.body.errors.tenant_db[0]).to.contain('password authentication failed');
    await clearRuns();
  });

  it('the failure hook fails a run whose job ended failed (its worker died), not one that will be retried', async () => {
    const [{ id }] = await env
      .knex('tenant_db_runs')
      .insert({ tenant_id: a.tenant.id, kind: 'schema_run', status: 'running' })
      .returning('id');
    const fake = (state: string) =>
      // the hook reads only data.runId and getState() of a Job
      ({ data: { runId: id }, getState: async () => state }) as unknown as Job<TenantDbJobData>;
    await recordRunFailure(env.knex, fake('delayed'), new Error('job stalled more than allowable limit'));
    expect((await env.knex('tenant_db_runs').where({ id }).first()).status).to.equal('running');
    await recordRunFailure(env.knex, fake('failed'), new Error('job stalled more than allowable limit'));
    const run = await env.knex('tenant_db_runs').where({ id }).first();
    expect(run).to.include({ status: 'failed', error: 'job stalled more than allowable limit' });
    await clearRuns();
  });

  it('Redis down: 503 QUEUE_UNAVAILABLE and the run row removed', async () => {
    const down = await startTestApp();
    const dead = createQueues('redis://127.0.0.1:1', { prefix: `{tdb-dead-${process.pid}}` });
    registerCleanup(() => dead.close());
    Object.assign(down.queues, { get: dead.get.bind(dead) });
    await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).delete();
    const s = STEP_ROUTES[1];
    const r = await down.request('POST', url(s), { token: ops.token, body: { confirm_phrase: s.phrase } });
    expect(r.status, r.text).to.equal(503);
    expect(r.body.code).to.equal('QUEUE_UNAVAILABLE');
    expect(await runs()).to.have.length(0);
  });
});
