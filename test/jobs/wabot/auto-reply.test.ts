import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { configure, fixture, post } from '../../api/wabot/inbound-support.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import { createQueues, type Queues } from '../../../jobs/queues.js';
import { dispatchEvents } from '../../../jobs/event-dispatch.js';
import { loadChatSendConfig } from '../../../jobs/wabot/load-config.js';
import { handleAutoReply, useAutoReplySubscriber, AUTO_REPLY_SUBSCRIBER } from '../../../jobs/wabot/auto-reply.js';
import { UNKNOWN_NUMBER_TEXT, rupiah, tanggal, keywordOf } from '../../../jobs/wabot/auto-reply-texts.js';
import { process as wabotProcess, SEND_JOB } from '../../../jobs/wabot-send.js';
import type { SendJob } from '../../../jobs/wabot/send.js';
import { ManualClock } from '../../../lib/clock.js';
import { fakeJob } from '../fake-job.js';

/** Issue 11 item 2: the auto-reply subscriber of inbound_chat_message, through the real webhook and dispatcher. */
describe('wabot auto-reply (subscriber of inbound_chat_message)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let queues: Queues;
  let release: () => void;
  const clock = new ManualClock(); // starts at today's now: the invoices' due dates are days around it
  /** The calendar date (UTC) `offset` days from the clock's now, `YYYY-MM-DD`. */
  const day = (offset: number) => new Date(clock.now().getTime() + offset * 86_400_000).toISOString().slice(0, 10);
  const dueOverdue = day(-13);
  const dueUnpaid = day(17);
  /** `YYYY-MM-DD` as the reply writes it, `DD-MM-YYYY`. */
  const dmy = (iso: string) => iso.split('-').reverse().join('-');

  before(async () => {
    app = await startTestApp({ publicBaseUrl: 'https://isp.example.test' });
    queues = createQueues(env.redisUrl, { prefix: `{auto-reply-${process.pid}}` });
    configureJobDeps({
      knex: env.knex,
      redis: env.redis,
      queues,
      clock,
      appKey: app.appKey,
      chatConfig: (id) => loadChatSendConfig(env.knex, app.appKey, id),
      chatSend: { keyPrefix: `auto-reply-${process.pid}` },
    });
    release = useAutoReplySubscriber();
  });
  after(async () => {
    release();
    await queues.close();
  });

  /** A tenant with the seven accounts, a customer on a package with invoices and tickets. */
  async function world(settings: Record<string, unknown> = {}, opts: { demo?: boolean } = {}) {
    const f = await makeTenant({ demo: opts.demo });
    const config = await configure(app, f, { auto_reply: true, ...settings });
    const pkg = await f.scope.insert('packages', {
      name: 'Rumah 20',
      price: 150000,
      speed_down_kbps: 20000,
      speed_up_kbps: 10000,
    });
    const customer = await f.scope.insert('customers', {
      code: 'CUST-000001',
      name: 'Budi Santoso',
      phone: '0812-3456-7801',
      address: 'Jl. Melati 5',
      package_id: pkg.id,
    });
    const invoice = (n: string, amount: number, status: string, due: string) =>
      f.scope.insert('invoices', { invoice_number: n, customer_id: customer.id, amount, status, due_date: due });
    await invoice('INV-000002', 175000.5, 'overdue', dueOverdue);
    await invoice('INV-000003', 150000, 'unpaid', dueUnpaid);
    await invoice('INV-000001', 150000, 'paid', day(-44));
    const ticket = (n: string, status: string) =>
      f.scope.insert('tickets', { ticket_number: n, customer_id: customer.id, type: 'Internet mati', status });
    await ticket('TCK-000001', 'open');
    await ticket('TCK-000002', 'closed');
    return { f, config, customerId: customer.id };
  }

  /** Sends a fixture (with overrides) to the webhook, then runs the dispatcher for the tenant. */
  async function inbound(w: Awaited<ReturnType<typeof world>>, file: string, patch: Record<string, unknown> = {}) {
    const res = await post(app, w.config.webhook_url, { ...fixture(file), ...patch });
    expect(res.status, res.text).to.equal(200);
    const { result } = await dispatchEvents(env.knex, fakeJob({ tenant_id: w.f.tenant.id }).job);
    expect(result.failed).to.equal(0);
  }
  const replies = (f: TenantFixture) =>
    env.knex('communication_messages').where({ tenant_id: f.tenant.id, source: 'auto_reply' }).orderBy('id');
  let seq = 0;
  /** A wablas message with a fresh id and text. */
  const wablas = (message: string, phone = '6281234567801') => ({ id: `AR-${++seq}`, message, phone });

  it('tagihan from a customer: their unpaid invoices (number, amount, due date) on the receiving account', async () => {
    const w = await world();
    await inbound(w, 'wablas-message', wablas('Tagihan saya berapa?'));
    const [r] = await replies(w.f);
    const [msg] = await env.knex('communication_messages').where({ tenant_id: w.f.tenant.id, direction: 'in' });
    expect(r).to.deep.include({
      direction: 'out',
      status: 'queued',
      source: 'auto_reply',
      account_ref: 'acc-wablas',
      counterpart: '6281234567801',
      recipient_kind: 'phone',
      customer_id: w.customerId,
      reply_to_id: msg.id,
    });
    expect(r.body_text).to.equal(
      [
        'Halo Budi, tagihan yang belum dibayar:',
        `1. INV-000002 – Rp 175.000,50 – jatuh tempo ${dmy(dueOverdue)}`,
        `2. INV-000003 – Rp 150.000 – jatuh tempo ${dmy(dueUnpaid)}`,
      ].join('\n'),
    );
    const delivery = await env.knex('event_deliveries').where({ subscriber: AUTO_REPLY_SUBSCRIBER });
    expect(delivery.length).to.be.greaterThan(0);
  });

  it('status, tiket and other words: status and package, open tickets, the menu (each sender once per 60 s)', async () => {
    const w = await world();
    await inbound(w, 'fonnte-message', { inboxid: 9001, message: 'STATUS dong' });
    clock.advance(61_000);
    await inbound(w, 'ruangwa-message', { id: 'RWA-9002', message: 'cek tiket saya' });
    clock.advance(61_000);
    await inbound(w, 'starsender-message', { id: 'SS-9003', message: 'halo' });
    const rows = await replies(w.f);
    expect(rows.map((r) => r.account_ref)).to.deep.equal(['acc-fonnte', 'acc-ruangwa', 'acc-starsender']);
    expect(rows[0].body_text).to.equal('Halo Budi, status layanan Anda: *Aktif*\nPaket: Rumah 20 (20 Mbps)');
    expect(rows[1].body_text).to.equal(
      'Halo Budi, tiket gangguan yang masih terbuka:\n1. TCK-000001 – Internet mati – Terbuka',
    );
    expect(rows[2].body_text).to.match(/^Halo Budi, ini layanan otomatis kami\.\n/);
    expect(rows[2].body_text).to.include('*TAGIHAN*');
  });

  it('two messages within 60 s: one reply; after 60 s the sender gets the next one', async () => {
    const w = await world();
    await inbound(w, 'wablas-message', wablas('menu'));
    clock.advance(30_000);
    await inbound(w, 'wablas-message', wablas('tagihan'));
    expect((await replies(w.f)).length).to.equal(1);
    clock.advance(31_000);
    await inbound(w, 'wablas-message', wablas('tagihan'));
    expect((await replies(w.f)).length).to.equal(2);
  });

  it('an unknown sender: no reply with reply_unknown_customers off, one "not registered" reply with it on', async () => {
    const off = await world({ reply_unknown_customers: false });
    await inbound(off, 'wablas-message', wablas('halo', '6289999000111'));
    expect(await replies(off.f)).to.deep.equal([]);
    const on = await world({ reply_unknown_customers: true });
    await inbound(on, 'wablas-message', wablas('halo', '6289999000111'));
    const rows = await replies(on.f);
    expect(rows.length).to.equal(1);
    expect(rows[0]).to.deep.include({
      counterpart: '6289999000111',
      customer_id: null,
      body_text: UNKNOWN_NUMBER_TEXT,
    });
  });

  it('auto_reply off, bot disabled, a group message: stored, no reply', async () => {
    const off = await world({ auto_reply: false });
    await inbound(off, 'wablas-message', wablas('tagihan'));
    const disabled = await world({ enabled: false });
    await inbound(disabled, 'wablas-message', wablas('tagihan'));
    const group = await world({ ignore_groups: false, reply_unknown_customers: true });
    await inbound(group, 'wablas-group', { id: `AR-${++seq}` });
    for (const w of [off, disabled, group]) {
      const stored = await env.knex('communication_messages').where({ tenant_id: w.f.tenant.id, direction: 'in' });
      expect(stored.length).to.equal(1);
      expect(await replies(w.f)).to.deep.equal([]);
    }
  });

  it('never two replies for one message: a second run of the handler answers nothing', async () => {
    const w = await world();
    await inbound(w, 'wablas-message', wablas('status'));
    const [msg] = await env.knex('communication_messages').where({ tenant_id: w.f.tenant.id, direction: 'in' });
    clock.advance(120_000);
    const again = await env.knex.transaction((trx) =>
      handleAutoReply(
        {
          id: 1,
          tenant_id: w.f.tenant.id,
          name: 'inbound_chat_message',
          payload: { communication_id: Number(msg.id) },
          created_at: new Date().toISOString(),
          attempts: 0,
        },
        { trx, idempotencyKey: 'x', signal: new AbortController().signal, log: async () => 0 },
      ),
    );
    expect(again).to.deep.equal({ skipped: 'already answered' });
    expect((await replies(w.f)).length).to.equal(1);
  });

  it('a demo-mode tenant: the inbound message is stored, its reply fails demo_guard_blocked without a send', async () => {
    const w = await world({}, { demo: true });
    await inbound(w, 'wablas-message', wablas('tagihan'));
    const [r] = await replies(w.f);
    expect(r.status).to.equal('queued');
    const job: SendJob = {
      ...fakeJob({ tenant_id: w.f.tenant.id, message_id: Number(r.id) }).job,
      name: SEND_JOB,
      attemptsMade: 0,
      opts: { attempts: 5 },
      async moveToDelayed() {},
    };
    const err = await wabotProcess(job, 'token').then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).to.include('demo_guard_blocked');
    const after = await env.knex('communication_messages').where({ id: r.id }).first();
    expect(after).to.deep.include({ status: 'failed', error_code: 'demo_guard_blocked', send_started_at: null });
  });

  it('texts: keywords as whole words in any case; rupiah and dates written the Indonesian way', () => {
    expect(keywordOf('Tagihan?')).to.equal('invoices');
    expect(keywordOf('my INVOICE please')).to.equal('invoices');
    expect(keywordOf('statusnya')).to.equal(null);
    expect(keywordOf('tiket')).to.equal('tickets');
    expect(keywordOf('status tagihan')).to.equal('invoices');
    expect(rupiah(1250000)).to.equal('Rp 1.250.000');
    expect(rupiah('99.9')).to.equal('Rp 99,90');
    expect(tanggal('2026-01-05')).to.equal('05-01-2026');
  });
});
