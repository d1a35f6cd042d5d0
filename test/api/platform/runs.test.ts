import { expect } from 'chai';
import { UnrecoverableError } from 'bullmq';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { ManualClock } from '../../../lib/clock.js';
import { resolveRuntime } from '../../../jobs/provisioning/runtime.js';
import { runJob } from '../../../jobs/provisioning-run.js';
import { PanelError } from '../../../jobs/adapters/mail-panel/types.js';
import { dumpStores } from '../mail/support.js';
import { platformAdminToken } from './support.js';
import { FakeDns, FakePanel, RUN_PANEL_PW, RUN_TOKEN, dns403, dns502, fakeRuntime } from './runs-fakes.js';

const ZONE = 'isp-cloud.test';
const MAIL = 'mail.platform.test';
const TARGET = '203.0.113.10';

/**
 * Issue 13 items 6-8 at the service level: the routes over real PostgreSQL and Redis (the flows are
 * added to Redis), the steps run by calling the processor's runJob with fake jobs (attempts
 * counted as BullMQ would), Cloudflare and the panel as in-memory fakes with failure injection.
 * The one file with a real worker is test/jobs/provisioning/run-worker.test.ts.
 */
describe('tenant provisioning runs (issue 13 items 6-8)', function () {
  this.timeout(30_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  const dns = new FakeDns(ZONE);
  const panel = new FakePanel();
  const rt = fakeRuntime(dns, panel);
  const clock = new ManualClock();
  const answers: string[] = [];
  const call = async (method: string, path: string, body?: object, token = ops.token) => {
    const r = await app.request(method, path, { token, body });
    answers.push(r.text);
    return r;
  };
  const base = (t: TenantFixture | string) =>
    `/api/platform/tenants/${typeof t === 'string' ? t : t.tenant.slug}/provisioning`;
  /** Runs one job of a run as the worker would (attemptsMade: attempts before this one). */
  const step = (runId: number, name: string, attemptsMade = 0) =>
    runJob(
      env.knex,
      resolveRuntime(env.knex, app.appKey, rt),
      app.appKey,
      { name, data: { run_id: runId }, attemptsMade, opts: { attempts: name === 'finish' ? 3 : 5 } },
      clock.now(),
    );
  const runRow = (id: number) => env.knex('provisioning_runs').where({ id }).first();
  const domains = (tenantId: number) =>
    env.knex('tenant_subscriber_domains').where({ tenant_id: tenantId }).orderBy('id');
  const ours = () => dns.records.filter((r) => r.comment?.startsWith('isp-backoffice'));

  before(async () => {
    app = await startTestApp({ provisioning: { runtime: rt, mailDomain: MAIL, dnsTarget: TARGET } });
    ops = await platformAdminToken();
  });

  it('tenant users 403, unknown tenants 404 on every kind of route', async () => {
    const a = await makeTenant();
    expect((await call('GET', base(a), undefined, a.adminToken)).status).to.equal(403);
    expect((await call('POST', `${base(a)}/preview`, {}, a.adminToken)).status).to.equal(403);
    expect((await call('GET', base('no-such-tenant'))).status).to.equal(404);
    expect(
      (
        await call('POST', `${base('99999999')}/subscriber-domain/provision`, {
          confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN',
        })
      ).status,
    ).to.equal(404);
  });

  it('each bad field, a CNAME to an IP, an A to a hostname, a domain outside the zone: 422 naming the field', async () => {
    const a = await makeTenant();
    const bad: [object, string][] = [
      [{ subdomain: 'Bad_Label' }, 'subdomain'],
      [{ domain: 'example.org' }, 'domain'],
      [{ record_type: 'MX' }, 'record_type'],
      [{ record_type: 'CNAME', dns_target: '203.0.113.7' }, 'dns_target'],
      [{ record_type: 'A', dns_target: 'edge.example.net' }, 'dns_target'],
      [{ dns_target: '300.1.1.1' }, 'dns_target'],
      [{ proxied: 'yes' }, 'proxied'],
      [{ mailbox_local_part: '-x' }, 'mailbox_local_part'],
      [{ mailbox_quota_mb: 102401 }, 'mailbox_quota_mb'],
      [{ mailbox_quota_mb: -1 }, 'mailbox_quota_mb'],
    ];
    for (const [body, field] of bad) {
      const r = await call('POST', `${base(a)}/preview`, body);
      expect(r.status, JSON.stringify(body)).to.equal(422);
      expect(r.body.errors, JSON.stringify(body)).to.have.property(field);
    }
    const extra = await call('POST', `${base(a)}/preview`, { nope: 1 });
    expect(extra.status).to.equal(422);
  });

  it('preview: the plan read live (create, then conflict for a record not ours); saves nothing', async () => {
    const a = await makeTenant();
    const before = await env.knex('provisioning_runs').count({ n: '*' }).first();
    const p = await call('POST', `${base(a)}/preview`, { subdomain: `pv-${a.tenant.id}` });
    expect(p.status, p.text).to.equal(200);
    expect(p.body.data.record).to.include({
      name: `pv-${a.tenant.id}.${ZONE}`,
      type: 'A',
      content: TARGET,
      proxied: true,
      action: 'create',
    });
    expect(p.body.data.mailbox).to.include({ address: `${a.tenant.slug}@${MAIL}`, quota_mb: 1024, action: 'create' });
    expect(p.body.data.database.name).to.equal(`isp_t_pv_${a.tenant.id}`);
    dns.foreign(`pv-${a.tenant.id}.${ZONE}`);
    const c = await call('POST', `${base(a)}/preview`, { subdomain: `pv-${a.tenant.id}` });
    expect(c.body.data.record.action).to.equal('conflict');
    expect(c.body.data.record.conflicts[0]).to.match(/not ours/);
    expect(await env.knex('provisioning_runs').count({ n: '*' }).first()).to.deep.equal(before);
    expect(await domains(a.tenant.id)).to.have.length(0);
  });

  it('wrong or missing phrase on each run route, and a locked platform: 422, no row, no job', async () => {
    const a = await makeTenant();
    const q = app.queues.get('provisioning');
    const counts = () => q.getJobCounts('waiting', 'waiting-children', 'delayed', 'completed', 'failed');
    const jobsBefore = await counts();
    const routes = [
      '/subscriber-domain/provision',
      '/subscriber-domain/change-apply',
      '/subscriber-domain/cleanup-old',
    ];
    for (const r of routes)
      for (const phrase of [undefined, 'provision subscriber domain', 'DELETE OLD SUBSCRIBER DNS ']) {
        const res = await call('POST', `${base(a)}${r}`, {
          domain: `x.${ZONE}`,
          ...(phrase === undefined ? {} : { confirm_phrase: phrase }),
        });
        expect(res.status, `${r} ${phrase}`).to.equal(422);
        expect(res.body.errors).to.have.property('confirm_phrase');
      }
    rt.source.state.lock = { locked: true, reasons: ['cloudflare'] };
    try {
      const res = await call('POST', `${base(a)}/subscriber-domain/provision`, {
        confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN',
      });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('provisioning_locked');
    } finally {
      rt.source.state.lock = { locked: false, reasons: [] };
    }
    expect(await env.knex('provisioning_runs').where({ tenant_id: a.tenant.id })).to.have.length(0);
    expect(await counts()).to.deep.equal(jobsBefore);
    const demo = await makeTenant({ demo: true });
    const d = await call('POST', `${base(demo)}/subscriber-domain/provision`, {
      confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN',
    });
    expect(d.status).to.equal(403);
    expect(d.body.code).to.equal('demo_guard_blocked');
  });

  it('provision with DNS 502 twice: one record, read back, active, mailbox; the flow has the fixed ids', async () => {
    const a = await makeTenant();
    const draft = await call('POST', `${base(a)}/draft`, { subdomain: `net-${a.tenant.id}`, mailbox_quota_mb: 0 });
    expect(draft.status, draft.text).to.equal(201);
    const r = await call('POST', `${base(a)}/subscriber-domain/provision`, {
      draft_id: draft.body.data.id,
      confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN',
    });
    expect(r.status, r.text).to.equal(202);
    const id = r.body.data.id as number;
    expect(r.body.data).to.include({ kind: 'provision', status: 'queued', phrase: 'PROVISION SUBSCRIBER DOMAIN' });
    expect(r.body.data.request).to.include({
      subdomain: `net-${a.tenant.id}`,
      mailbox_quota_mb: 0,
      dns_target: TARGET,
    });
    const q = app.queues.get('provisioning');
    const parent = await q.getJob(`prov-${id}-finish`);
    const child = await q.getJob(`prov-${id}-mailbox`);
    expect(parent?.name).to.equal('finish');
    expect(child?.opts.ignoreDependencyOnFailure).to.equal(true);
    expect((await q.getJob(`prov-${id}-dns`))?.data).to.deep.equal({ run_id: id });

    dns.failures.createRecord = [dns502(), dns502()];
    for (const n of [0, 1]) {
      const err = await step(id, 'dns', n).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(Error).and.not.instanceOf(UnrecoverableError);
    }
    expect((await runRow(id)).steps.dns).to.include({ status: 'retrying', attempts: 2 });
    const res = await step(id, 'dns', 2);
    expect(res).to.include({ domain: `net-${a.tenant.id}.${ZONE}`, action: 'create' });
    expect(ours().filter((x) => x.name === `net-${a.tenant.id}.${ZONE}`)).to.have.length(1);
    await step(id, 'mailbox');
    expect(panel.boxes.get(`${a.tenant.slug}@${MAIL}`)?.quota).to.equal(null);
    expect(await step(id, 'finish')).to.deep.equal({ status: 'succeeded' });
    const [d] = await domains(a.tenant.id);
    expect(d).to.include({ status: 'active', domain: `net-${a.tenant.id}.${ZONE}` });
    expect(d.verified_at).to.be.instanceOf(Date);
    // a retried step does nothing twice
    await step(id, 'dns', 0);
    expect(ours().filter((x) => x.name === `net-${a.tenant.id}.${ZONE}`)).to.have.length(1);
    const state = await call('GET', base(a));
    expect(state.body.data.domains[0]).to.include({ status: 'active', dns_managed: true });
    expect(state.body.data.runs[0]).to.include({ id, status: 'succeeded' });
    expect(state.body.data.mailbox[0].initial_password).to.be.a('string').with.length(20);
    expect((await call('GET', base(a))).body.data.mailbox[0].initial_password).to.equal(null);
    expect(state.body.data.drafts[0].id).to.equal(draft.body.data.id);
  });

  it('provision with DNS 403: failed at once, the domain failed and not active', async () => {
    const a = await makeTenant();
    const r = await call('POST', `${base(a)}/subscriber-domain/provision`, {
      subdomain: `deny-${a.tenant.id}`,
      confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN',
    });
    expect(r.status, r.text).to.equal(202);
    dns.failures.createRecord = [dns403()];
    const err = await step(r.body.data.id, 'dns', 0).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnrecoverableError);
    await step(r.body.data.id, 'mailbox');
    expect(await step(r.body.data.id, 'finish')).to.deep.equal({ status: 'failed' });
    const run = await runRow(r.body.data.id);
    expect(run.error).to.match(/403/);
    expect(run.steps.dns).to.include({ status: 'failed', attempts: 1 });
    expect((await domains(a.tenant.id)).map((d) => d.status)).to.deep.equal(['failed']);
  });

  it('panel error after DNS: partial; resume (its phrase) runs the mailbox only', async () => {
    const a = await makeTenant();
    const r = await call('POST', `${base(a)}/subscriber-domain/provision`, {
      subdomain: `pp-${a.tenant.id}`,
      confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN',
    });
    const id = r.body.data.id as number;
    await step(id, 'dns');
    panel.failures = [new PanelError('permanent', 'quota exceeded on the account')];
    expect(await step(id, 'mailbox').catch((e: unknown) => e)).to.be.instanceOf(UnrecoverableError);
    expect(await step(id, 'finish')).to.deep.equal({ status: 'partial' });
    const wrong = await call('POST', `${base(a)}/runs/${id}/resume`, { confirm_phrase: 'CHANGE SUBSCRIBER DOMAIN' });
    expect(wrong.status).to.equal(422);
    const res = await call('POST', `${base(a)}/runs/${id}/resume`, { confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN' });
    expect(res.status, res.text).to.equal(202);
    expect(res.body.data).to.include({ status: 'queued', resumes: 1 });
    const q = app.queues.get('provisioning');
    expect(await q.getJob(`prov-${id}-mailbox-r1`)).to.not.equal(undefined);
    expect(await q.getJob(`prov-${id}-dns-r1`)).to.equal(undefined);
    const creates = dns.calls.filter((c) => c === 'createRecord').length;
    await step(id, 'mailbox');
    expect(await step(id, 'finish')).to.deep.equal({ status: 'succeeded' });
    expect(dns.calls.filter((c) => c === 'createRecord').length).to.equal(creates);
    expect(panel.boxes.has(`${a.tenant.slug}@${MAIL}`)).to.equal(true);
    const again = await call('POST', `${base(a)}/runs/${id}/resume`, { confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN' });
    expect(again.status).to.equal(422);
    expect(again.body.code).to.equal('INVALID_TRANSITION');
  });

  it('the same request twice, concurrently: one run; another request while it is open: 422', async () => {
    const a = await makeTenant();
    const body = { subdomain: `cc-${a.tenant.id}`, confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN' };
    const [x, y] = await Promise.all([
      call('POST', `${base(a)}/subscriber-domain/provision`, body),
      call('POST', `${base(a)}/subscriber-domain/provision`, body),
    ]);
    expect([x.status, y.status]).to.deep.equal([202, 202]);
    expect(x.body.data.id).to.equal(y.body.data.id);
    expect(await env.knex('provisioning_runs').where({ tenant_id: a.tenant.id })).to.have.length(1);
    const other = await call('POST', `${base(a)}/subscriber-domain/provision`, {
      ...body,
      subdomain: `zz-${a.tenant.id}`,
    });
    expect(other.status).to.equal(422);
    expect(other.body.code).to.equal('INVALID_TRANSITION');
  });

  it('change-apply, then cleanup-old: old replaced with DNS kept; only our ids deleted; refusals 422 INVALID_TRANSITION', async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    const oldName = `old-${a.tenant.id}.${ZONE}`;
    const newName = `new-${a.tenant.id}.${ZONE}`;
    const p = await call('POST', `${base(a)}/subscriber-domain/provision`, {
      subdomain: `old-${a.tenant.id}`,
      confirm_phrase: 'PROVISION SUBSCRIBER DOMAIN',
    });
    for (const s of ['dns', 'mailbox', 'finish']) await step(p.body.data.id, s);
    const txt = dns.foreign(oldName, 'TXT', 'verification=keep-me');
    // cleanup of the active (unreplaced) domain
    const early = await call('POST', `${base(a)}/subscriber-domain/cleanup-old`, {
      domain: oldName,
      confirm_phrase: 'DELETE OLD SUBSCRIBER DNS',
    });
    expect(early.status).to.equal(422);
    expect(early.body.code).to.equal('INVALID_TRANSITION');
    const prev = await call('POST', `${base(a)}/subscriber-domain/change-preview`, { subdomain: `new-${a.tenant.id}` });
    expect(prev.status, prev.text).to.equal(200);
    expect(prev.body.data.old.domain).to.equal(oldName);
    expect(prev.body.data.old.records.TXT[0]).to.include({ ours: false });
    expect(prev.body.data.old.records.A[0]).to.include({ ours: true });
    expect(prev.body.data.new).to.include({ domain: newName, action: 'create' });
    expect(prev.body.data.old_cleanup_after_change).to.equal(true);
    const c = await call('POST', `${base(a)}/subscriber-domain/change-apply`, {
      subdomain: `new-${a.tenant.id}`,
      confirm_phrase: 'CHANGE SUBSCRIBER DOMAIN',
    });
    expect(c.status, c.text).to.equal(202);
    expect(c.body.data.steps).to.have.keys('dns');
    await step(c.body.data.id, 'dns');
    expect(await step(c.body.data.id, 'finish')).to.deep.equal({ status: 'succeeded' });
    const rows = await domains(a.tenant.id);
    expect(rows.map((d) => [d.domain, d.status])).to.deep.equal([
      [oldName, 'replaced'],
      [newName, 'active'],
    ]);
    expect(ours().filter((r) => r.name === oldName)).to.have.length(1);
    // foreign: another tenant's domain; primary; unverified replacement
    const foreign = await call('POST', `${base(b)}/subscriber-domain/cleanup-old`, {
      domain: oldName,
      confirm_phrase: 'DELETE OLD SUBSCRIBER DNS',
    });
    expect(foreign.status).to.equal(422);
    expect(foreign.body.code).to.equal('INVALID_TRANSITION');
    await env.knex('tenants').where({ id: a.tenant.id }).update({ primary_domain: oldName });
    const primary = await call('POST', `${base(a)}/subscriber-domain/cleanup-old`, {
      domain: oldName,
      confirm_phrase: 'DELETE OLD SUBSCRIBER DNS',
    });
    expect(primary.body.code).to.equal('INVALID_TRANSITION');
    expect(primary.body.message).to.match(/primary/);
    await env.knex('tenants').where({ id: a.tenant.id }).update({ primary_domain: null });
    await env.knex('tenant_subscriber_domains').where({ domain: newName }).update({ verified_at: null });
    const unverified = await call('POST', `${base(a)}/subscriber-domain/cleanup-old`, {
      domain: oldName,
      confirm_phrase: 'DELETE OLD SUBSCRIBER DNS',
    });
    expect(unverified.body.code).to.equal('INVALID_TRANSITION');
    await env.knex('tenant_subscriber_domains').where({ domain: newName }).update({ verified_at: clock.now() });
    expect(await env.knex('provisioning_runs').where({ tenant_id: a.tenant.id, kind: 'cleanup' })).to.have.length(0);
    const ok = await call('POST', `${base(a)}/subscriber-domain/cleanup-old`, {
      domain: oldName,
      confirm_phrase: 'DELETE OLD SUBSCRIBER DNS',
    });
    expect(ok.status, ok.text).to.equal(202);
    const res = (await step(ok.body.data.id, 'dns')) as { deleted: string[] };
    expect(await step(ok.body.data.id, 'finish')).to.deep.equal({ status: 'succeeded' });
    expect(res.deleted).to.deep.equal([rows[0].dns_record_ids[0]]);
    expect(dns.records.filter((r) => r.name === oldName)).to.deep.equal([txt]);
    expect(ours().filter((r) => r.name === newName)).to.have.length(1);
    expect((await domains(a.tenant.id)).map((d) => d.status)).to.deep.equal(['removed', 'active']);
  });

  it('regenerate-preview: {slug}.{zone}, else -2 when records or tenants hold it', async () => {
    const a = await makeTenant();
    const free = await call('POST', `${base(a)}/subscriber-domain/regenerate-preview`, {});
    expect(free.body.data).to.include({ domain: `${a.tenant.slug}.${ZONE}`, free: true });
    dns.foreign(`${a.tenant.slug}.${ZONE}`, 'CNAME', 'elsewhere.example.net');
    const next = await call('POST', `${base(a)}/subscriber-domain/regenerate-preview`, {});
    expect(next.body.data).to.include({ subdomain: `${a.tenant.slug}-2`, domain: `${a.tenant.slug}-2.${ZONE}` });
    expect(next.body.data.checked[0]).to.include({ free: false, reason: 'DNS records exist' });
  });

  it('the sentinel secrets are in no table, Redis key, log line or answer', async () => {
    const { db, redis } = await dumpStores();
    for (const s of [RUN_TOKEN, RUN_PANEL_PW]) {
      expect(db).to.not.include(s);
      expect(redis).to.not.include(s);
      expect(app.logs.join('')).to.not.include(s);
      expect(answers.join('')).to.not.include(s);
    }
  });
});
