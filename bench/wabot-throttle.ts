/**
 * `npm run bench -- wabot-throttle [--n 2000] [--scale 50] [--concurrency 10] [--keep] [--detail]`
 * (issue 10, "Benchmark"; `--detail`: each account's grant lateness and job runs).
 * 3 real worker processes (bench/wabot/worker.ts: workers/main.ts on the wabot-send queue), a local
 * fake Wablas gateway (bench/wabot/gateway.ts), one tenant with 5 accounts (N/min, delay s,
 * weight): (3,10,5), (20,2,15), (60,0,30), (0,1,20), (120,0,30), WABOT_TIME_SCALE=50 (a minute is
 * 1.2 s). The n messages are enqueued with enqueueChatMessage (routing at enqueue) while the queue
 * is paused, then it is resumed (t0, Redis clock) and drained.
 * Baseline, same run: each account's ideal schedule for the messages routed to it,
 * t_i = max(t_{i-1} + delay, t_{i-N} + 60 s) scaled, from t0; the ideal drain is the latest ideal
 * finish. Prints per account the routed share, the worst window and smallest gap (grant log and
 * gateway), violations (grant log exact; gateway with a 10 ms allowance), ideal and achieved finish.
 * Targets: ideal / achieved drain >= 0.95; 0 violations in the grant log and at the gateway.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { Redis } from 'ioredis';
import { startEmbeddedPostgres } from '../lib/infra/postgres.js';
import { startRedis } from '../lib/infra/redis.js';
import { inheritedEnv } from '../lib/config.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { createTenant } from '../api/tenants/service.js';
import { createQueues } from '../jobs/queues.js';
import { enqueueChatMessage, QUEUE } from '../jobs/wabot-send.js';
import { checkPace, readGrantLog } from '../jobs/wabot/grant-log.js';
import type { SendAccount } from '../jobs/wabot/send-config.js';
import { gatewayAccount, memoryConfig, startFakeGateway } from './wabot/gateway.js';

function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : def;
}

/** The issue's accounts: [N per minute, delay s, weight]. */
const ACCOUNTS: [number, number, number][] = [
  [3, 10, 5],
  [20, 2, 15],
  [60, 0, 30],
  [0, 1, 20],
  [120, 0, 30],
];

/** The ideal send times (ms from t0) of k messages on an account (scaled limits). */
export function idealSchedule(k: number, n: number, delayMs: number, windowMs: number): number[] {
  const t: number[] = [];
  for (let i = 0; i < k; i++) {
    let at = 0;
    if (i > 0) at = Math.max(at, t[i - 1] + delayMs);
    if (n > 0 && i >= n) at = Math.max(at, t[i - n] + windowMs);
    t.push(at);
  }
  return t;
}

type Child = ResultPromise<{ reject: false }> & { out: () => string };

export async function run(args: string[]): Promise<void> {
  const total = Number(arg(args, 'n', '2000'));
  const scale = Number(arg(args, 'scale', '50'));
  const keep = args.includes('--keep');
  const detail = args.includes('--detail');
  const windowMs = 60_000 / scale;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-bench-wabot-'));
  console.log(`wabot-throttle: ${total} messages, 3 worker processes, WABOT_TIME_SCALE=${scale}; data in ${dir}`);
  const pg = await startEmbeddedPostgres(path.join(dir, 'postgres'), 'isp_bench', { temporary: true });
  const redisSrv = await startRedis(path.join(dir, 'redis'));
  const knex = createKnex(pg.url, { min: 0, max: 4 });
  const redis = new Redis(redisSrv.url, { maxRetriesPerRequest: null });
  const gw = await startFakeGateway();
  const children: Child[] = [];
  const queuePrefix = '{wabot-bench}';
  const keyPrefix = 'wabot-bench';
  const queues = createQueues(redisSrv.url, { prefix: queuePrefix });
  try {
    await migrateLatest(knex);
    const { tenant } = await createTenant(knex, {
      slug: 'bench-wabot',
      name: 'Bench wabot',
      adminEmail: 'admin@bench-wabot.test',
      adminPassword: 'correct horse battery',
    });
    const accounts: SendAccount[] = ACCOUNTS.map(([n, delay, weight], i) =>
      gatewayAccount(gw.url, `acct-${i + 1}`, { maxPerMinute: n, delaySeconds: delay, weight }),
    );
    const config = memoryConfig(tenant.id, accounts);
    const queue = queues.get(QUEUE);
    await queue.pause();
    const workerEnv = {
      ...inheritedEnv(),
      DATABASE_URL: pg.url,
      REDIS_URL: redisSrv.url,
      QUEUE_PREFIX: queuePrefix,
      WABOT_KEY_PREFIX: keyPrefix,
      WABOT_CONFIGS: JSON.stringify([config]),
      WABOT_TIME_SCALE: String(scale),
      GRANT_LOG: String(total * 2),
      LOG_LEVEL: 'error',
      CONCURRENCY: arg(args, 'concurrency', '10'),
    };
    for (let i = 0; i < 3; i++) {
      const c = execa(process.execPath, ['--import', 'tsx', 'bench/wabot/worker.ts'], {
        env: workerEnv,
        reject: false,
      });
      let out = '';
      c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      children.push(Object.assign(c, { out: () => out }));
    }
    const enqueueStart = performance.now();
    const jobs: Promise<boolean>[] = [];
    for (let i = 0; i < total; i++) {
      const m = await enqueueChatMessage(
        knex,
        { tenantId: tenant.id, to: `0812${String(i).padStart(8, '0')}`, kind: 'phone', text: `b-${i}`, source: 'bot' },
        { redis, queues, config, keyPrefix },
      );
      jobs.push(m.job);
    }
    if (!(await Promise.all(jobs)).every(Boolean)) throw new Error('some jobs were not added');
    console.log(`enqueued ${total} in ${((performance.now() - enqueueStart) / 1000).toFixed(1)} s (queue paused)`);
    for (const c of children) {
      for (let i = 0; !c.out().includes('READY'); i++) {
        if (i > 600 || c.exitCode != null) throw new Error(`worker did not start: ${c.out()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const [sec, usec] = await redis.time();
    const t0 = Number(sec) * 1000 + Number(usec) / 1000;
    await queue.resume();
    for (;;) {
      const [{ n }] = await knex('communication_messages')
        .where({ tenant_id: tenant.id, status: 'queued' })
        .count({ n: '*' });
      if (Number(n) === 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const statuses = await knex('communication_messages')
      .where({ tenant_id: tenant.id })
      .groupBy('status')
      .select('status', knex.raw('count(*)::int AS n'));
    console.log(`rows: ${statuses.map((s) => `${s.status} ${s.n}`).join(', ')}`);

    if (detail) {
      const done = await queue.getJobs(['completed', 'failed'], 0, -1);
      const runs = new Map<string, number>();
      const acctOf = new Map(
        (await knex('communication_messages').where({ tenant_id: tenant.id }).select('id', 'account_ref')).map((r) => [
          `wabot-send-${r.id}`,
          r.account_ref as string,
        ]),
      );
      for (const j of done)
        runs.set(acctOf.get(j.id!) ?? '?', (runs.get(acctOf.get(j.id!) ?? '?') ?? 0) + j.attemptsStarted);
      console.log(`runs per account: ${[...runs].map(([k, v]) => `${k} ${v}`).join(', ')}`);
    }
    const routed = await knex('communication_messages')
      .where({ tenant_id: tenant.id })
      .groupBy('account_ref')
      .select('account_ref', knex.raw('count(*)::int AS n'));
    const count = new Map(routed.map((r) => [r.account_ref as string, Number(r.n)]));
    const weightSum = ACCOUNTS.reduce((s, a) => s + a[2], 0);
    let idealDrain = 0;
    let achievedDrain = 0;
    let logViolations = 0;
    let gwViolations = 0;
    const lines: string[] = [];
    for (const a of accounts) {
      const k = count.get(a.id) ?? 0;
      const delayMs = (a.delaySeconds * 1000) / scale;
      const limits = { maxPerMinute: a.maxPerMinute, windowMs, delayMs };
      const ideal = idealSchedule(k, a.maxPerMinute, delayMs, windowMs);
      const grants = (await readGrantLog(redis, tenant.id, a.id, keyPrefix)).map((g) => g.atUs / 1000);
      const arrivals = gw.arrivals.filter((x) => x.token === a.token).map((x) => x.atMs);
      const fromLog = checkPace(grants, limits);
      const atGw = checkPace(arrivals, limits, 10);
      const idealEnd = ideal.length ? ideal[ideal.length - 1] : 0;
      const achievedEnd = grants.length ? grants[grants.length - 1] - t0 : 0;
      idealDrain = Math.max(idealDrain, idealEnd);
      achievedDrain = Math.max(achievedDrain, achievedEnd);
      logViolations += fromLog.violations;
      gwViolations += atGw.violations;
      lines.push(
        `| ${a.id} (${a.maxPerMinute}/min, ${a.delaySeconds} s, w ${a.weight}) | ${k} (${((k / total) * 100).toFixed(1)} % vs ${((a.weight / weightSum) * 100).toFixed(1)} %) | ` +
          `${fromLog.worstWindow} / ${atGw.worstWindow} | ${fmt(fromLog.smallestGapMs)} / ${fmt(atGw.smallestGapMs)} | ` +
          `${fromLog.violations} / ${atGw.violations} | ${(idealEnd / 1000).toFixed(2)} | ${(achievedEnd / 1000).toFixed(2)} |`,
      );
      if (detail) {
        const late: number[] = [];
        const rtt: number[] = [];
        for (let i = 1; i < grants.length; i++) {
          let slot = arrivals[i - 1] + delayMs;
          if (a.maxPerMinute > 0 && i >= a.maxPerMinute) slot = Math.max(slot, arrivals[i - a.maxPerMinute] + windowMs);
          late.push(grants[i] - slot);
          rtt.push(arrivals[i] - grants[i]);
        }
        const q = (xs: number[], p: number) =>
          [...xs].sort((x, y) => x - y)[Math.floor((xs.length - 1) * p)]?.toFixed(1);
        const sum = late.reduce((x, y) => x + Math.max(0, y), 0);
        console.log(
          `${a.id}: grant after slot ms p50 ${q(late, 0.5)} p90 ${q(late, 0.9)} max ${q(late, 1)} sum ${sum.toFixed(0)}; grant->arrival p50 ${q(rtt, 0.5)} max ${q(rtt, 1)}`,
        );
      }
      if (grants.length !== k) lines.push(`|   grant log has ${grants.length} entries for ${k} messages | | | | | | |`);
    }
    console.log(
      '\n| account | routed (share vs weight) | worst window log / gateway | smallest gap ms log / gateway | violations log / gateway | ideal finish s | achieved finish s |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const l of lines) console.log(l);
    const sentOnce =
      new Set(gw.arrivals.map((x) => x.message)).size === gw.arrivals.length && gw.arrivals.length === total;
    const ratio = idealDrain / achievedDrain;
    console.log(`\nideal drain ${(idealDrain / 1000).toFixed(2)} s, achieved ${(achievedDrain / 1000).toFixed(2)} s`);
    console.log('| target | value | met |');
    console.log('|---|---|---|');
    console.log(`| ideal / achieved drain >= 0.95 | ${ratio.toFixed(3)} | ${ratio >= 0.95 ? 'yes' : '**no**'} |`);
    console.log(`| violations in the grant log = 0 | ${logViolations} | ${logViolations === 0 ? 'yes' : '**no**'} |`);
    console.log(
      `| violations at the gateway (10 ms allowance) = 0 | ${gwViolations} | ${gwViolations === 0 ? 'yes' : '**no**'} |`,
    );
    console.log(`| each message sent exactly once | ${gw.arrivals.length} requests | ${sentOnce ? 'yes' : '**no**'} |`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children);
    await queues.close();
    redis.disconnect();
    await gw.close();
    await knex.destroy();
    await redisSrv.stop();
    await pg.stop();
    if (!keep) await fs.rm(dir, { recursive: true, force: true });
  }
}

function fmt(ms: number): string {
  return Number.isFinite(ms) ? ms.toFixed(1) : '-';
}
