import { expect } from 'chai';
import { DelayedError, UnrecoverableError } from 'bullmq';
import { env } from '../../helpers/env.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import { createQueues, type Queues } from '../../../jobs/queues.js';
import { enqueueChatMessage, process as wabotProcess, SEND_JOB, type WabotSendData } from '../../../jobs/wabot-send.js';
import type { SendJob } from '../../../jobs/wabot/send.js';
import type { ChatSendConfig } from '../../../jobs/wabot/send-config.js';
import { readGrantLog } from '../../../jobs/wabot/grant-log.js';
import { gatewayAccount, memoryConfig, startFakeGateway, type FakeGateway } from '../../../bench/wabot/gateway.js';

const PREFIX = `wabot-send-${process.pid}`;

/** A fake BullMQ job of a send: records moveToDelayed and log calls. */
function sendJob(data: WabotSendData, attemptsMade = 0) {
  const delayed: number[] = [];
  const logs: string[] = [];
  const job: SendJob = {
    id: `wabot-send-${data.message_id}`,
    name: SEND_JOB,
    data,
    attemptsMade,
    opts: { attempts: 5 },
    async updateProgress() {},
    async log(line) {
      logs.push(line);
      return logs.length;
    },
    async moveToDelayed(ts) {
      delayed.push(ts);
    },
  };
  return { job, delayed, logs };
}

/** Runs the processor and returns what it threw (or null). */
async function run(job: SendJob): Promise<Error | null> {
  try {
    await wabotProcess(job, 'token-1');
    return null;
  } catch (err) {
    return err as Error;
  }
}

async function row(id: number) {
  return env.knex('communication_messages').where({ id }).first();
}

describe('wabot-send: one message, at most once', function () {
  this.timeout(30_000);
  let gw: FakeGateway;
  let queues: Queues;
  let t: TenantFixture;
  let config: ChatSendConfig;
  const configs = new Map<number, ChatSendConfig | null>();

  before(async () => {
    gw = await startFakeGateway();
    queues = createQueues(env.redisUrl, { prefix: `{${PREFIX}}` });
  });
  after(async () => {
    await queues.close();
    await gw.close();
  });
  beforeEach(async () => {
    t = await makeTenant();
    config = memoryConfig(t.tenant.id, [
      gatewayAccount(gw.url, 'a', { weight: 2 }),
      gatewayAccount(gw.url, 'b', { weight: 1 }),
    ]);
    configs.set(t.tenant.id, config);
    gw.arrivals.length = 0;
    configureJobDeps({
      knex: env.knex,
      redis: env.redis,
      queues,
      chatConfig: async (id) => configs.get(id) ?? null,
      chatSend: { keyPrefix: PREFIX, timeoutMs: 400, grantLog: 100 },
    });
  });

  const enqueue = (over: Partial<Parameters<typeof enqueueChatMessage>[1]> = {}) =>
    enqueueChatMessage(
      env.knex,
      { tenantId: t.tenant.id, to: '0812-3456 7890', kind: 'phone', text: 'Hello', source: 'bot', ...over },
      { redis: env.redis, queues, config: async (id) => configs.get(id) ?? null, keyPrefix: PREFIX },
    );

  it('enqueue routes (weights 2, 1: a b a), writes queued rows and adds wabot-send-<id> with ids only', async () => {
    const made = [await enqueue(), await enqueue(), await enqueue()];
    expect(made.map((m) => m.account_id)).to.deep.equal(['a', 'b', 'a']);
    expect(await Promise.all(made.map((m) => m.job))).to.deep.equal([true, true, true]);
    const r = await row(made[0].id);
    expect(r).to.include({
      status: 'queued',
      channel: 'whatsapp',
      direction: 'out',
      account_ref: 'a',
      counterpart: '0812-3456 7890',
      recipient_kind: 'phone',
      source: 'bot',
      manual: false,
      send_attempts: 0,
    });
    const job = await queues.get('wabot-send').getJob(`wabot-send-${made[0].id}`);
    expect(job?.data).to.deep.equal({ tenant_id: t.tenant.id, message_id: made[0].id });
    expect(job?.opts.attempts).to.equal(5);
  });

  it('enqueue in a transaction adds the job only after the commit, and none after a rollback', async () => {
    let inside: Awaited<ReturnType<typeof enqueue>> | undefined;
    await env.knex.transaction(async (trx) => {
      inside = await enqueueChatMessage(
        trx,
        { tenantId: t.tenant.id, to: '081234567890', kind: 'phone', text: 'Hi', source: 'notice' },
        { redis: env.redis, queues, config, keyPrefix: PREFIX },
      );
      expect(await queues.get('wabot-send').getJob(`wabot-send-${inside.id}`)).to.equal(undefined);
    });
    expect(await inside!.job).to.equal(true);
    expect(await queues.get('wabot-send').getJob(`wabot-send-${inside!.id}`)).to.not.equal(undefined);

    let rolled: Awaited<ReturnType<typeof enqueue>> | undefined;
    await env.knex
      .transaction(async (trx) => {
        rolled = await enqueueChatMessage(
          trx,
          { tenantId: t.tenant.id, to: '081234567890', kind: 'phone', text: 'Hi', source: 'notice' },
          { redis: env.redis, queues, config, keyPrefix: PREFIX },
        );
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await rolled!.job).to.equal(false);
    expect(await row(rolled!.id)).to.equal(undefined);
    expect(await queues.get('wabot-send').getJob(`wabot-send-${rolled!.id}`)).to.equal(undefined);
  });

  it('without any enabled account the row is failed account_unavailable and no job is added', async () => {
    configs.set(t.tenant.id, memoryConfig(t.tenant.id, [gatewayAccount(gw.url, 'a', { enabled: false })]));
    const m = await enqueue();
    expect(m).to.include({ status: 'failed', error_code: 'account_unavailable', account_id: null });
    expect(await m.job).to.equal(false);
    expect(await row(m.id)).to.include({ status: 'failed', error_code: 'account_unavailable' });
  });

  it('sends through the routed account: pending with the provider id, one request, token only at the gateway', async () => {
    const m = await enqueue();
    const { job, logs } = sendJob({ tenant_id: t.tenant.id, message_id: m.id });
    expect(await wabotProcess(job, 'tok')).to.deep.equal({
      kind: 'send',
      message_id: m.id,
      status: 'pending',
      account_id: 'a',
    });
    const r = await row(m.id);
    expect(r.status).to.equal('pending');
    expect(r.message_id).to.match(/^fake-\d+$/);
    expect(r.send_started_at).to.be.instanceOf(Date);
    expect(r.send_attempts).to.equal(1);
    expect(gw.arrivals.map((a) => [a.phone, a.token, a.message])).to.deep.equal([
      ['6281234567890', 'tok-a-SENTINEL', 'Hello'],
    ]);
    expect(logs.join('\n')).to.not.include('SENTINEL');
    const grants = await readGrantLog(env.redis, t.tenant.id, 'a', PREFIX);
    expect(grants.map((g) => g.tag)).to.deep.equal([String(m.id)]);
    // a second run of the same job changes nothing and sends nothing
    expect(await wabotProcess(job, 'tok')).to.include({ status: 'skipped' });
    expect(gw.arrivals).to.have.length(1);
  });

  it('a row whose send was started without a result is failed delivery_unknown, never sent again', async () => {
    const m = await enqueue();
    await env.knex('communication_messages').where({ id: m.id }).update({ send_started_at: new Date() });
    const err = await run(sendJob({ tenant_id: t.tenant.id, message_id: m.id }).job);
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect(err!.message).to.include('delivery_unknown');
    expect(await row(m.id)).to.include({ status: 'failed', error_code: 'delivery_unknown' });
    expect(gw.arrivals).to.have.length(0);
  });

  it('demo tenant: failed demo_guard_blocked without a provider call', async () => {
    const demo = await makeTenant({ demo: true });
    configs.set(demo.tenant.id, memoryConfig(demo.tenant.id, [gatewayAccount(gw.url, 'a')]));
    const m = await enqueueChatMessage(
      env.knex,
      { tenantId: demo.tenant.id, to: '081234567890', kind: 'phone', text: 'x', source: 'bot' },
      { redis: env.redis, queues, config: configs.get(demo.tenant.id)!, keyPrefix: PREFIX },
    );
    const err = await run(sendJob({ tenant_id: demo.tenant.id, message_id: m.id }).job);
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect(await row(m.id)).to.include({ status: 'failed', error_code: 'demo_guard_blocked' });
    expect(gw.arrivals).to.have.length(0);
  });

  it('bot disabled: automated sends fail bot_disabled, a manual (test, resend) one is sent', async () => {
    const auto = await enqueue();
    const manual = await enqueue({ manual: true, source: 'test' });
    configs.set(t.tenant.id, { ...config, enabled: false });
    expect(await run(sendJob({ tenant_id: t.tenant.id, message_id: auto.id }).job)).to.be.instanceOf(
      UnrecoverableError,
    );
    expect(await row(auto.id)).to.include({ status: 'failed', error_code: 'bot_disabled' });
    expect(await run(sendJob({ tenant_id: t.tenant.id, message_id: manual.id }).job)).to.equal(null);
    expect(await row(manual.id)).to.include({ status: 'pending', error_code: null });
    expect(gw.arrivals).to.have.length(1);
  });

  it('account disabled or removed after routing: failed account_unavailable, never another account', async () => {
    const first = await enqueue({ accountId: 'b' });
    const second = await enqueue({ accountId: 'b' });
    configs.set(
      t.tenant.id,
      memoryConfig(t.tenant.id, [config.accounts[0], { ...config.accounts[1], enabled: false }]),
    );
    await run(sendJob({ tenant_id: t.tenant.id, message_id: first.id }).job);
    configs.set(t.tenant.id, memoryConfig(t.tenant.id, [config.accounts[0]]));
    await run(sendJob({ tenant_id: t.tenant.id, message_id: second.id }).job);
    for (const m of [first, second]) {
      expect(await row(m.id)).to.include({ status: 'failed', error_code: 'account_unavailable', account_ref: 'b' });
    }
    expect(gw.arrivals).to.have.length(0);
  });

  it('no grant: moved to delayed by the wait (no attempt used), available_at noted, no request', async () => {
    configs.set(t.tenant.id, memoryConfig(t.tenant.id, [gatewayAccount(gw.url, 'a', { delaySeconds: 30 })]));
    const m1 = await enqueue();
    const m2 = await enqueue();
    expect(await run(sendJob({ tenant_id: t.tenant.id, message_id: m1.id }).job)).to.equal(null);
    const before = Date.now();
    const second = sendJob({ tenant_id: t.tenant.id, message_id: m2.id });
    const err = await run(second.job);
    const after = Date.now();
    expect(err).to.be.instanceOf(DelayedError);
    expect(second.delayed).to.have.length(1);
    // the slot is 30 s after the first send's answer; the job wakes 25 ms before it
    expect(second.delayed[0]).to.be.within(before + 20_000, after + 30_000 - 25);
    const r = await row(m2.id);
    expect(r).to.include({ status: 'queued', send_started_at: null, send_attempts: 0 });
    expect(r.available_at.getTime()).to.be.within(before + 20_000, after + 30_000);
    expect(r.available_at.getTime() - second.delayed[0]).to.be.within(0, 100);
    expect(gw.arrivals).to.have.length(1);
  });

  it('retry (connection refused): start cleared, retried with backoff; the 5th attempt fails provider_unavailable', async () => {
    const closed = await startFakeGateway();
    await closed.close(); // a port nobody listens on
    configs.set(t.tenant.id, memoryConfig(t.tenant.id, [gatewayAccount(closed.url, 'a')]));
    const m = await enqueue();
    const err = await run(sendJob({ tenant_id: t.tenant.id, message_id: m.id }, 0).job);
    expect(err).to.be.instanceOf(Error).and.not.instanceOf(UnrecoverableError);
    expect(await row(m.id)).to.include({ status: 'queued', send_started_at: null, send_attempts: 1 });
    const last = await run(sendJob({ tenant_id: t.tenant.id, message_id: m.id }, 4).job);
    expect(last).to.be.instanceOf(UnrecoverableError);
    expect(await row(m.id)).to.include({ status: 'failed', error_code: 'provider_unavailable', send_attempts: 2 });
  });

  it('429: start cleared and delayed by Retry-After; 401: failed auth_failed; 500: failed delivery_unknown', async () => {
    gw.status.set('6281111111111', 429);
    gw.status.set('6282222222222', 401);
    gw.status.set('6283333333333', 500);
    const limited = await enqueue({ to: '081111111111' });
    const refused = await enqueue({ to: '082222222222' });
    const broken = await enqueue({ to: '083333333333' });
    const l = sendJob({ tenant_id: t.tenant.id, message_id: limited.id });
    const before = Date.now();
    expect(await run(l.job)).to.be.instanceOf(DelayedError);
    expect(l.delayed[0]).to.be.within(before + 1000, Date.now() + 1000);
    expect(await row(limited.id)).to.include({ status: 'queued', send_started_at: null });
    expect(await run(sendJob({ tenant_id: t.tenant.id, message_id: refused.id }).job)).to.be.instanceOf(
      UnrecoverableError,
    );
    expect(await row(refused.id)).to.include({ status: 'failed', error_code: 'auth_failed' });
    expect(await run(sendJob({ tenant_id: t.tenant.id, message_id: broken.id }).job)).to.be.instanceOf(
      UnrecoverableError,
    );
    expect(await row(broken.id)).to.include({ status: 'failed', error_code: 'delivery_unknown' });
    const r = await row(refused.id);
    expect(JSON.stringify(r)).to.not.include('SENTINEL');
  });

  it('a timeout after the request was written: exactly one request, failed delivery_unknown', async () => {
    gw.hang.add('6284444444444');
    const m = await enqueue({ to: '084444444444' });
    const job = sendJob({ tenant_id: t.tenant.id, message_id: m.id }).job;
    expect(await run(job)).to.be.instanceOf(UnrecoverableError);
    expect(await row(m.id)).to.include({ status: 'failed', error_code: 'delivery_unknown', send_attempts: 1 });
    // the job running again (BullMQ retry, sweep) sends nothing
    expect(await wabotProcess(job, 'tok')).to.include({ status: 'skipped' });
    expect(gw.arrivals.filter((a) => a.phone === '6284444444444')).to.have.length(1);
  });

  it('the sweep re-adds the job of a queued row older than a minute whose job is missing', async () => {
    const m = await enqueue();
    await queues.get('wabot-send').remove(`wabot-send-${m.id}`);
    await env
      .knex('communication_messages')
      .where({ id: m.id })
      .update({ queued_at: new Date(Date.now() - 120_000) });
    const { job } = sendJob({ tenant_id: 0, message_id: 0 });
    const result = await wabotProcess({ ...job, name: 'wabot-send-sweep' }, 'tok');
    expect(result).to.include({ kind: 'sweep' });
    expect((result as { enqueued: number }).enqueued).to.be.at.least(1);
    const added = await queues.get('wabot-send').getJob(`wabot-send-${m.id}`);
    expect(added?.data).to.deep.equal({ tenant_id: t.tenant.id, message_id: m.id });
  });
});
