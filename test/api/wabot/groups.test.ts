import { Writable } from 'node:stream';
import { expect } from 'chai';
import nock from 'nock';
import { env, registerCleanup } from '../../helpers/env.js';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { startWorkers, type WorkerHandle } from '../../../workers/main.js';
import * as wabotSend from '../../../jobs/wabot-send.js';
import { createLogger } from '../../../lib/logger.js';
import { ACCOUNTS, configure } from './inbound-support.js';

/** Issue 11 item 4: /api/wabot/groups CRUD, the event catalogue, the group test through a real wabot-send worker. */
describe('/api/wabot/groups, /api/wabot/events', function () {
  this.timeout(60_000);
  let app: TestApp;
  let handle: WorkerHandle;
  const [WABLAS, , , , MESSENGER] = ACCOUNTS;
  const GROUP = '120363041234567890@g.us';

  before(async () => {
    app = await startTestApp();
    const sink = new Writable({ write: (_c, _e, cb) => cb() });
    handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('info', sink),
      queues: ['wabot-send'],
      registry: { 'wabot-send': { processor: wabotSend.process, concurrency: 2 } },
      chatSend: { timeoutMs: 3000, keyPrefix: `groups-${process.pid}` },
    });
    registerCleanup(() => handle.close());
  });
  afterEach(() => nock.cleanAll());

  const req = (f: TenantFixture, method: string, path: string, body?: unknown) =>
    app.request(method, path, { token: f.adminToken, body });
  const group = (o: Record<string, unknown> = {}) => ({
    name: 'NOC Jakarta',
    kind: 'network_operations',
    account_id: WABLAS.id,
    group_id: GROUP,
    events: ['ticket_incident_created'],
    ...o,
  });

  it('GET /api/wabot/events: the catalogue', async () => {
    const f = await makeTenant();
    const res = await req(f, 'GET', '/api/wabot/events');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ data: [{ name: 'ticket_incident_created', label: 'Incident Massal' }] });
  });

  it('POST, GET, PUT, DELETE: defaults, the list, replace, delete; audited', async () => {
    const f = await makeTenant();
    await configure(app, f, {}, [WABLAS, MESSENGER]);
    const created = await req(f, 'POST', '/api/wabot/groups', {
      name: 'Teknisi',
      account_id: WABLAS.id,
      group_id: GROUP,
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.data).to.deep.include({
      name: 'Teknisi',
      kind: 'other',
      account_id: WABLAS.id,
      group_id: GROUP,
      events: [],
      enabled: true,
    });
    const id = created.body.data.id;
    const list = await req(f, 'GET', '/api/wabot/groups');
    expect(list.body.data.map((g: { id: number }) => g.id)).to.deep.equal([id]);
    const put = await req(f, 'PUT', `/api/wabot/groups/${id}`, group({ enabled: false }));
    expect(put.status, put.text).to.equal(200);
    expect(put.body.data).to.deep.include({
      name: 'NOC Jakarta',
      kind: 'network_operations',
      events: ['ticket_incident_created'],
      enabled: false,
    });
    const del = await req(f, 'DELETE', `/api/wabot/groups/${id}`);
    expect(del.status).to.equal(204);
    expect((await req(f, 'GET', '/api/wabot/groups')).body.data).to.deep.equal([]);
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: f.tenant.id, subject_type: 'wabot_groups' })
      .orderBy('id')
      .pluck('action');
    expect(audit).to.deep.equal(['wabot.group_created', 'wabot.group_updated', 'wabot.group_deleted']);
  });

  it('422: unknown event, unknown account, a messenger account, no configuration, bounds', async () => {
    const f = await makeTenant();
    const bare = await makeTenant();
    await configure(app, f, {}, [WABLAS, MESSENGER]);
    const cases: [TenantFixture, Record<string, unknown>, string][] = [
      [f, group({ events: ['ticket_closed'] }), 'events.0'],
      [f, group({ account_id: 'nope' }), 'account_id'],
      [f, group({ account_id: MESSENGER.id }), 'account_id'],
      [bare, group({ account_id: 'default' }), 'account_id'],
      [f, group({ kind: 'sales' }), 'kind'],
      [f, group({ name: '' }), 'name'],
      [f, group({ group_id: 'a\nb' }), 'group_id'],
      [f, { ...group(), extra: 1 }, 'extra'],
    ];
    for (const [t, body, field] of cases) {
      const res = await req(t, 'POST', '/api/wabot/groups', body);
      expect(res.status, `${field}: ${res.text}`).to.equal(422);
      expect(res.body.errors, field).to.have.property(field);
    }
    expect(
      await env.knex('wabot_groups').whereIn('tenant_id', [f.tenant.id, bare.tenant.id]).count({ n: '*' }),
    ).to.deep.equal([{ n: 0 }]);
  });

  it("another tenant's group: 404 on PUT, DELETE and test, nothing changed or sent", async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    await configure(app, a, {}, [WABLAS]);
    await configure(app, b, {}, [WABLAS]);
    const id = (await req(a, 'POST', '/api/wabot/groups', group())).body.data.id;
    expect((await req(b, 'PUT', `/api/wabot/groups/${id}`, group({ name: 'X' }))).status).to.equal(404);
    expect((await req(b, 'DELETE', `/api/wabot/groups/${id}`)).status).to.equal(404);
    expect((await req(b, 'POST', `/api/wabot/groups/${id}/test`)).status).to.equal(404);
    const row = await env.knex('wabot_groups').where({ id }).first('name');
    expect(row.name).to.equal('NOC Jakarta');
    expect(await env.knex('communication_messages').where({ tenant_id: b.tenant.id }).count({ n: '*' })).to.deep.equal([
      { n: 0 },
    ]);
  });

  it('test: a sample "[TES] Incident Massal" to the group id (isGroup) through its account, waited for', async () => {
    const f = await makeTenant();
    await configure(app, f, { enabled: false }, [WABLAS]);
    const id = (await req(f, 'POST', '/api/wabot/groups', group())).body.data.id;
    let sent: Record<string, string> = {};
    nock('https://wablas.test')
      .post('/api/send-message')
      .reply(200, (_uri, body) => {
        sent = Object.fromEntries(new URLSearchParams(String(body)));
        return { status: true, message: 'ok', data: { messages: [{ id: 'WB-GROUP-1', status: 'pending' }] } };
      });
    const res = await req(f, 'POST', `/api/wabot/groups/${id}/test`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.ok).to.equal(true);
    expect(res.body.data).to.deep.include({ status: 'pending', message_id: 'WB-GROUP-1', error: null });
    expect(sent.phone).to.equal(GROUP);
    expect(sent.isGroup).to.equal('true');
    expect(sent.message.split('\n')[0]).to.equal('[TES] Incident Massal');
    expect(sent.message).to.include('NOC Jakarta');
    const row = await env.knex('communication_messages').where({ id: res.body.data.communication_id }).first();
    expect(row).to.deep.include({ source: 'test', is_group: true, recipient_kind: 'group', account_ref: WABLAS.id });
  });
});
