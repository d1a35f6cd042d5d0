import { closeTenantPools } from '../db/tenant-pools.js';
import { Job, Queue, Worker, type KeepJobs } from 'bullmq';
import { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { isMainModule, runService, type RunningService } from '../lib/process.js';
import { ConfigError, loadServerConfig } from '../lib/config.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { createKnex } from '../db/knex.js';
import {
  createQueues,
  DEFAULT_JOB_OPTIONS,
  QUEUE_NAMES,
  QUEUE_PREFIX,
  SHUTDOWN_ABORT_REASON,
  unknownQueueNames,
  workerRedisOptions,
  type QueueName,
} from '../jobs/queues.js';
import { configureJobDeps } from '../jobs/deps.js';
import { useChatBotSubscribers } from '../jobs/wabot/subscribers.js';
import type { Clock } from '../lib/clock.js';
import { createStorage, type Storage } from '../lib/storage/index.js';
import type { ChatSendConfigSource } from '../jobs/wabot/send-config.js';
import { loadChatSendConfig } from '../jobs/wabot/load-config.js';
import { registry as defaultRegistry, type QueueRegistration } from './registry.js';
import { defaultApkSigningSource } from '../jobs/apk/default-signing.js';
import {
  FAILURE_HOOKS_WAIT_MS,
  guard,
  quitWithin,
  returnToQueue,
  SandboxedWorker,
  settleHooks,
  trackSandboxed,
  type ShutdownState,
} from './shutdown.js';
import { apkBuildOptionsFrom } from '../jobs/apk/options.js';
import { watchChildStarts } from './child-start.js';

// a sandboxed child that dies while it starts fails its job instead of hanging it (BullMQ 6.7)
watchChildStarts();

/** The preload of every sandboxed child (workers/sandboxed/early-signals.mjs), as a file URL. */
const EARLY_SIGNALS = new URL('./sandboxed/early-signals.mjs', import.meta.url).href;

/**
 * BullMQ `workerForkOptions` of a sandboxed (file) processor: this process's Node flags (tsx)
 * after the early-signals preload, then the registry entry's own flags (e.g. the heap cap) and its
 * environment when it names one.
 * @param fork the registry entry's `fork` (absent: flags only)
 */
export function sandboxedForkOptions(fork: QueueRegistration['fork']): { execArgv: string[]; env?: NodeJS.ProcessEnv } {
  return {
    ...fork,
    execArgv: ['--import', EARLY_SIGNALS, ...process.execArgv, ...(fork?.execArgv ?? [])],
  };
}

/**
 * The `worker` process (DESIGN.md §1, §3): a BullMQ Worker per queue picked by WORKER_QUEUES
 * (comma list, default all), the queues' job schedulers upserted at start (idempotent; no
 * `repeat` job option, removed in BullMQ 6), error listeners on every worker and connection (a
 * Redis outage is logged and waited out, never a crash), retention from DEFAULT_JOB_OPTIONS, and a
 * graceful shutdown on SIGTERM/SIGINT: running jobs finish or go back to their queue within the grace
 * period (see WorkerHandle.close). A stalled job (its worker died: kill -9, OOM, lost host) is logged
 * with queue and id and gets a line in its bull-board log; it runs again (processors are idempotent,
 * DESIGN.md §3).
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
  /** The file storage driver for processors that store files (imap-sync attachments). */
  storage?: Storage;
  /** Queue names to run; undefined or empty = every queue of QUEUE_NAMES. */
  queues?: string[];
  /** Queue key prefix (default QUEUE_PREFIX; tests pass a unique one). */
  prefix?: string;
  logger: Logger;
  /** Queue -> processor table (default workers/registry.ts). */
  registry?: Partial<Record<QueueName, QueueRegistration>>;
  /**
   * The grace period of close(), in ms (SHUTDOWN_GRACE_MS; default 25000, under Heroku's 30 s).
   * Running jobs get all of it to finish; at `graceMs - abortMarginMs(graceMs)` their AbortSignal
   * fires and a job that then stops (throws) goes back to its queue without using an attempt; at
   * `graceMs` the jobs still running are moved back to their queue (or, if that fails, left to the
   * stalled check once their lock expires) and close() resolves.
   */
  shutdownGraceMs?: number;
  /** BullMQ lockDuration in ms (WORKER_LOCK_DURATION_MS; default BullMQ's 30000). */
  lockDurationMs?: number;
  /** BullMQ stalledInterval in ms (WORKER_STALLED_INTERVAL_MS; default BullMQ's 30000). */
  stalledIntervalMs?: number;
  /**
   * Where wabot-send loads a tenant's chat configuration (default: loadChatSendConfig from the
   * tenant's saved settings, secrets opened with appKey; tests pass in-memory ones).
   */
  chatConfig?: ChatSendConfigSource;
  /** wabot-send's knobs for tests and the benchmark (JobDeps.chatSend). */
  chatSend?: import('../jobs/deps.js').JobDeps['chatSend'];
  /** apk-build run in-process (tests): the keystore source (JobDeps.apkSigning). */
  apkSigning?: import('../jobs/deps.js').JobDeps['apkSigning'];
  /** apk-build run in-process (tests): its settings (JobDeps.apkBuild). */
  apkBuild?: import('../jobs/deps.js').JobDeps['apkBuild'];
  /** Provisioning runs' credentials source, DNS and panel factories (tests: in-memory fakes; issue 13). */
  provisioning?: import('../jobs/deps.js').JobDeps['provisioning'];
  /** Per-queue concurrency replacing the registry's (APK_BUILD_CONCURRENCY for apk-build). */
  concurrency?: Partial<Record<QueueName, number>>;
}

/**
 * How long before the end of the grace period running jobs are signalled to stop, in ms: a fifth
 * of it, at most 5 s (20 s into the default 25 s), so that a job honouring its AbortSignal still has
 * time to reach a safe point and be moved back to its queue before close() gives up on it.
 */
export function abortMarginMs(graceMs: number): number {
  return Math.min(5_000, Math.floor(graceMs / 5));
}

/** Running workers. */
export interface WorkerHandle {
  /** Queue name -> its Worker (only the queues that have a processor). */
  workers: Map<QueueName, Worker>;
  /** Queues skipped because no processor is registered for them yet. */
  skipped: QueueName[];
  /**
   * Closes the workers, the scheduler queues and the connection within the grace period: waits for
   * running jobs, signals them to stop shortly before the end, moves the ones still running back to
   * their queue at the end (see StartWorkersOptions.shutdownGraceMs). Takes no new job. Idempotent.
   */
  close(): Promise<void>;
  /** The jobs running in this process now, as `<queue>/<job id>` (bull-board's names). */
  running(): string[];
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
  const connection = new Redis(opts.redisUrl, workerRedisOptions());
  connection.on('error', (err) => logError('connection', { err: err.message }, 'worker redis connection error'));
  configureJobDeps({
    knex: opts.knex,
    logger,
    appKey: opts.appKey,
    clock: opts.clock,
    queues: producers,
    storage: opts.storage,
    redis: connection,
    chatConfig: opts.chatConfig ?? ((tenantId) => loadChatSendConfig(opts.knex, opts.appKey, tenantId)),
    chatSend: opts.chatSend,
    apkSigning: opts.apkSigning,
    apkBuild: opts.apkBuild,
    provisioning: opts.provisioning,
  });

  const runnable = names.filter((n) => registry[n]);
  // issue 11 items 2, 4: the chat bot's auto-reply and group notices subscribe while this worker dispatches events
  const releaseSubscribers = runnable.includes('event-dispatch') ? useChatBotSubscribers() : () => undefined;
  const skipped = names.filter((n) => !registry[n]);
  for (const n of skipped) logger.warn({ queue: n }, `no processor registered for queue ${n}; skipped`);

  const workers = new Map<QueueName, Worker>();
  const shutdown: ShutdownState = { aborting: false, running: new Map() };
  /** Failure hooks (QueueRegistration.onFailed) still running. */
  const failureHooks = new Set<Promise<void>>();
  for (const name of runnable) {
    const reg = registry[name]!;
    const processor =
      typeof reg.processor === 'function' ? guard(name, reg.processor, shutdown, logger) : reg.processor;
    const workerOpts = {
      connection,
      prefix,
      concurrency: opts.concurrency?.[name] ?? reg.concurrency ?? 1,
      removeOnComplete: DEFAULT_JOB_OPTIONS.removeOnComplete as KeepJobs,
      removeOnFail: DEFAULT_JOB_OPTIONS.removeOnFail as KeepJobs,
      ...(opts.lockDurationMs ? { lockDuration: opts.lockDurationMs } : {}),
      ...(opts.stalledIntervalMs ? { stalledInterval: opts.stalledIntervalMs } : {}),
    };
    const worker =
      typeof processor === 'function'
        ? new Worker(name, processor, workerOpts)
        : new SandboxedWorker(
            name,
            processor,
            { ...workerOpts, workerForkOptions: sandboxedForkOptions(reg.fork) },
            shutdown,
            logger,
          );
    worker.on('error', (err) => logError(`worker:${name}`, { queue: name, err: err.message }, 'worker error'));
    worker.on('failed', (job, err) => {
      logger.warn({ queue: name, job_id: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed');
      if (!job || !reg.onFailed) return;
      // close() waits for the hooks still running (a failure at a stop must still be recorded)
      const hook: Promise<void> = reg
        .onFailed(job, err)
        .catch((e: Error) =>
          logger.error({ queue: name, job_id: job.id, err: e.message }, 'the queue failure hook failed'),
        )
        .finally(() => failureHooks.delete(hook));
      failureHooks.add(hook);
    });
    worker.on('completed', (job) =>
      logger.info({ queue: name, job_id: job.id, result: summary(job.returnvalue) }, 'job completed'),
    );
    if (typeof reg.processor !== 'function') trackSandboxed(name, worker, shutdown);
    worker.on('stalled', (jobId) => {
      logger.warn(
        { queue: name, job_id: jobId },
        'job stalled: its worker stopped renewing the lock (killed?); moved back to wait to run again',
      );
      const line = `${new Date().toISOString()} stalled: the worker running this job stopped; it runs again`;
      Job.addJobLog(worker, jobId, line).catch(() => {
        /* the job may be gone already; the log line above has it */
      });
    });
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
  const graceMs = opts.shutdownGraceMs ?? 25_000;
  return {
    workers,
    skipped,
    running: () => [...shutdown.running.keys()],
    close() {
      closing ??= (async () => {
        const abortTimer = setTimeout(
          () => {
            if (!shutdown.running.size) return;
            shutdown.aborting = true;
            logger.warn(
              { jobs: [...shutdown.running.keys()], grace_ms: graceMs },
              'jobs still running near the end of the grace period: signalling them to stop',
            );
            for (const w of workers.values()) w.cancelAllJobs(SHUTDOWN_ABORT_REASON);
          },
          graceMs - abortMarginMs(graceMs),
        );
        // queues whose jobs cannot be resumed (a Gradle build) are stopped at once, not at the end of the grace
        for (const [name, w] of workers) if (registry[name]?.abortOnShutdown) w.cancelAllJobs(SHUTDOWN_ABORT_REASON);
        let graceTimer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<'grace over'>((resolve) => {
          graceTimer = setTimeout(() => resolve('grace over'), graceMs);
        });
        const closed = Promise.allSettled([...workers.values()].map((w) => w.close())).then(() => 'closed' as const);
        const outcome = await Promise.race([closed, graceOver]);
        clearTimeout(abortTimer);
        clearTimeout(graceTimer);
        if (outcome === 'grace over') await returnToQueue(shutdown, logger, graceMs);
        await settleHooks(failureHooks, FAILURE_HOOKS_WAIT_MS, logger);
        releaseSubscribers();
        await Promise.allSettled([...schedulerQueues.map((q) => q.close()), producers.close()]);
        if (outcome === 'grace over') connection.disconnect();
        else await quitWithin(connection, 1000);
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
 * the workers (running jobs finish or go back to their queue within SHUTDOWN_GRACE_MS) and the pool,
 * then exit 0; a bad configuration (missing variable, unknown WORKER_QUEUES name) exits 1 with a
 * message naming it.
 * @returns close() (closes the workers, then the database pool), the grace period and the logger
 * @throws ConfigError / UnknownQueuesError naming the bad variable or queue
 */
export async function startWorkerProcess(env?: NodeJS.ProcessEnv): Promise<RunningService> {
  const config = loadServerConfig(env);
  resolveQueues(config.workerQueues);
  const logger = createLogger(config.logLevel);
  const knex = createKnex(config.databaseUrl);
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
  const handle = await startWorkers({
    redisUrl: config.redisUrl,
    knex,
    appKey: config.appKey,
    storage: createStorage(config.storage),
    queues: config.workerQueues,
    logger,
    shutdownGraceMs: config.shutdownGraceMs,
    lockDurationMs: config.workerLockDurationMs,
    stalledIntervalMs: config.workerStalledIntervalMs,
    chatSend: { timeScale: config.wabotTimeScale },
    apkSigning: defaultApkSigningSource(knex, config.appKey),
    apkBuild: apkBuildOptionsFrom(config.apk, config.storage.driver === 'local' ? config.storage.root : undefined),
    concurrency: { 'apk-build': config.apk.concurrency },
  });
  return {
    graceMs: config.shutdownGraceMs,
    logger,
    async close() {
      logger.info({ running: handle.running() }, 'shutting down');
      await handle.close();
      await closeTenantPools();
      await knex.destroy();
    },
  };
}

if (isMainModule(import.meta.url)) runService(() => startWorkerProcess());
