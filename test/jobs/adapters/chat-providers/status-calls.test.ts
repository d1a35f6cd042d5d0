import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import nock from 'nock';
import { wablasDeviceStatus, wablasRealtimeReport } from '../../../../jobs/adapters/chat-providers/wablas-status.js';
import { registerWebhook } from '../../../../jobs/adapters/chat-providers/webhook-register.js';
import { reportStatus } from '../../../../jobs/wabot/status-sync.js';
import type { ChatAccount } from '../../../../jobs/adapters/chat-providers/types.js';

/** Issue 11 items 3 and 6: wablas's realtime report and device info, webhook registration (nock). */

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../fixtures/wabot/reports');
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(DIR, `${name}.json`), 'utf8'));

const BASE = 'https://bdg.wablas.example';
const TOKEN = 'wb-token-7781';
const SECRET = 'wb-secret-12';
const wablas: ChatAccount = { provider: 'wablas', token: TOKEN, secret_key: SECRET, base_url: BASE };
const HOOK = 'https://isp.example.test/api/wabot/inbound/demo-isp?key=HOOK-KEY-SECRET-55&account=acc-1';

describe('chat providers: wablas realtime report and device status (nock)', () => {
  afterEach(() => nock.cleanAll());

  it('report: GET /api/report-realtime with the ids comma-separated, Authorization token.secret_key; the documented list read', async () => {
    let seen: { path: string; auth: string } | null = null;
    nock(BASE)
      .get('/api/report-realtime')
      .query(true)
      .reply(function (uri) {
        seen = { path: uri, auth: String(this.req.headers.authorization) };
        return [200, fixture('wablas-report')];
      });
    const r = await wablasRealtimeReport(wablas, ['WB-OUT-DELIVERED', 'WB-OUT-READ']);
    expect(seen!.auth).to.equal(`${TOKEN}.${SECRET}`);
    const q = new URL(seen!.path, BASE).searchParams;
    expect(q.get('message_id')).to.equal('WB-OUT-DELIVERED,WB-OUT-READ');
    expect(q.get('limit')).to.equal('2');
    expect(r).to.deep.equal({
      ok: true,
      items: [
        { id: 'WB-OUT-DELIVERED', status: 'delivered' },
        { id: 'WB-OUT-READ', status: 'read' },
        { id: 'WB-OUT-PENDING', status: 'pending' },
        { id: 'WB-OUT-CANCEL', status: 'cancel' },
      ],
    });
  });

  it('report words: read, delivered, sent, cancel/failed move; pending and unknown words do not', () => {
    expect(['read', 'delivered', 'sent', 'cancel', 'failed', 'pending', 'queue'].map(reportStatus)).to.deep.equal([
      'read',
      'delivered',
      'sent',
      'failed',
      'failed',
      null,
      null,
    ]);
  });

  it('report errors: 500 and a refused connection are transient, 401 and {status:false} are not; the token never shows', async () => {
    nock(BASE)
      .get('/api/report-realtime')
      .query(true)
      .reply(500, { status: false, message: `boom ${TOKEN}` });
    const r500 = await wablasRealtimeReport(wablas, ['x']);
    expect(r500).to.deep.include({ ok: false, transient: true });
    expect(JSON.stringify(r500)).to.not.include(TOKEN);
    nock(BASE).get('/api/report-realtime').query(true).reply(401, { status: false, message: 'token invalid' });
    expect(await wablasRealtimeReport(wablas, ['x'])).to.deep.equal({
      ok: false,
      transient: false,
      error: 'wablas report: credentials refused (HTTP 401): token invalid',
    });
    nock(BASE).get('/api/report-realtime').query(true).reply(200, { status: false, message: 'message not found' });
    expect(await wablasRealtimeReport(wablas, ['x'])).to.deep.equal({
      ok: false,
      transient: false,
      error: 'wablas report: refused: message not found',
    });
    const refused = await wablasRealtimeReport({ ...wablas, base_url: 'http://127.0.0.1:9' }, ['x']);
    expect(refused).to.deep.include({ ok: false, transient: true });
  });

  it('device: connected with name, quota and expiry; disconnected; an error', async () => {
    nock(BASE).get('/api/device/info').query({ token: TOKEN }).reply(200, fixture('wablas-device'));
    expect(await wablasDeviceStatus(wablas)).to.deep.equal({
      status: 'connected',
      detail: 'name NOC Bot, quota 91, expires 2027-04-08',
    });
    const off = fixture('wablas-device');
    off.data.status = 'disconnected';
    nock(BASE).get('/api/device/info').query(true).reply(200, off);
    expect((await wablasDeviceStatus(wablas)).status).to.equal('disconnected');
    nock(BASE).get('/api/device/info').query(true).reply(503, 'down');
    const err = await wablasDeviceStatus(wablas);
    expect(err.status).to.equal('error');
    expect(err.detail).to.include('HTTP 503');
  });
});

describe('chat providers: webhook registration (nock)', () => {
  afterEach(() => nock.cleanAll());

  it('wablas: change-webhook-url then change-tracking-url with the URL, token.secret_key; registered', async () => {
    const seen: Record<string, string>[] = [];
    for (const p of ['/api/device/change-webhook-url', '/api/device/change-tracking-url'])
      nock(BASE)
        .post(p)
        .reply(function (_uri, body) {
          seen.push({
            auth: String(this.req.headers.authorization),
            ...Object.fromEntries(new URLSearchParams(String(body))),
          });
          return [200, { status: true, message: 'webhook url successfully changed' }];
        });
    expect(await registerWebhook(wablas, HOOK)).to.deep.equal({ status: 'registered', error: null, transient: false });
    expect(seen).to.deep.equal([
      { auth: `${TOKEN}.${SECRET}`, webhook_url: HOOK },
      { auth: `${TOKEN}.${SECRET}`, tracking_url: HOOK },
    ]);
  });

  it('watzap: POST /set_webhook {api_key, number_key, endpoint_url}; its code 200 is registered, another code failed', async () => {
    const wz: ChatAccount = { provider: 'watzap', token: 'wz-key', secret_key: 'wz-number' };
    let body: unknown;
    nock('https://api.watzap.id')
      .post('/v1/set_webhook', (b) => ((body = b), true))
      .reply(200, { status: '200', message: 'Sucessfully set Web Hook to url: x', ack: 'successfully' });
    expect(await registerWebhook(wz, HOOK)).to.deep.equal({ status: 'registered', error: null, transient: false });
    expect(body).to.deep.equal({ api_key: 'wz-key', number_key: 'wz-number', endpoint_url: HOOK });
    nock('https://api.watzap.id').post('/v1/set_webhook').reply(200, { status: '1004', message: 'number key invalid' });
    expect(await registerWebhook(wz, HOOK)).to.deep.equal({
      status: 'failed',
      error: 'watzap set_webhook: code 1004',
      transient: false,
    });
  });

  it('waha: reads the session, keeps other webhooks, replaces ours on the same path, PUTs the config', async () => {
    const waha: ChatAccount = {
      provider: 'waha',
      token: 'wh-key',
      secret_key: 'sales',
      base_url: 'https://waha.example',
    };
    const other = { url: 'https://crm.example/hook', events: ['message'] };
    const old = {
      url: 'https://isp.example.test/api/wabot/inbound/demo-isp?key=OLD&account=acc-1',
      events: ['message'],
    };
    nock('https://waha.example')
      .get('/api/sessions/sales')
      .matchHeader('x-api-key', 'wh-key')
      .reply(200, { name: 'sales', status: 'WORKING', config: { debug: false, webhooks: [other, old] } });
    let put: unknown;
    nock('https://waha.example')
      .put('/api/sessions/sales', (b) => ((put = b), true))
      .reply(200, { name: 'sales' });
    expect(await registerWebhook(waha, HOOK)).to.deep.equal({ status: 'registered', error: null, transient: false });
    expect(put).to.deep.equal({
      name: 'sales',
      config: { debug: false, webhooks: [other, { url: HOOK, events: ['message', 'message.ack'] }] },
    });
  });

  it('fonnte, ruangwa, messenger, starsender: unsupported without a request; a 503 is a transient failure without the key', async () => {
    for (const provider of ['fonnte', 'ruangwa', 'messenger', 'starsender'] as const)
      expect(await registerWebhook({ provider, token: 't', secret_key: '1' }, HOOK)).to.deep.equal({
        status: 'unsupported',
        error: null,
        transient: false,
      });
    nock(BASE).post('/api/device/change-webhook-url').reply(503, `maintenance for ${HOOK}`);
    const r = await registerWebhook(wablas, HOOK);
    expect(r).to.deep.include({ status: 'failed', transient: true });
    expect(r.error).to.include('HTTP 503');
    expect(r.error).to.not.include('HOOK-KEY-SECRET-55');
  });
});
