import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import nock from 'nock';
import { env, registerCleanup } from '../../helpers/env.js';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { startWorkers, type WorkerHandle } from '../../../workers/main.js';
import * as wabotStatus from '../../../jobs/wabot-status.js';
import { createLogger } from '../../../lib/logger.js';
import { ACCOUNTS, configure } from './inbound-support.js';

/** Issue 11 item 3: sync-status and sync-device-status through a real wabot-status worker (nock for Wablas). */
describe('POST /api/wabot/sync-status, /api/wabot/sync-device-status', function () {
  this.timeout(60_000);
  let app: TestApp;
  let handle: WorkerHandle;
  const BASE = 'https://wablas.test';
  const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/wabot/reports');
  const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(DIR, `${name}.json`), 'utf8'));
  const [WABLAS, FONNTE] = ACCOUNTS;

  before(async () => {
    app = await startTestApp();
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('info', sink),
      queues: ['wabot-status'],
      registry: { 'wabot-status': { processor: wabotStatus.process, concurrency: 2 } },
      chatSend: { timeoutMs: 3000 },
    });
    registerCleanup(() => handle.close());
  });
  afterEach(() => nock.cleanAll());

  const sync = (f: TenantFixture, body?: unknown) =>
    app.request('POST', '/api/wabot/sync-status', { token: f.adminToken, body });
  const device = (f: TenantFixture) => app.request('POST', '/api/wabot/sync-device-status', { token: f.adminToken });

  /** An outbound chat row; `ageMs` before now. */
  async function out(
    f: TenantFixture,
    messageId: string,
    status: string,
    o: { ageMs?: number; account?: string } = {},
  ) {
    const at = new Date(Date.now() - (o.ageMs ?? 60_000));
    const [row] = await env
      .knex('communication_messages')
      .insert({
        tenant_id: f.tenant.id,
        channel: 'whatsapp',
        direction: 'out',
        status,
        source: 'test',
        account_ref: o.account ?? WABLAS.id,
        counterpart: '6281234567801',
        recipient_kind: 'phone',
        body_text: `message ${messageId}`,
        message_id: messageId,
        occurred_at: at,
        queued_at: at,
        sent_at: status === 'sent' ? at : null,
      })
      .returning('id');
    return Number(row.id);
  }
  const rowOf = (id: number) =>
    env
      .knex('communication_messages')
      .where({ id })
      .first('status', 'sent_at', 'delivered_at', 'read_at', 'failed_at', 'error_code', 'error_message');

  it('delivered and read from the realtime report, cancel failed, pending kept; old, other-provider and finished rows untouched; never sends', async () => {
    const f = await makeTenant();
    await configure(app, f, {}, [WABLAS, FONNTE]);
    const ids = {
      delivered: await out(f, 'WB-OUT-DELIVERED', 'pending', { ageMs: 300_000 }),
      read: await out(f, 'WB-OUT-READ', 'sent', { ageMs: 200_000 }),
      pending: await out(f, 'WB-OUT-PENDING', 'pending', { ageMs: 100_000 }),
      cancel: await out(f, 'WB-OUT-CANCEL', 'pending', { ageMs: 50_000 }),
      old: await out(f, 'WB-OLD', 'pending', { ageMs: 8 * 86_400_000 }),
      fonnte: await out(f, 'FN-1', 'pending', { account: FONNTE.id }),
      done: await out(f, 'WB-DONE', 'delivered'),
    };
    const before = await env.knex('communication_messages').where({ tenant_id: f.tenant.id }).count({ n: '*' });
    let asked = '';
    const report = nock(BASE)
      .get('/api/report-realtime')
      .query((q) => ((asked = String(q.message_id)), true))
      .reply(200, fixture('wablas-report'));
    const res = await sync(f);
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.deep.equal({ ok: true, checked: 4, updated: 3 });
    expect(report.isDone()).to.equal(true);
    expect(asked).to.equal('WB-OUT-DELIVERED,WB-OUT-READ,WB-OUT-PENDING,WB-OUT-CANCEL');
    const d = await rowOf(ids.delivered);
    expect(d.status).to.equal('delivered');
    expect(d.sent_at).to.be.instanceOf(Date);
    expect(d.delivered_at).to.be.instanceOf(Date);
    expect(d.read_at).to.equal(null);
    const r = await rowOf(ids.read);
    expect(r.status).to.equal('read');
    expect(r.read_at).to.be.instanceOf(Date);
    expect((await rowOf(ids.pending)).status).to.equal('pending');
    expect(await rowOf(ids.cancel)).to.deep.include({
      status: 'failed',
      error_code: 'provider_failed',
      error_message: 'wablas report: cancel',
    });
    for (const id of [ids.old, ids.fonnte]) expect((await rowOf(id)).status).to.equal('pending');
    expect((await rowOf(ids.done)).status).to.equal('delivered');
    const after = await env.knex('communication_messages').where({ tenant_id: f.tenant.id }).count({ n: '*' });
    expect(after).to.deep.equal(before);
  });

  it('limit: the oldest rows first; 0, 201 and a string are 422 and nothing is asked', async () => {
    const f = await makeTenant();
    await configure(app, f, {}, [WABLAS]);
    await out(f, 'WB-OUT-READ', 'pending', { ageMs: 100_000 });
    await out(f, 'WB-OUT-DELIVERED', 'pending', { ageMs: 200_000 });
    let asked = '';
    nock(BASE)
      .get('/api/report-realtime')
      .query((q) => ((asked = String(q.message_id)), true))
      .reply(200, fixture('wablas-report'));
    const res = await sync(f, { limit: 1 });
    expect(res.body).to.deep.equal({ ok: true, checked: 1, updated: 1 });
    expect(asked).to.equal('WB-OUT-DELIVERED');
    for (const limit of [0, 201, '5']) {
      const bad = await sync(f, { limit });
      expect(bad.status).to.equal(422);
      expect(bad.body.code).to.equal('VALIDATION_FAILED');
      expect(bad.body.errors).to.have.property('limit');
    }
  });

  it('a provider 500: 200 ok=false warning=true with the reason; rows unchanged', async () => {
    const f = await makeTenant();
    await configure(app, f, {}, [WABLAS]);
    const id = await out(f, 'WB-OUT-READ', 'pending');
    nock(BASE).get('/api/report-realtime').query(true).reply(500, 'Internal Server Error');
    const res = await sync(f);
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.include({ ok: false, warning: true, checked: 1, updated: 0 });
    expect(res.body.message).to.include('HTTP 500');
    expect((await rowOf(id)).status).to.equal('pending');
  });

  it('device status: stored per enabled wablas account and shown in GET config', async () => {
    const f = await makeTenant();
    await configure(app, f, {}, [WABLAS, { ...WABLAS, id: 'acc-off', enabled: false }, FONNTE]);
    nock(BASE).get('/api/device/info').query({ token: WABLAS.token }).reply(200, fixture('wablas-device'));
    const res = await device(f);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.ok).to.equal(true);
    expect(res.body.data).to.have.length(1);
    expect(res.body.data[0]).to.deep.include({
      account_id: WABLAS.id,
      label: '',
      status: 'connected',
      detail: 'name NOC Bot, quota 91, expires 2027-04-08',
    });
    const cfg = await app.request('GET', '/api/wabot/config', { token: f.adminToken });
    const [wb, off, fn] = cfg.body.data.accounts;
    expect(wb.device_status).to.deep.equal({
      status: 'connected',
      detail: 'name NOC Bot, quota 91, expires 2027-04-08',
      checked_at: res.body.data[0].checked_at,
    });
    expect(off.device_status).to.equal(null);
    expect(fn.device_status).to.equal(null);
    expect(cfg.text).to.not.include(String(WABLAS.token));
  });

  it('without an enabled wablas account (none saved, fonnte only, wablas disabled): 422 on both routes', async () => {
    const none = await makeTenant();
    const fonnte = await makeTenant();
    await configure(app, fonnte, {}, [FONNTE]);
    const off = await makeTenant();
    await configure(app, off, {}, [{ ...WABLAS, enabled: false }]);
    for (const f of [none, fonnte, off]) {
      for (const res of [await sync(f), await device(f)]) {
        expect(res.status).to.equal(422);
        expect(res.body.errors).to.have.property('provider');
      }
    }
  });
});
