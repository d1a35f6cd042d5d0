import { expect } from 'chai';
import {
  startFakeWablas,
  REFUSED_ONCE_NUMBER,
  PENDING_MS,
  DELIVERED_MS,
  READ_MS,
  type FakeWablas,
} from '../../bin/dev-wabot.js';
import { wablas } from '../../jobs/adapters/chat-providers/wablas.js';
import { registerCleanup, env } from '../helpers/env.js';
import { makeTenant } from '../helpers/fixtures.js';
import { startTestApp } from '../helpers/http.js';
import { DEMO_WABOT_DEVICES, seedDemoWabot } from '../../db/seeds/demo-wabot.js';
import { loadChatSendConfig } from '../../jobs/wabot/load-config.js';

/** Issue 10 item 6: the fake wablas gateway of `npm start`, driven by the real wablas adapter, and the demo seed. */
describe('bin/dev-wabot.ts: the fake wablas gateway', () => {
  let gw: FakeWablas;
  const lines: string[] = [];
  let clock = 1_800_000_000_000;
  const TOKEN = 'it-device-token-5d1c';
  const account = () => ({ provider: 'wablas' as const, token: TOKEN, secret_key: 'it-secret-77', base_url: gw.url });

  before(async () => {
    gw = await startFakeWablas({ log: (l) => lines.push(l), now: () => clock, devices: { [TOKEN]: 'Test device' } });
    registerCleanup(() => gw.close());
  });

  it('listens on loopback only', () => {
    expect(gw.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a send through the real adapter is accepted (pending, with an id), recorded and logged with its arrival time and gap', async () => {
    const out = await wablas.send(account(), { kind: 'phone', value: '0812-3456 7890' }, 'Halo dari demo');
    const c = wablas.classify(out);
    expect(c.kind).to.equal('sent');
    if (c.kind !== 'sent') return;
    expect(c.state).to.equal('pending');
    expect(c.messageId).to.match(/^[0-9a-f-]{36}$/);
    clock += 5250;
    const second = wablas.classify(await wablas.send(account(), { kind: 'group', value: '6281-grp' }, 'Grup'));
    expect(second.kind).to.equal('sent');
    const [a, b] = gw.arrivals.slice(-2);
    expect(a).to.include({ device: 'Test device', phone: '6281234567890', isGroup: false, result: 'accepted' });
    expect(a.id).to.equal(c.messageId);
    expect(b).to.include({ device: 'Test device', phone: '6281-grp', isGroup: true, gapMs: 5250, at: clock });
    expect(lines.at(-1)).to.include('Test device -> group 6281-grp (+5.25 s after its previous)');
    expect(lines.join('\n')).to.not.include(TOKEN).and.not.include('it-secret-77');
  });

  it(`refuses the first send to ${REFUSED_ONCE_NUMBER} in an HTTP 200 (permanent invalid_recipient), accepts the next`, async () => {
    const first = await wablas.send(account(), { kind: 'phone', value: REFUSED_ONCE_NUMBER }, 'x');
    expect(first).to.include({ kind: 'response', status: 200 });
    expect(wablas.classify(first)).to.deep.include({ kind: 'permanent', code: 'invalid_recipient' });
    expect(gw.arrivals.at(-1)).to.include({ result: 'refused', id: null, phone: REFUSED_ONCE_NUMBER });
    const again = wablas.classify(await wablas.send(account(), { kind: 'phone', value: REFUSED_ONCE_NUMBER }, 'x'));
    expect(again.kind).to.equal('sent');
  });

  it('device status: the adapter connection check answers connected; no token is 401 token invalid (auth_failed)', async () => {
    const c = wablas.classify(await wablas.checkConnection(account()));
    expect(c).to.deep.include({ kind: 'sent', detail: 'wablas: device connected' });
    const res = await fetch(`${gw.url}/api/device/info?token=`);
    expect(res.status).to.equal(401);
    expect(await res.json()).to.deep.equal({ status: false, message: 'token invalid' });
    const send = await fetch(`${gw.url}/api/send-message`, { method: 'POST', body: 'phone=62811&message=x' });
    expect(send.status).to.equal(401);
  });

  it('realtime report (documented shape): the device own messages, pending for 2 s, then sent, delivered, read; an unknown id is refused', async () => {
    const out = wablas.classify(await wablas.send(account(), { kind: 'phone', value: '+62 811 222 333' }, 'Report'));
    if (out.kind !== 'sent') throw new Error(out.kind);
    const sentAt = clock;
    const report = async () => {
      const res = await fetch(`${gw.url}/api/report-realtime?message_id=${out.messageId},unknown-id&page=1&limit=10`, {
        headers: { authorization: `${TOKEN}.it-secret-77` },
      });
      return (await res.json()) as any;
    };
    const pending = await report();
    expect(pending).to.include({ status: true, page: 1, totalPage: 1, totalData: 1 });
    expect(pending.message[0]).to.deep.include({ id: out.messageId, message: 'Report', status: 'pending' });
    expect(pending.message[0].phone).to.deep.equal({ from: 'Test device', to: '62811222333' });
    expect(pending.message[0].date.created_at).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const seen: string[] = [];
    for (const at of [PENDING_MS, DELIVERED_MS, READ_MS]) {
      clock = sentAt + at;
      seen.push((await report()).message[0].status);
    }
    expect(seen).to.deep.equal(['sent', 'delivered', 'read']);
    const other = await fetch(`${gw.url}/api/report-realtime?message_id=${out.messageId}`, {
      headers: { authorization: 'another-device' },
    });
    expect(await other.json()).to.deep.equal({ status: false, message: 'message not found' });
  });

  it('change-webhook-url and change-tracking-url answer as documented; the key is not logged', async () => {
    for (const [path, field, word] of [
      ['change-webhook-url', 'webhook_url', 'webhook url'],
      ['change-tracking-url', 'tracking_url', 'tracking url'],
    ]) {
      const res = await fetch(`${gw.url}/api/device/${path}`, {
        method: 'POST',
        headers: { authorization: TOKEN, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ [field]: 'https://isp.test/api/wabot/inbound/demo?key=SECRET-KEY-9' }).toString(),
      });
      expect(await res.json()).to.deep.equal({ status: true, message: `${word} successfully changed` });
    }
    expect(lines.join('\n')).to.include('webhook_url set to https://isp.test/api/wabot/inbound/demo');
    expect(lines.join('\n')).to.not.include('SECRET-KEY-9');
  });

  it('the page is labelled FAKE and lists the arrivals, newest first, HTML escaped', async () => {
    await wablas.send(account(), { kind: 'phone', value: '62811000999' }, '<b>bold</b>');
    const res = await fetch(`${gw.url}/`);
    expect(res.headers.get('content-type')).to.include('text/html');
    const html = await res.text();
    expect(html).to.include('FAKE wablas gateway: nothing is delivered');
    expect(html).to.include('&lt;b&gt;bold&lt;/b&gt;').and.not.include('<b>bold</b>');
    expect(html.indexOf('62811000999')).to.be.lessThan(html.indexOf('6281234567890'));
    const json = (await (await fetch(`${gw.url}/arrivals.json`)).json()) as any;
    expect(json.fake).to.equal(true);
    expect(json.arrivals[0].phone).to.equal('62811000999');
    expect(json.arrivals).to.have.length(gw.arrivals.length);
  });
});

describe('db/seeds/demo-wabot.ts: the demo chat bot on the fake gateway', () => {
  it('configures the tenant once (Fake A 2 6/min 5 s, Fake B 1 3/min 10 s, enabled); GET config shows both, never a token', async () => {
    const app = await startTestApp();
    const f = await makeTenant();
    const gatewayUrl = 'http://127.0.0.1:3002';
    const opts = { gatewayUrl, tenantSlug: f.tenant.slug };
    expect(await seedDemoWabot(env.knex, app.appKey, opts)).to.equal('seeded');
    expect(await seedDemoWabot(env.knex, app.appKey, opts)).to.equal('exists');
    const moved = { ...opts, gatewayUrl: 'http://127.0.0.1:4002' };
    expect(await seedDemoWabot(env.knex, app.appKey, moved)).to.equal('exists');
    const urls = await env
      .knex('wabot_accounts')
      .where({ tenant_id: f.tenant.id })
      .orderBy('position')
      .pluck('base_url');
    expect(urls).to.deep.equal(['http://127.0.0.1:4002', 'http://127.0.0.1:4002']);
    expect(await seedDemoWabot(env.knex, app.appKey, opts)).to.equal('exists');
    expect(await seedDemoWabot(env.knex, app.appKey, { ...opts, tenantSlug: 'no-such-tenant' })).to.equal('no_tenant');
    const res = await app.request('GET', '/api/wabot/config', { token: f.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.include({ provider: 'wablas', wa_number: '0812 0000 0001' });
    expect(res.body.data.settings).to.include({ enabled: true, auto_reply: true, base_url: gatewayUrl });
    expect(res.body.data.accounts).to.deep.equal([
      {
        id: 'fake-a',
        provider: 'wablas',
        label: 'Fake A',
        number: null,
        base_url: gatewayUrl,
        enabled: true,
        weight: 2,
        max_messages_per_minute: 6,
        message_delay_seconds: 5,
        token_set: true,
        secret_key_set: false,
        webhook_url: `${res.body.data.webhook_url}&account=fake-a`,
        device_status: null,
        webhook_registration: null,
      },
      {
        id: 'fake-b',
        provider: 'wablas',
        label: 'Fake B',
        number: null,
        base_url: gatewayUrl,
        enabled: true,
        weight: 1,
        max_messages_per_minute: 3,
        message_delay_seconds: 10,
        token_set: true,
        secret_key_set: false,
        webhook_url: `${res.body.data.webhook_url}&account=fake-b`,
        device_status: null,
        webhook_registration: null,
      },
    ]);
    for (const token of Object.keys(DEMO_WABOT_DEVICES)) expect(res.text).to.not.include(token);
    // issue 11 item 4: the group "NOC Demo" ticks ticket_incident_created, once
    const groups = await app.request('GET', '/api/wabot/groups', { token: f.adminToken });
    expect(
      groups.body.data.map((g: Record<string, unknown>) => [g.name, g.kind, g.account_id, g.events, g.enabled]),
    ).to.deep.equal([['NOC Demo', 'network_operations', 'fake-a', ['ticket_incident_created'], true]]);
    const c = (await loadChatSendConfig(env.knex, app.appKey, f.tenant.id))!;
    expect(c.enabled).to.equal(true);
    expect(c.accounts.map((a) => DEMO_WABOT_DEVICES[a.token!])).to.deep.equal(['Fake A', 'Fake B']);
  });

  it('the seeded accounts send through a running fake gateway, shown by their labels', async () => {
    const gw = await startFakeWablas();
    registerCleanup(() => gw.close());
    const app = await startTestApp();
    const f = await makeTenant();
    await seedDemoWabot(env.knex, app.appKey, { gatewayUrl: gw.url, tenantSlug: f.tenant.slug });
    const c = (await loadChatSendConfig(env.knex, app.appKey, f.tenant.id))!;
    for (const a of c.accounts) {
      const out = wablas.classify(await wablas.send(a, { kind: 'phone', value: c.defaultRecipient! }, 'demo'));
      expect(out.kind).to.equal('sent');
    }
    expect(gw.arrivals.map((a) => [a.device, a.phone])).to.deep.equal([
      ['Fake A', '6281200000001'],
      ['Fake B', '6281200000001'],
    ]);
  });
});
