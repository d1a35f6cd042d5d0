import { Queue, Worker, type KeepJobs } from 'bullmq';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { isMainModule, runService } from '../lib/process.js';
import { ConfigError, loadServerConfig } from '../lib/config.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { createKnex } from '../db/knex.js';
import {
  createQueues,
  DEFAULT_JOB_OPTIONS,
  QUEUE_NAMES,
  QUEUE_PREFIX,
  unknownQueueNames,
  workerRedisOptions,
  type QueueName,
} from '../jobs/queues.js';
import { configureJobDeps } from '../jobs/deps.js';
import type { Clock } from '../lib/clock.js';
import { registry as defaultRegistry, type QueueRegistration } from './registry.js';

/**
 * The `worker` process (DESIGN.md §1, §3): a BullMQ Worker per queue picked by WORKER_QUEUES
 * (comma list, default all), the queues' job schedulers upserted at start (idempotent; no
 * `repeat` job option, removed in BullMQ 6), error listeners on every worker and connection (a
 * Redis outage is logged and waited out, never a crash), retention from DEFAULT_JOB_OPTIONS, and a
 * graceful shutdown on SIGTERM/SIGINT (`await worker.close()` lets running jobs finish).
 */

/** Options of startWorkers. */
export interface StartWorkersOptions {
  /** redis:// URL the workers connect to (one connection, maxRetriesPerRequest: null). */
  redisUrl: string;
  /** The process's knex; processors reach it through jobs/deps.ts. */
  knex: Knex;
  /** APP_KEY (32 bytes) for processors that open sealed secrets (mailbox-create); reached through jobs/deps.ts. */
  appKey?: Buffer;
  /** The clock processors read "now" and "today" from (default systemClock; tests pass a ManualClock). */
  clock?: Clock;
  /** Queue names to run; undefined or empty = every queue of QUEUE_NAMES. */
  queues?: string[];
  /** Queue key prefix (default QUEUE_PREFIX; tests pass a unique one). */
  prefix?: string;
  logger: Logger;
  /** Queue -> processor table (default workers/registry.ts). */
  registry?: Partial<Record<QueueName, QueueRegistration>>;
  /**
   * Milliseconds close() waits for running jobs before it signals them to stop at their next batch
   * (their AbortSignal fires; the job is retried later). Default 20000 (under Heroku's 30 s).
   */
  shutdownGraceMs?: number;
}

/** Running workers. */
export interface WorkerHandle {
  /** Queue name -> its Worker (only the queues that have a processor). */
  workers: Map<QueueName, Worker>;
  /** Queues skipped because no processor is registered for them yet. */
  skipped: QueueName[];
  /** Closes the workers (waiting for running jobs), the scheduler queues and the connection. Idempotent. */
  close(): Promise<void>;
}

/** Thrown by startWorkers for queue names that do not exist; the message names them. */
export class UnknownQueuesError extends ConfigError {
  constructor(readonly names: string[]) {
    super(`WORKER_QUEUES names unknown queue(s): ${names.join(', ')}. Known queues: ${QUEUE_NAMES.join(', ')}.`);
    this.name = 'UnknownQueuesError';
  }
}

/**
 * Resolves WORKER_QUEUES to queue names.
 * @param names requested names; undefined or empty = all
 * @throws UnknownQueuesError naming every unknown name
 */
export function resolveQueues(names: string[] | undefined): QueueName[] {
  const wanted = (names ?? []).map((n) => n.trim()).filter(Boolean);
  if (!wanted.length) return [...QUEUE_NAMES];
  const unknown = unknownQueueNames(wanted);
  if (unknown.length) throw new UnknownQueuesError(unknown);
  return [...new Set(wanted)] as QueueName[];
}

/** Logs at most one line per `key` every `ms` (ioredis emits an error on every reconnect attempt). */
function throttledLogger(logger: Logger, ms = 10_000) {
  const last = new Map<string, number>();
  return (key: string, obj: Record<string, unknown>, msg: string) => {
    const now = Date.now();
    if ((last.get(key) ?? 0) + ms > now) return;
    last.set(key, now);
    logger.error(obj, msg);
  };
}

/**
 * Starts the workers in-process (the worker process, bin/dev.ts and the tests call this).
 * Registers the schedulers of the started queues with upsertJobScheduler before it resolves;
 * calling it again (a restart, a second process) updates them in place, never duplicates them.
 * @throws UnknownQueuesError before opening any connection when `queues` names an unknown queue
 */
export async function startWorkers(opts: StartWorkersOptions): Promise<WorkerHandle> {
  const names = resolveQueues(opts.queues);
  const registry = opts.registry ?? defaultRegistry;
  const prefix = opts.prefix ?? QUEUE_PREFIX;
  const logger = opts.logger;
  const logError = throttledLogger(logger);
  const producers = createQueues(opts.redisUrl, { prefix }); // processors that enqueue (onu-poll sweep)
  configureJobDeps({ knex: opts.knex, logger, appKey: opts.appKey, clock: opts.clock, queues: producers });

  const runnable = names.filter((n) => registry[n]);
  const skipped = names.filter((n) => !registry[n]);
  for (const n of skipped) logger.warn({ queue: n }, `no processor registered for queue ${n}; skipped`);

  const connection = new Redis(opts.redisUrl, workerRedisOptions());
  connection.on('error', (err) => logError('connection', { err: err.message }, 'worker redis connection error'));

  const workers = new Map<QueueName, Worker>();
  for (const name of runnable) {
    const reg = registry[name]!;
    const worker = new Worker(name, reg.processor, {
      connection,
      prefix,
      concurrency: reg.concurrency ?? 1,
      removeOnComplete: DEFAULT_JOB_OPTIONS.removeOnComplete as KeepJobs,
      removeOnFail: DEFAULT_JOB_OPTIONS.removeOnFail as KeepJobs,
    });
    worker.on('error', (err) => logError(`worker:${name}`, { queue: name, err: err.message }, 'worker error'));
    worker.on('failed', (job, err) =>
      logger.warn({ queue: name, job_id: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed'),
    );
    worker.on('completed', (job) =>
      logger.info({ queue: name, job_id: job.id, result: summary(job.returnvalue) }, 'job completed'),
    );
    workers.set(name, worker);
  }

  // Schedulers: one Queue per scheduled queue on the same connection, kept until close().
  const schedulerQueues: Queue[] = [];
  for (const name of runnable) {
    const def = registry[name]!.scheduler;
    if (!def) continue;
    const queue = new Queue(name, { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
    queue.on('error', (err) => logError(`queue:${name}`, { queue: name, err: err.message }, 'scheduler queue error'));
    schedulerQueues.push(queue);
    await queue.upsertJobScheduler(def.id, def.repeat, def.template);
    logger.info({ queue: name, scheduler: def.id, repeat: def.repeat }, 'job scheduler registered');
  }
  logger.info({ queues: runnable, skipped, prefix }, 'workers started');

  let closing: Promise<void> | null = null;
  const graceMs = opts.shutdownGraceMs ?? 20_000;
  return {
    workers,
    skipped,
    close() {
      closing ??= (async () => {
        const timer = setTimeout(() => {
          logger.warn({ grace_ms: graceMs }, 'jobs still running after the grace period; signalling them to stop');
          for (const w of workers.values()) w.cancelAllJobs('worker shutdown');
        }, graceMs);
        timer.unref();
        await Promise.allSettled([...workers.values()].map((w) => w.close()));
        clearTimeout(timer);
        await Promise.allSettled([...schedulerQueues.map((q) => q.close()), producers.close()]);
        await connection.quit().catch(() => connection.disconnect());
        logger.info('workers stopped');
      })();
      return closing;
    },
  };
}

/** A job's return value for the log line: the summary's numbers only, never job data. */
function summary(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value ?? null;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'number' || typeof v === 'string'));
}

/**
 * The `worker` process (`npm run worker`, Procfile `worker`): configuration from lib/config.ts
 * (loadServerConfig; `env` defaults to the process's), WORKER_QUEUES checked, then startWorkers.
 * Started through lib/process.ts runService like the web and mail processes: SIGTERM/SIGINT close
 * the workers (running jobs finish within the grace period) and the pool, then exit 0; a bad
 * configuration (missing variable, unknown WORKER_QUEUES name) exits 1 with a message naming it.
 * @returns close(): closes the workers, then the database pool
 * @throws ConfigError / UnknownQueuesError naming the bad variable or queue
 */
export async function startWorkerProcess(env?: NodeJS.ProcessEnv): Promise<{ close(): Promise<void> }> {
  const config = loadServerConfig(env);
  resolveQueues(config.workerQueues);
  const logger = createLogger(config.logLevel);
  const knex = createKnex(config.databaseUrl);
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
  const handle = await startWorkers({
    redisUrl: config.redisUrl,
    knex,
    appKey: config.appKey,
    queues: config.workerQueues,
    logger,
    shutdownGraceMs: config.shutdownGraceMs,
  });
  return {
    async close() {
      logger.info('shutting down');
      await handle.close();
      await knex.destroy();
    },
  };
}

if (isMainModule(import.meta.url)) runService(() => startWorkerProcess());
