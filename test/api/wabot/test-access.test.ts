import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { makeIntegrationToken, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { MODULES } from '../../../api/tenants/catalog.js';
import { REFUSED_ONCE_NUMBER } from '../../../bin/dev-wabot.js';
import { dumpStores, secretForms } from '../mail/support.js';
import { chatRow, chatRows, configuredTenant, eventually, gwAccount, wabotWorld, type WabotWorld } from './support.js';

/** A device token no answer, row, audit entry, job, Redis key or log line may show in clear. */
const SENTINEL = 'wabot-Sentinel-test-9c4e1a';
const SENTINEL_KEY = 'wabot-Sentinel-tkey-5d2b7f';

/** Issue 10 items 4, 5: roles x route, module off, demo, integration token, and the sentinel token. */
describe('POST /api/wabot/test and /api/communications/{id}/resend: access and secrets', function () {
  this.timeout(60_000);
  let w: WabotWorld;
  let t: TenantFixture;
  const texts: string[] = [];

  const routes = (id: number) =>
    [
      ['/api/wabot/test', { message: 'Hello', phone: '0812 3456 7890' }],
      ['/api/wabot/test', {}],
      [`/api/communications/${id}/resend`, undefined],
    ] as const;
  /** What a refused request must leave alone. */
  const state = async (f: TenantFixture) => ({
    rows: (await chatRows(f.tenant.id)).length,
    audits: Number(
      (
        await env
          .knex('audit_log')
          .where({ tenant_id: f.tenant.id })
          .whereIn('action', ['wabot.tested', 'communications.resent'])
          .count<{ n: string }[]>({ n: '*' })
          .first()
      )?.n,
    ),
    jobs: await w.app.queues.get('wabot-send').getJobCounts(),
  });

  before(async () => {
    w = await wabotWorld();
    t = await configuredTenant(w.app, w.gw, {
      accounts: [gwAccount(w.gw, 'a', { token: SENTINEL, secret_key: SENTINEL_KEY })],
    });
  });
  after(() => w.close());
  beforeEach(() => {
    w.gw.arrivals.length = 0;
  });

  it('technician and staff 403 FORBIDDEN naming wabot.manage; integration token 401; module off 403 module_disabled; nothing written or sent', async () => {
    const id = await chatRow(t);
    const before = await state(t);
    for (const role of ['technician', 'staff']) {
      const u = await makeUser(t.tenant.id, role);
      for (const [path, body] of routes(id)) {
        const res = await w.app.request('POST', path, { token: u.token, body });
        expect(res.status, `${role} ${path}`).to.equal(403);
        expect(res.body.code).to.equal('FORBIDDEN');
        expect(res.body.message).to.include('wabot.manage');
      }
    }
    const integration = await makeIntegrationToken(t, 'read_write');
    for (const [path, body] of routes(id)) {
      const res = await w.app.request('POST', path, { token: integration.token, body });
      expect(res.status, path).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHENTICATED');
    }
    await env
      .knex('tenants')
      .where({ id: t.tenant.id })
      .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'wabot')) });
    try {
      for (const [path, body] of routes(id)) {
        const res = await w.app.request('POST', path, { token: t.adminToken, body });
        expect(res.status, path).to.equal(403);
        expect(res.body.code).to.equal('module_disabled');
      }
    } finally {
      await env
        .knex('tenants')
        .where({ id: t.tenant.id })
        .update({ modules: JSON.stringify(MODULES) });
    }
    expect(await state(t)).to.deep.equal(before);
    expect(w.gw.arrivals).to.have.length(0);
  });

  it('a demo-mode tenant: 403 demo_guard_blocked on both, no row, no job, no request', async () => {
    const demo = await configuredTenant(w.app, w.gw, { accounts: [gwAccount(w.gw, 'a')] }, {}, { demo: true });
    const id = await chatRow(demo);
    const before = await state(demo);
    for (const [path, body] of routes(id)) {
      const res = await w.app.request('POST', path, { token: demo.adminToken, body });
      expect(res.status, path).to.equal(403);
      expect(res.body.code).to.equal('demo_guard_blocked');
    }
    expect(await state(demo)).to.deep.equal(before);
    expect(w.gw.arrivals).to.have.length(0);
  });

  it('the sentinel token and key appear in no answer, database row in clear, job, Redis key or value, log line', async () => {
    const check = await w.app.request('POST', '/api/wabot/test', { token: t.adminToken });
    expect(check.body.data[0], check.text).to.include({ account_id: 'a', ok: true });
    const failed = await w.app.request('POST', '/api/wabot/test', {
      token: t.adminToken,
      body: { phone: REFUSED_ONCE_NUMBER, message: 'to be resent' },
    });
    expect(failed.body.data.status, failed.text).to.equal('failed');
    const resent = await w.app.request('POST', `/api/communications/${failed.body.data.communication_id}/resend`, {
      token: t.adminToken,
    });
    expect(resent.status, resent.text).to.equal(202);
    const done = await eventually(async () => {
      const r = await env.knex('communication_messages').where({ id: resent.body.data.id }).first();
      return r.status !== 'queued' ? r : null;
    });
    expect(done.status).to.equal('pending');
    // the gateway saw the token: the requests were really made with it
    expect(w.gw.arrivals.map((a) => a.result)).to.deep.equal(['refused', 'accepted']);
    const list = await w.app.request('GET', '/api/communications?channel=whatsapp', { token: t.adminToken });
    const detail = await w.app.request('GET', `/api/communications/${resent.body.data.id}`, { token: t.adminToken });
    texts.push(check.text, failed.text, resent.text, list.text, detail.text);
    const { db, redis } = await dumpStores();
    expect(redis).to.include('wabot-check');
    const dump = { texts: texts.join('\n'), db, redis, logs: w.app.logs.join(''), worker: w.workerLogs.join('') };
    expect(dump.logs).to.include('/api/wabot/test');
    for (const s of [SENTINEL, SENTINEL_KEY])
      for (const form of secretForms(s))
        for (const [where, text] of Object.entries(dump)) expect(text, `${where}: ${form}`).to.not.include(form);
  });
});
