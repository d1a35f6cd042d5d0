import { expect } from 'chai';
import { execa, type ResultPromise } from 'execa';
import { env } from '../../helpers/env.js';
import { makeTenant } from '../../helpers/fixtures.js';
import { waitFor } from '../../helpers/events.js';
import { createQueues, type Queues } from '../../../jobs/queues.js';
import { enqueueChatMessage } from '../../../jobs/wabot-send.js';
import { checkPace, readGrantLog } from '../../../jobs/wabot/grant-log.js';
import type { ChatSendConfig } from '../../../jobs/wabot/send-config.js';
import { gatewayAccount, memoryConfig, startFakeGateway, type FakeGateway } from '../../../bench/wabot/gateway.js';

type Child = ResultPromise<{ reject: false; timeout: number }> & { output: () => string };

const SCALE = 50; // a minute is 1.2 s
const WINDOW_MS = 60_000 / SCALE;

/** Starts bench/wabot/worker.ts as its own process, collecting its output. */
function startWorker(vars: Record<string, string>): Child {
  const child = execa(process.execPath, ['--import', 'tsx', 'bench/wabot/worker.ts'], {
    env: { ...process.env, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, LOG_LEVEL: 'error', ...vars },
    reject: false,
    timeout: 240_000,
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return Object.assign(child, { output: () => out });
}

async function ready(child: Child): Promise<void> {
  await waitFor('a worker to start', async () => {
    if (child.exitCode !== null && child.exitCode !== undefined) throw new Error(`worker exited: ${child.output()}`);
    return child.output().includes('READY');
  });
}

describe('wabot-send across real worker processes (limiter exact, at most once)', function () {
  this.timeout(300_000);
  let gw: FakeGateway;
  let queues: Queues;
  const children: Child[] = [];
  const queuePrefix = `{wabot-w-${process.pid}}`;
  const keyPrefix = `wabot-w-${process.pid}`;

  before(async () => {
    gw = await startFakeGateway();
    queues = createQueues(env.redisUrl, { prefix: queuePrefix });
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      if (c.exitCode === null || c.exitCode === undefined) c.kill('SIGKILL');
      await c;
    }
  });
  after(async () => {
    await queues.close();
    await gw.close();
  });

  const vars = (configs: ChatSendConfig[], over: Record<string, string> = {}) => ({
    QUEUE_PREFIX: queuePrefix,
    WABOT_KEY_PREFIX: keyPrefix,
    WABOT_CONFIGS: JSON.stringify(configs),
    WABOT_TIME_SCALE: String(SCALE),
    GRANT_LOG: '1000',
    ...over,
  });

  it('3 workers, 2 accounts, 60 messages: every message sent once, 0 violations in the grant log, each request after its grant', async () => {
    const t = await makeTenant();
    const a = gatewayAccount(gw.url, 'acct-a', { weight: 2, maxPerMinute: 6, delaySeconds: 2 });
    const b = gatewayAccount(gw.url, 'acct-b', { weight: 1, maxPerMinute: 3, delaySeconds: 3 });
    const config = memoryConfig(t.tenant.id, [a, b]);
    for (let i = 0; i < 3; i++) children.push(startWorker(vars([config])));
    await Promise.all(children.map(ready));
    const ids: number[] = [];
    for (let i = 0; i < 60; i++) {
      const m = await enqueueChatMessage(
        env.knex,
        {
          tenantId: t.tenant.id,
          to: `0812000${String(i).padStart(5, '0')}`,
          kind: 'phone',
          text: `m-${i}`,
          source: 'bot',
        },
        { redis: env.redis, queues, config, keyPrefix },
      );
      expect(await m.job).to.equal(true);
      ids.push(m.id);
    }
    await waitFor(
      'all 60 messages sent',
      async () => {
        const [{ n }] = await env
          .knex('communication_messages')
          .whereIn('id', ids)
          .where('status', 'queued')
          .count({ n: '*' });
        return Number(n) === 0;
      },
      120_000,
      200,
    );
    const rows = await env
      .knex('communication_messages')
      .whereIn('id', ids)
      .select('status', 'send_attempts', 'account_ref');
    expect(rows.map((r) => `${r.status}/${r.send_attempts}`)).to.deep.equal(ids.map(() => 'pending/1'));
    expect(rows.filter((r) => r.account_ref === 'acct-a')).to.have.length(40);
    // each message arrived exactly once, through its own account
    const texts = gw.arrivals.filter((x) => x.message.startsWith('m-')).map((x) => x.message);
    expect(texts.sort()).to.deep.equal(ids.map((_, i) => `m-${i}`).sort());

    for (const acct of [a, b]) {
      const limits = {
        maxPerMinute: acct.maxPerMinute,
        windowMs: WINDOW_MS,
        delayMs: (acct.delaySeconds * 1000) / SCALE,
      };
      const grants = (await readGrantLog(env.redis, t.tenant.id, acct.id, keyPrefix)).map((g) => g.atUs / 1000);
      expect(grants, acct.id).to.have.length(acct.id === 'acct-a' ? 40 : 20);
      const fromLog = checkPace(grants, limits);
      expect(fromLog.violations, `${acct.id} grant log`).to.equal(0);
      expect(fromLog.worstWindow).to.equal(acct.maxPerMinute);
      // at the gateway: every request came after its own grant (one clock: Redis and this process run
      // on the same machine), and a send counts from its answer, so the gateway sees the pace too
      // whatever the transit time (the 10 ms allowance covers the two processes' clock readings)
      const arrivals = gw.arrivals
        .filter((x) => x.token === acct.token && x.message.startsWith('m-'))
        .map((x) => x.atMs)
        .sort((x, y) => x - y);
      expect(checkPace(arrivals, limits, 10).violations, `${acct.id} at the gateway`).to.equal(0);
      const textOf = new Map(ids.map((id, i) => [String(id), `m-${i}`]));
      const log = await readGrantLog(env.redis, t.tenant.id, acct.id, keyPrefix);
      expect(new Set(log.map((g) => g.tag)).size).to.equal(log.length);
      for (const g of log) {
        const arrival = gw.arrivals.find((x) => x.message === textOf.get(g.tag));
        expect(arrival?.token, `message ${g.tag}`).to.equal(acct.token);
        expect(arrival!.atMs - g.atUs / 1000, `message ${g.tag}`).to.be.at.least(-2);
      }
    }
    for (const c of children) c.kill('SIGTERM');
    const exits = await Promise.all(children.splice(0));
    expect(exits.map((e) => e.exitCode)).to.deep.equal([0, 0, 0]);
  });

  it('kill -9 of a worker mid-send: exactly one request at the gateway, the row failed delivery_unknown', async () => {
    const t = await makeTenant();
    const config = memoryConfig(t.tenant.id, [gatewayAccount(gw.url, 'k')]);
    const fast = { LOCK_MS: '1500', STALLED_MS: '500' };
    const first = startWorker(vars([config], fast));
    children.push(first);
    await ready(first);
    gw.hang.add('6281999999999');
    const m = await enqueueChatMessage(
      env.knex,
      { tenantId: t.tenant.id, to: '081999999999', kind: 'phone', text: 'kill me', source: 'bot' },
      { redis: env.redis, queues, config, keyPrefix },
    );
    expect(await m.job).to.equal(true);
    await waitFor('the request at the gateway', async () => gw.arrivals.some((x) => x.message === 'kill me'));
    first.kill('SIGKILL');
    expect((await first).signal).to.equal('SIGKILL');
    expect(await env.knex('communication_messages').where({ id: m.id }).first()).to.include({
      status: 'queued',
      send_attempts: 1,
    });

    const second = startWorker(vars([config], fast));
    children.push(second);
    await ready(second);
    const row = await waitFor('the stalled job to be run again', async () => {
      const r = await env.knex('communication_messages').where({ id: m.id }).first();
      return r.status === 'failed' ? r : null;
    });
    expect(row).to.include({ status: 'failed', error_code: 'delivery_unknown', send_attempts: 1 });
    expect(gw.arrivals.filter((x) => x.message === 'kill me')).to.have.length(1);
  });
});
