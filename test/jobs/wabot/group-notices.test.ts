import { expect } from 'chai';
import nock from 'nock';
import { env } from '../../helpers/env.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { configure, ACCOUNTS } from '../../api/wabot/inbound-support.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import { createQueues, type Queues } from '../../../jobs/queues.js';
import { dispatchEvents } from '../../../jobs/event-dispatch.js';
import { loadChatSendConfig } from '../../../jobs/wabot/load-config.js';
import { handleGroupNotices, useGroupNoticeSubscriber } from '../../../jobs/wabot/group-notices.js';
import { incidentNoticeText, localTime } from '../../../jobs/wabot/group-notice-texts.js';
import { publishEvent, type EventPayloads, type OutboxEvent } from '../../../api/events/service.js';
import { process as wabotProcess, SEND_JOB } from '../../../jobs/wabot-send.js';
import type { SendJob } from '../../../jobs/wabot/send.js';
import { ManualClock } from '../../../lib/clock.js';
import { fakeJob } from '../fake-job.js';

/** Issue 11 item 4: the group-notice subscriber of ticket_incident_created, through the real dispatcher. */
describe('wabot group notices (subscriber of ticket_incident_created)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let queues: Queues;
  let release: () => void;
  // tomorrow (UTC) from the real date: the test does not rest on a calendar date
  const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const [yyyy, mm, dd] = day.split('-');
  const clock = new ManualClock(`${day}T03:00:00Z`);
  const [WABLAS, FONNTE] = ACCOUNTS;

  before(async () => {
    app = await startTestApp();
    queues = createQueues(env.redisUrl, { prefix: `{group-notices-${process.pid}}` });
    configureJobDeps({
      knex: env.knex,
      redis: env.redis,
      queues,
      clock,
      appKey: app.appKey,
      chatConfig: (id) => loadChatSendConfig(env.knex, app.appKey, id),
      chatSend: { keyPrefix: `group-notices-${process.pid}` },
    });
    release = useGroupNoticeSubscriber();
  });
  afterEach(() => nock.cleanAll());
  after(async () => {
    release();
    await queues.close();
  });

  const PAYLOAD: EventPayloads['ticket_incident_created'] = {
    incident_id: 41,
    ticket_number: 'TCK-000123',
    description: 'Fiber putus di ruas Cibubur',
    severity: 'high',
    olt: 'OLT-CBB-01',
    home_base: 'Cibubur',
    impact_area: 'Cibubur, Cileungsi',
    estimated_recovery_at: `${day}T09:30:00Z`,
    group_message: null,
  };

  /** A tenant with wablas and fonnte accounts and four groups: two ticked and enabled, one disabled, one not ticked. */
  async function world(opts: { demo?: boolean } = {}) {
    const f = await makeTenant({ demo: opts.demo });
    await configure(app, f, {}, [WABLAS, FONNTE]);
    const g = (name: string, account: string, groupId: string, events: string[], enabled = true) =>
      app.request('POST', '/api/wabot/groups', {
        token: f.adminToken,
        body: { name, account_id: account, group_id: groupId, events, enabled, kind: 'technicians' },
      });
    await g('NOC', WABLAS.id, 'noc@g.us', ['ticket_incident_created']);
    await g('Teknisi', FONNTE.id, 'tek@g.us', ['ticket_incident_created']);
    await g('Off', WABLAS.id, 'off@g.us', ['ticket_incident_created'], false);
    await g('Sales', WABLAS.id, 'sales@g.us', []);
    return f;
  }
  const notices = (f: TenantFixture) =>
    env
      .knex('communication_messages')
      .where({ tenant_id: f.tenant.id, source: 'notice' })
      .orderBy('id')
      .select('id', 'counterpart', 'account_ref', 'recipient_kind', 'is_group', 'status', 'body_text', 'error_code');
  /** Runs the wabot-send processor on one outbox row; answers what it threw, or null. */
  const send = async (f: TenantFixture, id: number) => {
    const job: SendJob = {
      ...fakeJob({ tenant_id: f.tenant.id, message_id: id }).job,
      name: SEND_JOB,
      attemptsMade: 0,
      opts: { attempts: 5 },
      async moveToDelayed() {},
    };
    return wabotProcess(job, 'token').then(
      () => null,
      (e: Error) => e,
    );
  };
  const dispatch = async (f: TenantFixture) => {
    const { result } = await dispatchEvents(env.knex, fakeJob({ tenant_id: f.tenant.id }).job);
    expect(result.failed).to.equal(0);
  };

  it('committed: one notice per enabled group that ticked the event, on its account, as a group message', async () => {
    const f = await world();
    await env.knex.transaction((trx) => publishEvent(trx, f.tenant.id, 'ticket_incident_created', PAYLOAD));
    await dispatch(f);
    const rows = await notices(f);
    expect(rows.map((r) => [r.counterpart, r.account_ref, r.recipient_kind, r.is_group, r.status])).to.deep.equal([
      ['noc@g.us', WABLAS.id, 'group', true, 'queued'],
      ['tek@g.us', FONNTE.id, 'group', true, 'queued'],
    ]);
    expect(rows[0].body_text).to.equal(
      [
        'Incident Massal',
        'Tiket: TCK-000123',
        'Deskripsi: Fiber putus di ruas Cibubur',
        'Tingkat: high',
        'OLT: OLT-CBB-01',
        'Home base: Cibubur',
        'Area terdampak: Cibubur, Cileungsi',
        `Perkiraan pulih: ${dd}-${mm}-${yyyy} 16:30`,
      ].join('\n'),
    );
  });

  it('group_message replaces the template after the title', () => {
    expect(
      incidentNoticeText({ ...PAYLOAD, group_message: 'Gangguan massal, tim sudah di lokasi.' }, 'Asia/Jakarta'),
    ).to.equal('Incident Massal\nGangguan massal, tim sudah di lokasi.');
    // New Year's Eve of the current year in UTC is already New Year's Day in Jakarta (UTC+7)
    const year = new Date().getUTCFullYear();
    expect(localTime(`${year}-12-31T17:05:00Z`, 'Asia/Jakarta')).to.equal(`01-01-${year + 1} 00:05`);
  });

  it('rolled back: no event, no notice', async () => {
    const f = await world();
    await env.knex
      .transaction(async (trx) => {
        await publishEvent(trx, f.tenant.id, 'ticket_incident_created', PAYLOAD);
        throw new Error('the incident insert failed');
      })
      .catch(() => undefined);
    await dispatch(f);
    expect(await notices(f)).to.deep.equal([]);
  });

  it('redelivered (the same event handled again): no second notice', async () => {
    const f = await world();
    const { id } = await env.knex.transaction((trx) =>
      publishEvent(trx, f.tenant.id, 'ticket_incident_created', PAYLOAD),
    );
    await dispatch(f);
    const ev: OutboxEvent<'ticket_incident_created'> = {
      id,
      tenant_id: f.tenant.id,
      name: 'ticket_incident_created',
      payload: PAYLOAD,
      created_at: new Date().toISOString(),
      attempts: 0,
    };
    const again = await env.knex.transaction((trx) =>
      handleGroupNotices(ev, {
        trx,
        idempotencyKey: `${id}:x`,
        signal: new AbortController().signal,
        log: async () => 0,
      }),
    );
    expect(again).to.deep.equal({ queued: [], already: 2 });
    expect(await notices(f)).to.have.length(2);
  });

  it('committed, then sent: the wabot-send job posts the notice to the group (isGroup) and marks it pending', async () => {
    const f = await world();
    await env.knex.transaction((trx) => publishEvent(trx, f.tenant.id, 'ticket_incident_created', PAYLOAD));
    await dispatch(f);
    const [noc] = await notices(f);
    let sent: Record<string, string> = {};
    const scope = nock('https://wablas.test')
      .post('/api/send-message')
      .reply(200, (_uri, body) => {
        sent = Object.fromEntries(new URLSearchParams(String(body)));
        return { status: true, message: 'ok', data: { messages: [{ id: 'WB-NOTICE-1', status: 'pending' }] } };
      });
    expect(await send(f, Number(noc.id))).to.equal(null);
    expect(scope.isDone()).to.equal(true);
    expect(sent).to.deep.equal({ phone: 'noc@g.us', message: noc.body_text, isGroup: 'true' });
    const after = await env.knex('communication_messages').where({ id: noc.id }).first();
    expect(after).to.deep.include({ status: 'pending', message_id: 'WB-NOTICE-1' });
  });

  it('a demo-mode tenant: the notices are written, their sends fail demo_guard_blocked without a provider call', async () => {
    const f = await world({ demo: true });
    await env.knex.transaction((trx) => publishEvent(trx, f.tenant.id, 'ticket_incident_created', PAYLOAD));
    await dispatch(f);
    const rows = await notices(f);
    expect(rows.map((r) => r.status)).to.deep.equal(['queued', 'queued']);
    for (const r of rows) expect((await send(f, Number(r.id)))?.message).to.include('demo_guard_blocked');
    expect((await notices(f)).map((r) => [r.status, r.error_code])).to.deep.equal([
      ['failed', 'demo_guard_blocked'],
      ['failed', 'demo_guard_blocked'],
    ]);
  });
});
