import { expect } from 'chai';
import { Child, Queue, QueueEvents, UnrecoverableError } from 'bullmq';
import { Redis } from 'ioredis';
import { Writable } from 'node:stream';
import { readFile, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { env } from '../helpers/env.js';
import { makeTenant, seedBasics } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/events.js';
import { createLogger } from '../../lib/logger.js';
import { createQueues, QUEUE_NAMES, type QueueName } from '../../jobs/queues.js';
import * as invoiceOverdue from '../../jobs/invoice-overdue.js';
import type { InvoiceOverdueResult } from '../../jobs/invoice-overdue.js';
import { startWorkers, UnknownQueuesError, type WorkerHandle } from '../../workers/main.js';
import { registry, type QueueRegistration } from '../../workers/registry.js';
import { watchChildStarts } from '../../workers/child-start.js';
import { slowStartPidFile } from './slow-start-pid.js';
import { addDays, ManualClock, todayIn } from '../../lib/clock.js';

let n = 0;
const uniquePrefix = () => `{wtest-${process.pid}-${++n}}`;

function captureLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

describe('workers/main.ts startWorkers on real Redis', () => {
  const handles: WorkerHandle[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  let conn: Redis;

  before(() => {
    conn = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
  });
  afterEach(async () => {
    while (handles.length) await handles.pop()!.close();
    while (closers.length) await closers.pop()!();
  });
  after(async () => {
    await conn.quit();
  });

  const schedulersOf = async (prefix: string, name: QueueName) => {
    const q = new Queue(name, { connection: conn, prefix });
    const list = await q.getJobSchedulers();
    await q.close();
    return list;
  };

  it('starts a worker per queue with a processor, skips the others (log line), registers the schedulers', async () => {
    const prefix = uniquePrefix();
    const { logger, lines } = captureLogger();
    const h = await startWorkers({ redisUrl: env.redisUrl, knex: env.knex, prefix, logger });
    handles.push(h);
    const withProcessor = QUEUE_NAMES.filter((q) => registry[q]);
    expect([...h.workers.keys()]).to.deep.equal(withProcessor);
    expect(withProcessor).to.include.members(['invoice-overdue', 'ticket-sla']);
    expect(h.skipped).to.deep.equal(QUEUE_NAMES.filter((q) => !registry[q]));
    for (const w of h.workers.values()) expect(w.isRunning()).to.equal(true);

    const inv = await schedulersOf(prefix, 'invoice-overdue');
    expect(inv.map((s) => ({ key: s.key, pattern: s.pattern, tz: s.tz }))).to.deep.equal([
      { key: 'invoice-overdue-hourly', pattern: '5 * * * *', tz: 'UTC' },
    ]);
    const sla = await schedulersOf(prefix, 'ticket-sla');
    expect(sla.map((s) => ({ key: s.key, every: Number(s.every) }))).to.deep.equal([
      { key: 'ticket-sla-every-minute', every: 60000 },
    ]);
    const ev = await schedulersOf(prefix, 'event-dispatch');
    expect(ev.map((s) => ({ key: s.key, every: Number(s.every) }))).to.deep.equal([
      { key: 'event-dispatch-every-5s', every: 5000 },
    ]);
    const scheduled = Object.values(registry).filter((r) => r.scheduler).length;
    expect(scheduled).to.be.at.least(4); // invoice-overdue, ticket-sla, event-dispatch, onu-poll
    expect(lines.filter((l) => l.includes('job scheduler registered'))).to.have.length(scheduled);
  });

  it('runs invoice-overdue once as soon as the worker starts (catch-up), then keeps the hourly pattern', async () => {
    const prefix = uniquePrefix();
    const clock = new ManualClock();
    const t = await makeTenant();
    const { customerId } = await seedBasics(t, { clock });
    const inv = await t.scope.insert('invoices', {
      invoice_number: `INV-C-${randomBytes(3).toString('hex')}`,
      customer_id: customerId,
      amount: 5,
      status: 'unpaid',
      due_date: addDays(todayIn(t.timeZone, clock), -2),
    });
    const events = new QueueEvents('invoice-overdue', { connection: { url: env.redisUrl }, prefix });
    closers.push(() => events.close());
    await events.waitUntilReady();
    type Completed = { jobId: string; returnvalue: unknown };
    const completed = new Promise<Completed>((resolve) => events.on('completed', resolve));
    const started = Date.now();
    handles.push(
      await startWorkers({
        redisUrl: env.redisUrl,
        knex: env.knex,
        prefix,
        logger: captureLogger().logger,
        clock,
        queues: ['invoice-overdue'],
      }),
    );
    const { jobId, returnvalue } = await completed;
    expect(jobId).to.match(/^repeat:invoice-overdue-hourly:\d+$/);
    const result = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as InvoiceOverdueResult;
    expect(result.as_of).to.equal(clock.now().toISOString());
    // this tenant: the invoice due 2 days ago, not seedBasics' invoice (due in 30 days)
    expect(result.tenants[String(t.tenant.id)]).to.equal(1);
    expect((await env.knex('invoices').where({ id: inv.id }).first('status')).status).to.equal('overdue');
    const [s] = await schedulersOf(prefix, 'invoice-overdue');
    expect(s.pattern).to.equal('5 * * * *');
    const next = new Date(Number(s.next));
    expect(next.getUTCMinutes()).to.equal(5);
    expect(next.getTime()).to.be.greaterThan(started);
  });

  it('does not duplicate the schedulers when started twice', async () => {
    const prefix = uniquePrefix();
    handles.push(
      await startWorkers({ redisUrl: env.redisUrl, knex: env.knex, prefix, logger: captureLogger().logger }),
    );
    handles.push(
      await startWorkers({ redisUrl: env.redisUrl, knex: env.knex, prefix, logger: captureLogger().logger }),
    );
    expect(await schedulersOf(prefix, 'invoice-overdue')).to.have.length(1);
    expect(await schedulersOf(prefix, 'ticket-sla')).to.have.length(1);
  });

  it('skips a queue whose processor is not registered (e.g. mailbox-create before its module) without failing', async () => {
    const prefix = uniquePrefix();
    const { logger, lines } = captureLogger();
    const h = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      prefix,
      logger,
      queues: ['invoice-overdue', 'ticket-sla'],
      registry: { 'invoice-overdue': registry['invoice-overdue'] },
    });
    handles.push(h);
    expect([...h.workers.keys()]).to.deep.equal(['invoice-overdue']);
    expect(h.skipped).to.deep.equal(['ticket-sla']);
    expect(lines.some((l) => l.includes('no processor registered for queue ticket-sla'))).to.equal(true);
    expect(await schedulersOf(prefix, 'ticket-sla')).to.have.length(0);
  });

  it('refuses unknown queue names before connecting, naming them', async () => {
    let err: unknown;
    try {
      await startWorkers({
        redisUrl: 'redis://127.0.0.1:1',
        knex: env.knex,
        logger: captureLogger().logger,
        queues: ['invoice-overdue', 'nope', 'also-bad'],
      });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnknownQueuesError);
    expect((err as Error).message)
      .to.include('nope')
      .and.to.include('also-bad');
    expect((err as UnknownQueuesError).names).to.deep.equal(['nope', 'also-bad']);
  });

  it('runs an enqueued invoice-overdue job to completion: rows changed, progress 100, per-tenant log lines', async () => {
    const prefix = uniquePrefix();
    const clock = new ManualClock();
    const t = await makeTenant();
    const { customerId, invoiceId } = await seedBasics(t, { clock });
    const inv = await t.scope.insert('invoices', {
      invoice_number: `INV-W-${randomBytes(3).toString('hex')}`,
      customer_id: customerId,
      amount: 5,
      status: 'unpaid',
      due_date: addDays(todayIn(t.timeZone, clock), -1),
    });
    const queues = createQueues(env.redisUrl, { prefix });
    const events = new QueueEvents('invoice-overdue', { connection: { url: env.redisUrl }, prefix });
    closers.push(
      () => queues.close(),
      () => events.close(),
    );
    await events.waitUntilReady();
    // without the scheduler: its catch-up run at start would mark the invoice before the enqueued job runs
    const noScheduler = { 'invoice-overdue': { ...registry['invoice-overdue']!, scheduler: undefined } };
    handles.push(
      await startWorkers({
        redisUrl: env.redisUrl,
        knex: env.knex,
        prefix,
        logger: captureLogger().logger,
        clock,
        queues: ['invoice-overdue'],
        registry: noScheduler,
      }),
    );

    const id = await invoiceOverdue.enqueue(queues);
    expect(id).to.match(/^invoice-overdue-all-\d{12}$/);
    const job = (await queues.get('invoice-overdue').getJob(id))!;
    const result = await job.waitUntilFinished(events, 20_000);
    expect(result.tenants[String(t.tenant.id)]).to.equal(1);
    const row = await env.knex('invoices').where({ id: inv.id }).first('status');
    expect(row.status).to.equal('overdue');
    expect((await env.knex('invoices').where({ id: invoiceId }).first('status')).status).to.equal('unpaid');
    const done = (await queues.get('invoice-overdue').getJob(id))!;
    expect(done.progress).to.equal(100);
    expect(await done.getState()).to.equal('completed');
    const { logs } = await queues.get('invoice-overdue').getJobLogs(id);
    expect(logs).to.include(`tenant ${t.tenant.id} (${t.tenant.slug}): 1 invoice(s) marked overdue`);
  });

  it('closes cleanly: waits for the running job, signals it after the grace period, stops every worker', async () => {
    const prefix = uniquePrefix();
    let sawAbort = false;
    let started!: () => void;
    const active = new Promise<void>((r) => {
      started = r;
    });
    const h = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      prefix,
      logger: captureLogger().logger,
      queues: ['ticket-sla'],
      // the job is signalled at 4 s (the grace minus its fifth, at most 5 s); the worker then has 1 s to
      // close before the grace is over, room enough on a loaded machine (50 ms was not)
      shutdownGraceMs: 5000,
      registry: {
        'ticket-sla': {
          processor: (_job, _token, signal) =>
            new Promise((resolve) => {
              started();
              signal!.addEventListener('abort', () => {
                sawAbort = true;
                resolve('stopped');
              });
            }),
        },
      },
    });
    const queues = createQueues(env.redisUrl, { prefix });
    closers.push(() => queues.close());
    await queues.get('ticket-sla').add('ticket-sla', {}, { jobId: 'shutdown-probe' });
    await active;
    await h.close();
    expect(sawAbort).to.equal(true);
    expect(h.workers.get('ticket-sla')!.isRunning()).to.equal(false);
    await h.close(); // idempotent
  });

  /**
   * A worker of the supplier-import queue alone with `registration` as its processor, and that
   * queue; the queue is closed after the test.
   */
  const supplierImportWorker = async (registration: QueueRegistration, opts: { shutdownGraceMs?: number } = {}) => {
    const prefix = uniquePrefix();
    const { logger, lines } = captureLogger();
    const h = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      prefix,
      logger,
      queues: ['supplier-import'],
      ...opts,
      registry: { 'supplier-import': registration },
    });
    const queues = createQueues(env.redisUrl, { prefix });
    closers.push(() => queues.close());
    return { h, lines, queue: queues.get('supplier-import') };
  };
  /** supplierImportWorker with the sandboxed test file `file` (next to this one) as its processor. */
  const sandboxedWorker = (file: string, opts: { shutdownGraceMs?: number } = {}) =>
    supplierImportWorker({ processor: fileURLToPath(new URL(file, import.meta.url)) }, opts);

  it('names a running sandboxed job at shutdown and moves it back to its queue at the end of the grace period', async () => {
    const { h, lines, queue } = await sandboxedWorker('./sandboxed-hang.ts', { shutdownGraceMs: 3000 });
    await queue.add('parse', {}, { jobId: 'sandboxed-probe' });
    await waitFor('the sandboxed job to start', async () => h.running().length > 0);
    expect(await queue.getJobState('sandboxed-probe')).to.equal('active');
    expect(h.running()).to.deep.equal(['supplier-import/sandboxed-probe']);
    await h.close();
    // back in the wait list at once, not locked until another worker's stalled check
    expect(await queue.getJobState('sandboxed-probe')).to.equal('waiting');
    expect(await queue.getWaitingCount()).to.equal(1);
    expect(lines.join('')).to.include('job still running at the end of the grace period: moved back to its queue');
  });

  it('a sandboxed child that dies while it starts fails its job (no hang until shutdown), and the worker goes on', async () => {
    const { h, queue } = await sandboxedWorker('./sandboxed-exit-at-load.ts');
    handles.push(h);
    for (const id of ['dies-at-start-1', 'dies-at-start-2']) {
      await queue.add('parse', {}, { jobId: id, attempts: 1 });
      await waitFor(`${id} to fail`, async () => (await queue.getJobState(id)) === 'failed');
      const job = await queue.getJob(id);
      expect(job!.failedReason).to.equal('the sandboxed child exited while starting (exit code: 3, signal: null)');
    }
    // the worker forgets a failed job on its own 'failed' event, which comes just after the job's
    // state changed in Redis (a read of the state can come first)
    await waitFor('the worker to forget the failed jobs', async () => h.running().length === 0);
    expect(h.running()).to.deep.equal([]);
    expect(h.workers.get('supplier-import')!.isRunning()).to.equal(true);
    // installed once by workers/main.ts; a second call wraps nothing again
    const proto = Child.prototype as unknown as { initChild: unknown };
    const wrapped = proto.initChild;
    watchChildStarts();
    expect(proto.initChild).to.equal(wrapped);
  });

  it('a stop that reaches a sandboxed child while it starts (Ctrl-C of the group) sends its job back to the queue', async () => {
    const pidFile = slowStartPidFile(process.pid);
    await rm(pidFile, { force: true });
    const { h, lines, queue } = await sandboxedWorker('./sandboxed-slow-start.ts', { shutdownGraceMs: 20_000 });
    const id = 'stopped-while-starting';
    await queue.add('parse', {}, { jobId: id, attempts: 1 });
    const pid = Number(await waitFor('the child to load', () => readFile(pidFile, 'utf8').catch(() => '')));
    await rm(pidFile, { force: true });
    // a Ctrl-C gives the worker and its child SIGINT at once: BullMQ's child handler exits it (code 0)
    const closed = h.close();
    process.kill(pid, 'SIGINT');
    await closed;
    expect(await queue.getJobState(id)).to.equal('waiting');
    const job = (await queue.getJob(id))!;
    expect(job.failedReason ?? null).to.equal(null);
    expect(job.attemptsMade).to.equal(0);
    const { logs } = await queue.getJobLogs(id);
    expect(logs.join('\n')).to.include(
      'worker shutdown: stopped (the sandboxed child exited while starting (exit code: 0, signal: null)); back to the queue',
    );
    const log = lines.join('');
    expect(log).to.include('job stopped by the shutdown and moved back to its queue');
    expect(log).not.to.include('job failed').and.not.to.include('grace period');
    expect(h.running()).to.deep.equal([]);
  });

  it('close() waits for a failure hook still running, so a job that failed at the stop is recorded', async () => {
    let recorded = false;
    const { h, queue } = await supplierImportWorker({
      processor: async () => {
        throw new UnrecoverableError('a refused file');
      },
      // a hook that takes its time (the supplier import's writes the preview's row)
      onFailed: async () => {
        await new Promise((resolve) => setTimeout(resolve, 2000));
        recorded = true;
      },
    });
    await queue.add('parse', {}, { jobId: 'fails-at-stop' });
    await waitFor('the job to fail', async () => (await queue.getJobState('fails-at-stop')) === 'failed');
    await h.close();
    expect(recorded).to.equal(true);
  });
});

describe('the worker process (npm run worker)', () => {
  const baseEnv = () => ({
    ...process.env,
    DATABASE_URL: env.databaseUrl,
    REDIS_URL: env.redisUrl,
    APP_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
  });

  it('exits 1 with a message naming unknown WORKER_QUEUES entries', async () => {
    const r = await execa(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
      env: { ...baseEnv(), WORKER_QUEUES: 'invoice-overdue,bogus-queue' },
      reject: false,
      timeout: 60_000,
    });
    expect(r.exitCode).to.equal(1);
    expect(r.stderr).to.include('bogus-queue');
  });

  it('exits 1 naming a missing required variable', async () => {
    const e: Record<string, string | undefined> = { ...baseEnv() };
    delete e.REDIS_URL;
    const r = await execa(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
      env: e,
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    expect(r.exitCode).to.equal(1);
    expect(r.stderr).to.include('REDIS_URL');
  });

  it('starts, and stops with exit code 0 on SIGTERM', async () => {
    const child = execa(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
      env: { ...baseEnv(), WORKER_QUEUES: 'invoice-overdue' },
      reject: false,
      timeout: 60_000,
    });
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('workers started')) resolve();
      });
      child.then((r) => reject(new Error(`worker exited early (${r.exitCode}): ${r.stderr}`)));
    });
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).to.equal(0);
    expect(r.stdout).to.include('workers stopped');
  });
});
