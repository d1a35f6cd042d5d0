import { expect } from 'chai';
import pg from 'pg';
import { Writable } from 'node:stream';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { startWorkers } from '../../../workers/main.js';
import { createLogger } from '../../../lib/logger.js';
import { registry } from '../../../workers/registry.js';
import { closeTenantPools } from '../../../db/tenant-pools.js';
import { platformAdminToken } from './support.js';
import { saveTenantDbCredential } from './tenant-db-support.js';
import { openRolePassword } from '../../../api/platform/tenant-db/state.js';

/**
 * Issue 14 item 2 through a real (in-process) worker on the app's queue prefix: the registry's
 * `tenant-db` entry runs a pilot and its rollback; an unexpected object fails the run after one
 * attempt (UnrecoverableError). The only test file of the feature that starts a worker.
 */
describe('tenant databases: the tenant-db worker', function () {
  this.timeout(60_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  let a: TenantFixture;
  const workerLogs: string[] = [];
  const post = (path: string, body: object, slug = a.tenant.slug) =>
    app.request('POST', `/api/platform/tenants/${slug}/provisioning/${path}`, { token: ops.token, body });
  /** Polls the run until it is finished (bounded). */
  const finished = async (id: number) => {
    for (let i = 0; i < 200; i++) {
      const run = await env.knex('tenant_db_runs').where({ id }).first();
      if (run.status === 'succeeded' || run.status === 'failed') return run;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`run ${id} did not finish in 20 s`);
  };

  before(async () => {
    app = await startTestApp();
    const handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      queues: ['tenant-db'],
      logger: createLogger('info', new Writable({ write: (chunk, _e, cb) => (workerLogs.push(String(chunk)), cb()) })),
      registry: { 'tenant-db': registry['tenant-db']! },
    });
    registerCleanup(() => handle.close());
    ops = await platformAdminToken();
    await env.knex('provisioning_credentials').del();
    await saveTenantDbCredential(app, ops.token);
    a = await makeTenant();
  });
  after(() => closeTenantPools());

  it('pilot run and rollback succeed through the worker', async () => {
    const run = await post('pilot-db/run', { confirm_phrase: 'RUN DB PILOT' });
    expect(run.status, run.text).to.equal(202);
    const done = await finished(run.body.data.id);
    expect(done.status, done.error).to.equal('succeeded');
    const job = await app.queues.get('tenant-db').getJob(`tdb-run-${run.body.data.id}`);
    expect(job!.returnvalue).to.deep.equal({ runId: run.body.data.id, status: 'succeeded' });
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    const password = openRolePassword(TEST_WEB_APP_KEY, a.tenant.id, row.role_password_enc);
    const back = await post('pilot-db/rollback', { confirm_phrase: 'ROLLBACK DB PILOT' });
    expect(back.status, back.text).to.equal(202);
    expect((await finished(back.body.data.id)).result).to.include({ database: 'dropped', role: 'dropped' });
    expect(workerLogs.join('')).to.contain('tenant-db run succeeded');
    expect(workerLogs.join('')).to.not.contain(password);
    expect(JSON.stringify(await job!.getState()) + JSON.stringify(job!.data)).to.not.contain(password);
  });

  it('an unexpected object fails the run after one attempt, status kept', async () => {
    const b = await makeTenant();
    const name = `isp_t_${b.tenant.slug.replace(/-/g, '_')}`;
    const c = new pg.Client({ connectionString: env.adminDatabaseUrl });
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
    try {
      const run = await post('pilot-db/run', { confirm_phrase: 'RUN DB PILOT' }, b.tenant.slug);
      const done = await finished(run.body.data.id);
      expect(done.status).to.equal('failed');
      expect(done.error).to.equal(`unexpected object: database ${name} already exists`);
      const job = await app.queues.get('tenant-db').getJob(`tdb-run-${run.body.data.id}`);
      expect(job!.attemptsMade).to.equal(1);
      expect(await job!.getState()).to.equal('failed');
      expect((await env.knex('tenant_databases').where({ tenant_id: b.tenant.id }).first()).status).to.equal('none');
    } finally {
      await c.query(`DROP DATABASE ${name}`);
      await c.query(`DROP ROLE IF EXISTS ${name}_app`);
      await c.end();
    }
  });
});
