import { expect } from 'chai';
import { QueueEvents, UnrecoverableError } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { env } from '../helpers/env.js';
import { makeTenant, type TenantFixture } from '../helpers/fixtures.js';
import { configureJobDeps } from '../../jobs/deps.js';
import { createQueues, type Queues } from '../../jobs/queues.js';
import * as onuPoll from '../../jobs/onu-poll.js';
import {
  fakeReading,
  OltAuthError,
  OltUnreachableError,
  type OltAdapter,
  type OltCredentials,
  type OnuReading,
} from '../../jobs/adapters/olt/index.js';
import { sealCredentials } from '../../db/credentials.js';
import { createLogger } from '../../lib/logger.js';
import { ManualClock } from '../../lib/clock.js';
import { startWorkers, type WorkerHandle } from '../../workers/main.js';
import { registry } from '../../workers/registry.js';
import { fakeJob } from './fake-job.js';

const SECRET = 'poll-Secret-pw-93d1c2';
const APP_KEY = randomBytes(32);
const uniq = () => randomBytes(4).toString('hex').toUpperCase();

/** An OLT of the tenant with `n` active ONUs (fresh: offline, no readings) and one inactive ONU. */
async function oltWithOnus(f: TenantFixture, n: number, extra: Record<string, unknown> = {}) {
  const olt = await f.scope.insert('olts', {
    name: `OLT ${uniq()}`,
    ip_address: '10.0.0.1',
    status: 'offline',
    ...extra,
  });
  const serials: string[] = [];
  for (let i = 0; i < n; i++) {
    const serial = `ZTEG${uniq()}`;
    serials.push(serial);
    await f.scope.insert('onus', { olt_id: olt.id, serial_number: serial, status: 'offline' });
  }
  const inactive = await f.scope.insert('onus', {
    olt_id: olt.id,
    serial_number: `ZTEG${uniq()}`,
    status: 'los',
    is_active: false,
  });
  return { oltId: olt.id as number, serials, inactiveId: inactive.id as number };
}

const onusOf = (oltId: number) =>
  env
    .knex('onus')
    .where({ olt_id: oltId })
    .orderBy('id')
    .select('id', 'serial_number', 'status', 'rx_power', 'tx_power', 'uptime', 'last_seen', 'updated_at');
const oltRow = (id: number) => env.knex('olts').where({ id }).first();
const pollJob = (f: TenantFixture, oltId: number) => fakeJob({ olt_id: oltId, tenant_id: f.tenant.id });

/** The per-OLT result of a run (fails the test for a sweep result). */
function oltResult(r: onuPoll.OnuPollResult): onuPoll.OnuPollOltResult {
  if (r.kind !== 'olt') throw new Error(`expected a per-OLT result, got ${r.kind}`);
  return r;
}

/** An adapter that answers with `fn` (tests inject it through JobDeps.oltAdapters as driver "fake"). */
const adapter = (fn: OltAdapter['poll']): Record<string, OltAdapter> => ({ fake: { driver: 'fake', poll: fn } });

/** Issue 8 item 3: job onu-poll, processor called with a fake Job; the sweep on real Redis; one real worker run. */
describe('job onu-poll', () => {
  const clock = new ManualClock();
  let t: TenantFixture;

  before(async () => {
    t = await makeTenant();
  });
  beforeEach(() => configureJobDeps({ knex: env.knex, clock, appKey: APP_KEY }));

  it("applies the fake driver's readings by serial; the OLT turns online; a second run at the same moment changes nothing", async () => {
    const { oltId, serials, inactiveId } = await oltWithOnus(t, 12);
    const inactiveBefore = await env.knex('onus').where({ id: inactiveId }).first();
    const { job, logs, progress } = pollJob(t, oltId);
    const result = oltResult(await onuPoll.process(job));
    const want = serials.map((s) => fakeReading(s, clock.now()));
    expect(result).to.include({ kind: 'olt', outcome: 'polled', onus: 12, unknown: 0, missing: 0 });
    expect(result.changed).to.equal(want.filter((r) => r.status !== 'offline').length);
    const rows = await onusOf(oltId);
    for (const r of want) {
      const row = rows.find((x) => x.serial_number === r.serial_number)!;
      expect(row.status, r.serial_number).to.equal(r.status);
      expect(row.rx_power).to.equal(r.rx_power);
      expect(row.tx_power).to.equal(r.tx_power);
      expect(row.uptime === null ? null : Number(row.uptime)).to.equal(r.uptime);
      if (r.status === 'online') expect(row.last_seen.getTime()).to.equal(clock.now().getTime());
      else expect(row.last_seen).to.equal(null);
    }
    expect(await env.knex('onus').where({ id: inactiveId }).first()).to.deep.equal(inactiveBefore);
    const olt = await oltRow(oltId);
    expect(olt).to.include({ status: 'online', last_poll_error: null });
    expect(olt.last_polled_at.getTime()).to.equal(clock.now().getTime());
    expect(logs[0]).to.match(/12 active ONU\(s\) to read/);
    expect(logs.at(-1)).to.match(/online: 12 reading\(s\)/);
    expect(progress.at(-1)).to.equal(100);

    const snapshot = JSON.stringify({ onus: await onusOf(oltId), olt: await oltRow(oltId) });
    const again = oltResult(await onuPoll.process(pollJob(t, oltId).job));
    expect(again).to.include({ outcome: 'polled', changed: 0 });
    expect(JSON.stringify({ onus: await onusOf(oltId), olt: await oltRow(oltId) })).to.equal(snapshot);
  });

  it('a later poll moves uptime and last_seen of the online ONUs only', async () => {
    const { oltId, serials } = await oltWithOnus(t, 8);
    oltResult(await onuPoll.process(pollJob(t, oltId).job));
    try {
      clock.advance(300_000);
      const result = oltResult(await onuPoll.process(pollJob(t, oltId).job));
      const online = serials.filter((s) => fakeReading(s, clock.now()).status === 'online');
      expect(result.changed).to.equal(online.length);
      const rows = await onusOf(oltId);
      for (const s of online) {
        const row = rows.find((x) => x.serial_number === s)!;
        expect(row.last_seen.getTime()).to.equal(clock.now().getTime());
        expect(Number(row.uptime)).to.equal(fakeReading(s, clock.now()).uptime);
      }
    } finally {
      clock.advance(-300_000);
    }
  });

  it('unreachable OLT: status offline, last_poll_error unreachable, its ONUs keep their last readings', async () => {
    const { oltId } = await oltWithOnus(t, 5);
    oltResult(await onuPoll.process(pollJob(t, oltId).job));
    const before = await onusOf(oltId);
    configureJobDeps({
      knex: env.knex,
      clock,
      oltAdapters: adapter(async () => {
        throw new OltUnreachableError('connect ETIMEDOUT 10.0.0.1:23');
      }),
    });
    const { job, logs } = pollJob(t, oltId);
    const result = await onuPoll.process(job);
    expect(result).to.include({ outcome: 'unreachable', changed: 0 });
    expect(await onusOf(oltId)).to.deep.equal(before);
    expect(await oltRow(oltId)).to.include({ status: 'offline', last_poll_error: 'unreachable' });
    expect(logs.at(-1)).to.match(/unreachable: status offline; its ONUs keep their last readings/);
    // reachable again: back online, error cleared
    configureJobDeps({ knex: env.knex, clock });
    oltResult(await onuPoll.process(pollJob(t, oltId).job));
    expect(await oltRow(oltId)).to.include({ status: 'online', last_poll_error: null });
  });

  it('refused credentials: UnrecoverableError, last_poll_error set, status and readings unchanged', async () => {
    const { oltId } = await oltWithOnus(t, 3);
    oltResult(await onuPoll.process(pollJob(t, oltId).job));
    const before = await onusOf(oltId);
    configureJobDeps({
      knex: env.knex,
      clock,
      oltAdapters: adapter(async () => {
        throw new OltAuthError();
      }),
    });
    let err: unknown;
    try {
      oltResult(await onuPoll.process(pollJob(t, oltId).job));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect((err as Error).message).to.equal(`OLT ${oltId}: authentication failed`);
    expect(await onusOf(oltId)).to.deep.equal(before);
    expect(await oltRow(oltId)).to.include({ status: 'online', last_poll_error: 'authentication failed' });
  });

  it('opens the sealed credentials only for a driver that asks; a worker without the right APP_KEY gives up', async () => {
    const creds = { username: 'admin', password: SECRET };
    const sealed = sealCredentials(APP_KEY, 'olts', t.tenant.id, creds);
    const { oltId } = await oltWithOnus(t, 2, { credentials_enc: sealed });
    let seen: OltCredentials | null = null;
    const asking = adapter(async (target, opts) => {
      seen = target.credentials();
      return target.serials.map((s) => fakeReading(s, opts.now));
    });
    configureJobDeps({ knex: env.knex, clock, appKey: APP_KEY, oltAdapters: asking });
    const { job, logs } = pollJob(t, oltId);
    const result = oltResult(await onuPoll.process(job));
    expect(result.outcome).to.equal('polled');
    expect(seen).to.deep.equal(creds);
    expect(JSON.stringify({ result, logs, data: job.data })).not.to.include(SECRET);

    configureJobDeps({ knex: env.knex, clock, appKey: randomBytes(32), oltAdapters: asking });
    let err: unknown;
    try {
      oltResult(await onuPoll.process(pollJob(t, oltId).job));
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect((err as Error).message).not.to.include(SECRET);
  });

  it('ignores serials it does not know, sets known ONUs the OLT does not report offline (readings cleared)', async () => {
    const { oltId, serials } = await oltWithOnus(t, 3);
    const online = (s: string): OnuReading => ({
      serial_number: s,
      status: 'online',
      rx_power: -19.5,
      tx_power: 2.1,
      uptime: 60,
    });
    configureJobDeps({ knex: env.knex, clock, oltAdapters: adapter(async () => serials.map(online)) });
    oltResult(await onuPoll.process(pollJob(t, oltId).job));
    configureJobDeps({
      knex: env.knex,
      clock,
      oltAdapters: adapter(async () => [online(serials[0].toLowerCase()), online('HWTC00000000'), online(serials[2])]),
    });
    const result = oltResult(await onuPoll.process(pollJob(t, oltId).job));
    expect(result).to.include({ unknown: 1, missing: 1, changed: 1 });
    expect(result.statuses).to.deep.equal({ online: 2, offline: 1 });
    const row = (await onusOf(oltId)).find((r) => r.serial_number === serials[1])!;
    expect(row).to.include({ status: 'offline', rx_power: null, tx_power: null, uptime: null });
    expect(row.last_seen.getTime()).to.equal(clock.now().getTime());
  });

  it('drops a poll older than the last one applied (stale), and skips inactive or deleted OLTs', async () => {
    const { oltId } = await oltWithOnus(t, 2);
    oltResult(await onuPoll.process(pollJob(t, oltId).job));
    const snapshot = JSON.stringify({ onus: await onusOf(oltId), olt: await oltRow(oltId) });
    try {
      clock.advance(-60_000);
      configureJobDeps({
        knex: env.knex,
        clock,
        oltAdapters: adapter(async (target) =>
          target.serials.map((s) => ({
            serial_number: s,
            status: 'los',
            rx_power: null,
            tx_power: null,
            uptime: null,
          })),
        ),
      });
      expect(oltResult(await onuPoll.process(pollJob(t, oltId).job)).outcome).to.equal('stale');
      expect(JSON.stringify({ onus: await onusOf(oltId), olt: await oltRow(oltId) })).to.equal(snapshot);
    } finally {
      clock.advance(60_000);
    }
    configureJobDeps({ knex: env.knex, clock });
    await env.knex('olts').where({ id: oltId }).update({ is_active: false });
    expect(oltResult(await onuPoll.process(pollJob(t, oltId).job)).outcome).to.equal('skipped');
    const other = await makeTenant();
    // another tenant's id in the data: the tenant-scoped read finds nothing
    expect(oltResult(await onuPoll.process(pollJob(other, oltId).job)).outcome).to.equal('skipped');
    expect(JSON.stringify({ onus: await onusOf(oltId) })).to.equal(JSON.stringify({ onus: JSON.parse(snapshot).onus }));
  });

  describe('the sweep (real Redis)', () => {
    let queues: Queues;
    before(() => {
      queues = createQueues(env.redisUrl, { prefix: `{onupoll-${process.pid}-${uniq()}}` });
    });
    after(() => queues.close());

    it('enqueues one job per active OLT (fixed id per OLT and 5-minute bucket, ids-only data); a rerun adds none', async () => {
      const f = await makeTenant();
      const a = await oltWithOnus(f, 1);
      const b = await oltWithOnus(f, 1);
      const off = await oltWithOnus(f, 1, { is_active: false });
      configureJobDeps({ knex: env.knex, clock, queues });
      const { job, logs } = fakeJob({});
      const result = await onuPoll.process(job);
      expect(result.kind).to.equal('sweep');
      if (result.kind !== 'sweep') return;
      expect(result.bucket).to.equal(Math.floor(clock.now().getTime() / 300_000));
      expect(result.tenants[String(f.tenant.id)]).to.equal(2);
      const q = queues.get(onuPoll.QUEUE);
      for (const id of [a.oltId, b.oltId]) {
        const j = (await q.getJob(`onu-poll-olt-${id}-b${result.bucket}`))!;
        expect(j.name).to.equal(onuPoll.OLT_JOB);
        expect(j.data).to.deep.equal({ olt_id: id, tenant_id: f.tenant.id });
      }
      expect(await q.getJob(`onu-poll-olt-${off.oltId}-b${result.bucket}`)).to.equal(undefined);
      expect(logs).to.include(`tenant ${f.tenant.id}: 2 OLT poll(s) enqueued`);
      const waiting = await q.getWaitingCount();
      await onuPoll.process(fakeJob({}).job);
      expect(await q.getWaitingCount()).to.equal(waiting);
    });
  });

  it('runs through a real worker: the scheduler sweeps at start, the OLT job applies the readings and logs its steps', async function () {
    this.timeout(60_000);
    const prefix = `{onupoll-w-${process.pid}-${uniq()}}`;
    const f = await makeTenant();
    const sealed = sealCredentials(APP_KEY, 'olts', f.tenant.id, { username: 'admin', password: SECRET });
    const { oltId, serials } = await oltWithOnus(f, 4, { credentials_enc: sealed });
    const lines: string[] = [];
    const logger = createLogger(
      'info',
      new Writable({
        write(chunk, _e, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }) as never, // a Writable is a pino destination; the logger's type names its own stream type
    );
    const expectedId = onuPoll.oltJobId(oltId, clock.now());
    const events = new QueueEvents(onuPoll.QUEUE, { connection: { url: env.redisUrl }, prefix });
    const queues = createQueues(env.redisUrl, { prefix });
    let handle: WorkerHandle | null = null;
    try {
      await events.waitUntilReady();
      const done = new Promise<unknown>((resolve, reject) => {
        events.on('completed', ({ jobId, returnvalue }) => {
          if (jobId === expectedId) resolve(typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue);
        });
        events.on('failed', ({ jobId, failedReason }) => {
          if (jobId === expectedId) reject(new Error(failedReason));
        });
      });
      handle = await startWorkers({
        redisUrl: env.redisUrl,
        knex: env.knex,
        appKey: APP_KEY,
        clock,
        prefix,
        logger,
        queues: ['onu-poll'],
        registry: { 'onu-poll': registry['onu-poll'] },
      });
      const result = (await done) as onuPoll.OnuPollOltResult;
      expect(result).to.include({ kind: 'olt', olt_id: oltId, tenant_id: f.tenant.id, outcome: 'polled', onus: 4 });
      const rows = await onusOf(oltId);
      for (const s of serials) {
        expect(rows.find((r) => r.serial_number === s)!.status).to.equal(fakeReading(s, clock.now()).status);
      }
      expect((await oltRow(oltId)).status).to.equal('online');
      const q = queues.get(onuPoll.QUEUE);
      const { logs } = await q.getJobLogs(expectedId);
      expect(logs[0]).to.match(/4 active ONU\(s\) to read/);
      const job = (await q.getJob(expectedId))!;
      expect(job.data).to.deep.equal({ olt_id: oltId, tenant_id: f.tenant.id });
      expect(await q.getJobSchedulers()).to.have.length(1);
      const keys = await env.redis.keys(`${prefix}*`);
      for (const k of keys) {
        const type = await env.redis.type(k);
        const dump =
          type === 'hash'
            ? JSON.stringify(await env.redis.hgetall(k))
            : type === 'list'
              ? JSON.stringify(await env.redis.lrange(k, 0, -1))
              : '';
        expect(dump, k).not.to.include(SECRET);
      }
    } finally {
      await handle?.close();
      await Promise.all([events.close(), queues.close()]);
    }
    expect(lines.join('')).not.to.include(SECRET);
  });
});
