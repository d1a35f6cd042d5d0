import { expect } from 'chai';
import { Writable } from 'node:stream';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { getMailStack, type MailStack } from '../../helpers/mail.js';
import { accountFixture } from '../../helpers/email.js';
import { startWorkers, type WorkerHandle } from '../../../workers/main.js';
import * as emailSend from '../../../jobs/email-send.js';
import { createQueues } from '../../../jobs/queues.js';
import { createLogger } from '../../../lib/logger.js';
import type { MailboxCredentials } from '../../../jobs/adapters/mailbox-client/index.js';
import { eventually, folderMessages, header, inboundRow, ownRelay, useSmtpPort } from './reply-support.js';

/** Issue 9 item 5: POST /api/communications/{id}/reply-email through the email-send queue and a real worker. */
describe('POST /api/communications/{id}/reply-email', function () {
  this.timeout(60_000);
  let app: TestApp;
  let stack: MailStack;
  let handle: WorkerHandle;
  let t: TenantFixture;
  let box: MailboxCredentials;
  let customer: MailboxCredentials;
  const workerLogs: string[] = [];

  const row = (id: number) => env.knex('communication_messages').where({ id }).first();
  const replyOf = (originalId: number) =>
    env.knex('communication_messages').where({ reply_to_id: originalId }).orderBy('id', 'desc').first();
  const post = (id: number, body: unknown, a: TestApp = app, token = t.adminToken) =>
    a.request('POST', `/api/communications/${id}/reply-email`, { token, body });
  const body = (o: Record<string, unknown> = {}) => ({
    to: customer.email,
    subject: 'Re: Invoice question',
    message: 'Your invoice includes the new router rental.\nRegards, CS',
    ...o,
  });
  /** The messages of the customer's INBOX carrying this Message-ID. */
  const delivered = async (messageId: string) =>
    (await folderMessages(stack, customer)).filter((m) => header(m.source, 'Message-ID') === messageId);

  before(async () => {
    app = await startTestApp();
    stack = await getMailStack();
    const sink = new Writable({
      write(chunk, _e, cb) {
        workerLogs.push(chunk.toString());
        cb();
      },
    });
    handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('info', sink),
      queues: ['email-send'],
      registry: { 'email-send': { processor: emailSend.process, concurrency: 2 } },
    });
    registerCleanup(() => handle.close());
    const fx = await accountFixture(stack);
    t = fx.t;
    box = fx.box;
    customer = await stack.newMailbox({ local: 'cust', domain: 'cust.test' });
  });
  after(() => handle.close());

  it('sends in thread: 200 sent; the customer gets From, Subject, In-Reply-To, References in order; a copy in Sent; the original unflagged', async () => {
    const originalId = `<orig-${Date.now()}@cust.test>`;
    await stack.deliver({
      from: customer.email,
      to: box.email,
      subject: 'Invoice question',
      text: 'Why is my invoice higher?',
      messageId: originalId,
      references: ['<first@cust.test>', '<second@cs.test>'],
      inReplyTo: '<second@cs.test>',
    });
    const original = await inboundRow(t, box.email, {
      from: customer.email,
      messageId: originalId,
      references: '<first@cust.test> <second@cs.test>',
      inReplyTo: '<second@cs.test>',
    });
    const res = await post(original.id, body());
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.include({
      status: 'sent',
      direction: 'out',
      channel: 'email',
      reply_to_id: original.id,
      subject: 'Re: Invoice question',
      from_address: box.email,
      in_reply_to: originalId,
      references: `<first@cust.test> <second@cs.test> ${originalId}`,
    });
    expect(res.body.data.sent_at).to.be.a('string');
    const got = await eventually(async () => (await delivered(res.body.data.message_id))[0]);
    expect(header(got.source, 'From')).to.equal(box.email);
    expect(header(got.source, 'To')).to.equal(customer.email);
    expect(header(got.source, 'Subject')).to.equal('Re: Invoice question');
    expect(header(got.source, 'In-Reply-To')).to.equal(originalId);
    expect(header(got.source, 'References')?.split(/\s+/)).to.deep.equal([
      '<first@cust.test>',
      '<second@cs.test>',
      originalId,
    ]);
    expect(got.source).to.include('Your invoice includes the new router rental.');
    const sent = await eventually(async () =>
      (await folderMessages(stack, box, 'Sent')).find(
        (m) => header(m.source, 'Message-ID') === res.body.data.message_id,
      ),
    );
    expect(sent?.flags).to.include('\\Seen');
    const inbox = await folderMessages(stack, box);
    const orig = inbox.find((m) => header(m.source, 'Message-ID') === originalId);
    // neither \Answered nor \Seen (\Recent is this test's own read-only session seeing it first)
    expect(orig?.flags.filter((f) => f !== '\\Recent')).to.deep.equal([]);
    // the reply is listed under the original
    const detail = await app.request('GET', `/api/communications/${original.id}`, { token: t.adminToken });
    expect(detail.body.data.replies.map((r: { id: number }) => r.id)).to.deep.equal([res.body.data.id]);
    // job data: ids only; no password anywhere
    const job = await app.queues.get('email-send').getJob(`email-send-${res.body.data.id}`);
    expect(job?.data).to.deep.equal({ tenant_id: t.tenant.id, communication_id: res.body.data.id });
    const all = [res.text, JSON.stringify(job?.data), ...app.logs, ...workerLogs].join('\n');
    expect(all).not.to.include(box.password);
  });

  it('Sent copy failing (IMAP unreachable) is logged, not an error: 200 sent', async () => {
    const account = await env.knex('external_email_accounts').where({ tenant_id: t.tenant.id }).first();
    await env.knex('external_email_accounts').where({ id: account.id }).update({ incoming_port: 1 });
    try {
      const original = await inboundRow(t, box.email, { from: customer.email, messageId: '<nosent-1@cust.test>' });
      const res = await post(original.id, body());
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.status).to.equal('sent');
      // the row is `sent` before the copy is tried: wait for the job's end
      const job = await eventually(async () => {
        const j = await app.queues.get('email-send').getJob(`email-send-${res.body.data.id}`);
        return j?.returnvalue ? j : null;
      });
      expect(job?.returnvalue).to.include({ outcome: 'sent', sent_copy: false });
      const warning = workerLogs.find((l) => l.includes('copy in the Sent folder failed'));
      expect(warning).to.be.a('string').and.include(`"communication_id":${res.body.data.id}`);
      expect(await eventually(async () => (await delivered(res.body.data.message_id)).length)).to.equal(1);
    } finally {
      await env
        .knex('external_email_accounts')
        .where({ id: account.id })
        .update({ incoming_port: account.incoming_port });
    }
  });

  it('relay refuses with 554: 502 mail_server_error with the reply and data, row failed, not retried', async () => {
    const relay = await ownRelay(stack);
    registerCleanup(() => relay.stop());
    await useSmtpPort(t.tenant.id, relay.port);
    try {
      relay.refuse({ code: 554, message: 'Message rejected as spam' });
      const original = await inboundRow(t, box.email, { from: customer.email, messageId: '<spam-1@cust.test>' });
      const res = await post(original.id, body());
      expect(res.status, res.text).to.equal(502);
      expect(res.body.code).to.equal('mail_server_error');
      expect(res.body.message).to.include('554').and.include('Message rejected as spam');
      expect(res.body.data).to.include({ status: 'failed', error_code: 'smtp_554', reply_to_id: original.id });
      const job = await app.queues.get('email-send').getJob(`email-send-${res.body.data.id}`);
      // the row is marked before the job ends
      expect(await eventually(async () => ((await job?.getState()) === 'failed' ? 'failed' : null))).to.equal('failed');
      expect((await app.queues.get('email-send').getJob(`email-send-${res.body.data.id}`))?.attemptsMade).to.equal(1);
      expect(relay.delivered).to.equal(0);
    } finally {
      await relay.stop();
    }
  });

  it('relay down: 202 queued after the wait, retried with backoff; relay up: sent exactly once', async () => {
    const probe = await ownRelay(stack);
    const port = probe.port;
    await probe.stop();
    await useSmtpPort(t.tenant.id, port);
    const short = await startTestApp({ emailReplyWaitMs: 300 });
    Object.assign(short.queues, { get: app.queues.get.bind(app.queues) });
    const original = await inboundRow(t, box.email, { from: customer.email, messageId: '<down-1@cust.test>' });
    const res = await post(original.id, body(), short);
    expect(res.status, res.text).to.equal(202);
    expect(res.body.data).to.include({ status: 'queued', reply_to_id: original.id });
    const id = res.body.data.id as number;
    // the first attempt failed and was recorded, known not sent: no start mark left
    const failedOnce = await eventually(async () => {
      const r = await row(id);
      return r.error_code ? r : null;
    });
    expect(failedOnce).to.include({ status: 'queued', send_started_at: null });
    expect(failedOnce.error_code).to.match(/^(esocket|econnection|econnrefused)$/);
    const relay = await ownRelay(stack, port);
    registerCleanup(() => relay.stop());
    try {
      const sent = await eventually(async () => ((await row(id)).status === 'sent' ? row(id) : null));
      expect(sent).to.include({ status: 'sent', error_code: null, error_message: null });
      expect(relay.delivered).to.equal(1);
      expect(await delivered(sent.message_id)).to.have.length(1);
      const job = await app.queues.get('email-send').getJob(`email-send-${id}`);
      expect(job?.attemptsMade).to.be.greaterThan(0);
    } finally {
      await relay.stop();
    }
  });

  it('connection lost after the body: failed delivery_unknown (502), never sent again', async () => {
    const relay = await ownRelay(stack);
    registerCleanup(() => relay.stop());
    await useSmtpPort(t.tenant.id, relay.port);
    try {
      relay.dropAfterData(true);
      const original = await inboundRow(t, box.email, { from: customer.email, messageId: '<lost-1@cust.test>' });
      const res = await post(original.id, body());
      expect(res.status, res.text).to.equal(502);
      expect(res.body.code).to.equal('mail_server_error');
      expect(res.body.data).to.include({ status: 'failed', error_code: 'delivery_unknown' });
      expect(res.body.data.send_started_at).to.be.a('string');
      relay.dropAfterData(false);
      const job = await app.queues.get('email-send').getJob(`email-send-${res.body.data.id}`);
      // the row is marked before the job ends
      expect(await eventually(async () => ((await job?.getState()) === 'failed' ? 'failed' : null))).to.equal('failed');
      // a re-run of the job (e.g. by hand in bull-board) sends nothing: the row is no longer queued
      await job!.retry('failed');
      await eventually(async () => ((await job!.getState()) === 'completed' ? true : null));
      expect(relay.delivered).to.equal(0);
      expect((await row(res.body.data.id)).status).to.equal('failed');
    } finally {
      await relay.stop();
    }
  });

  it('a queued row whose send started and never finished (a killed worker) becomes delivery_unknown, unsent', async () => {
    const relay = await ownRelay(stack);
    registerCleanup(() => relay.stop());
    await useSmtpPort(t.tenant.id, relay.port);
    try {
      const original = await inboundRow(t, box.email, { from: customer.email, messageId: '<crash-1@cust.test>' });
      const [r] = await env
        .knex('communication_messages')
        .insert({
          tenant_id: t.tenant.id,
          channel: 'email',
          direction: 'out',
          status: 'queued',
          source: 'admin',
          account_ref: box.email,
          counterpart: customer.email,
          to_addresses: customer.email,
          subject: 'Re: crash',
          body_text: 'x',
          message_id: '<crash-reply@mail.test>',
          reply_to_id: original.id,
          occurred_at: new Date(),
          queued_at: new Date(),
          send_started_at: new Date(),
        })
        .returning('id');
      await emailSend.enqueueSend(app.queues.get('email-send'), { tenant_id: t.tenant.id, communication_id: r.id });
      const done = await eventually(async () => ((await row(r.id)).status !== 'queued' ? row(r.id) : null));
      expect(done).to.include({ status: 'failed', error_code: 'delivery_unknown' });
      expect(relay.delivered).to.equal(0);
    } finally {
      await relay.stop();
    }
  });

  it('a deleted (tombstoned) queued reply is never sent', async () => {
    const relay = await ownRelay(stack);
    registerCleanup(() => relay.stop());
    await useSmtpPort(t.tenant.id, relay.port);
    try {
      const down = await startTestApp();
      const dead = createQueues('redis://127.0.0.1:1', { prefix: `{reply-dead-${process.pid}}` });
      registerCleanup(() => dead.close());
      Object.assign(down.queues, { get: dead.get.bind(dead) });
      const original = await inboundRow(t, box.email, { from: customer.email, messageId: '<del-1@cust.test>' });
      expect((await post(original.id, body(), down)).status).to.equal(503);
      const queued = await replyOf(original.id);
      const del = await app.request('DELETE', `/api/communications/${queued.id}`, { token: t.adminToken });
      expect(del.status).to.equal(200);
      await emailSend.enqueueSend(app.queues.get('email-send'), {
        tenant_id: t.tenant.id,
        communication_id: Number(queued.id),
      });
      const job = await app.queues.get('email-send').getJob(`email-send-${queued.id}`);
      await eventually(async () => ((await job!.getState()) === 'completed' ? true : null));
      const fresh = await app.queues.get('email-send').getJob(`email-send-${queued.id}`);
      expect(fresh?.returnvalue).to.include({ outcome: 'skipped', reason: 'deleted' });
      expect(relay.delivered).to.equal(0);
      expect(await row(queued.id)).to.include({ status: 'queued', send_started_at: null });
    } finally {
      await relay.stop();
    }
  });

  it('Redis down: 503 QUEUE_UNAVAILABLE, the row stays queued; the sweeper sends it later, once', async () => {
    await useSmtpPort(t.tenant.id, stack.smtp.port);
    const down = await startTestApp();
    const dead = createQueues('redis://127.0.0.1:1', { prefix: `{reply-dead2-${process.pid}}` });
    registerCleanup(() => dead.close());
    Object.assign(down.queues, { get: dead.get.bind(dead) });
    const original = await inboundRow(t, box.email, { from: customer.email, messageId: '<redis-1@cust.test>' });
    const res = await post(original.id, body({ subject: 'Re: while Redis was down' }), down);
    expect(res.status, res.text).to.equal(503);
    expect(res.body.code).to.equal('QUEUE_UNAVAILABLE');
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    const queued = await replyOf(original.id);
    expect(queued).to.include({ status: 'queued', subject: 'Re: while Redis was down' });
    const q = app.queues.get('email-send');
    // younger than a minute: the sweep leaves it alone
    await q.add(emailSend.SWEEP_JOB, {}, { jobId: `sweep-young-${queued.id}` });
    const young = await eventually(async () => {
      const j = await q.getJob(`sweep-young-${queued.id}`);
      return j?.returnvalue ? j : null;
    });
    expect(young?.returnvalue.stale).to.equal(0);
    expect((await row(queued.id)).status).to.equal('queued');
    await env
      .knex('communication_messages')
      .where({ id: queued.id })
      .update({ queued_at: env.knex.raw(`now() - interval '2 minutes'`) });
    await q.add(emailSend.SWEEP_JOB, {}, { jobId: `sweep-old-${queued.id}` });
    const sent = await eventually(async () => ((await row(queued.id)).status === 'sent' ? row(queued.id) : null));
    expect(sent).to.include({ status: 'sent' });
    expect(await eventually(async () => (await delivered(sent.message_id)).length)).to.equal(1);
    const sweep = await q.getJob(`sweep-old-${queued.id}`);
    expect(sweep?.returnvalue).to.include({ enqueued: 1 });
  });

  it('422 for each bad field, a non-inbound message, no account; 404 for a foreign id; demo 403; technician 403', async () => {
    const original = await inboundRow(t, box.email, { from: customer.email, messageId: '<v-1@cust.test>' });
    const count = async () => Number((await env.knex('communication_messages').count('* as n'))[0].n);
    const cases: [Record<string, unknown>, string][] = [
      [{ to: undefined }, 'to'],
      [{ subject: undefined }, 'subject'],
      [{ message: undefined }, 'message'],
      [{ to: 'not-an-address' }, 'to'],
      [{ to: 'a@b.test\r\nBcc: x@y.test' }, 'to'],
      [{ subject: 'x'.repeat(256) }, 'subject'],
      [{ subject: 'Hi\r\nBcc: x@y.test' }, 'subject'],
      [{ subject: '' }, 'subject'],
      [{ message: 'x'.repeat(100_001) }, 'message'],
      [{ message: '' }, 'message'],
      [{ cc: 'x@y.test' }, 'cc'],
    ];
    for (const [o, field] of cases) {
      const b = body(o);
      for (const k of Object.keys(b)) if (b[k as keyof typeof b] === undefined) delete b[k as keyof typeof b];
      const res = await post(original.id, b);
      expect(res.status, `${field}: ${res.text.slice(0, 200)}`).to.equal(422);
      expect(res.body.errors, field).to.have.property(field);
    }
    const outbound = await inboundRow(t, box.email, { from: box.email, messageId: '<out-1@mail.test>' });
    await env.knex('communication_messages').where({ id: outbound.id }).update({ direction: 'out', status: 'sent' });
    const notInbound = await post(outbound.id, body());
    expect(notInbound.status).to.equal(422);
    expect(notInbound.body.errors).to.have.property('id');
    const other = await makeTenant();
    const foreign = await inboundRow(other, 'cs@other.test', { from: customer.email, messageId: '<f-1@cust.test>' });
    const before = await count();
    const nf = await post(foreign.id, body());
    expect(nf.status).to.equal(404);
    const noAccount = await post(foreign.id, body(), app, other.adminToken);
    expect(noAccount.status).to.equal(422);
    expect(noAccount.body.errors).to.have.property('email');
    expect(await count()).to.equal(before);
    const demo = await makeTenant({ demo: true });
    const blocked = await post(original.id, body(), app, demo.adminToken);
    expect(blocked.status).to.equal(403);
    expect(blocked.body.code).to.equal('demo_guard_blocked');
    const tech = await makeUser(t.tenant.id, 'technician');
    const refused = await post(original.id, body(), app, tech.token);
    expect(refused.status).to.equal(403);
    expect(await count()).to.equal(before);
  });
});
