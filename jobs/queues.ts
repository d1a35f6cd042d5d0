import {
  Queue,
  type ConnectionOptions,
  type DefaultJobOptions,
  type Job,
  type JobSchedulerTemplateOptions,
  type JobsOptions,
  type RepeatOptions,
} from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { boundedRedisOptions, DEFAULT_REDIS_BOUNDS, pingWithin, type RedisBounds } from '../lib/redis.js';

/**
 * Queue names (kebab-case nouns, DESIGN.md §4) and the producer factory. Every queue uses the
 * hash-tagged prefix so BullMQ runs unchanged on Redis Cluster. Importing this file opens nothing.
 */
export const QUEUE_PREFIX = '{isp}';

/** Every queue of the platform (WORKER_QUEUES picks from these; bull-board lists them). */
export const QUEUE_NAMES = [
  'invoice-overdue',
  'ticket-sla',
  'mailbox-create',
  'event-dispatch',
  'onu-poll',
  'billing-cycle',
  'customer-network',
  'imap-sync',
  'email-send',
  'wabot-send',
  'wabot-status',
  'wabot-webhook-register',
  'apk-retention',
  'apk-build',
  'supplier-import',
  'provisioning-check',
  'tenant-db',
  'provisioning',
  'customer-mailbox',
  'tenant-db-id-blocks',
] as const;
/** One of QUEUE_NAMES. */
export type QueueName = (typeof QUEUE_NAMES)[number];

/** Retention and retry defaults for every queue: failed jobs kept a week, completed ones trimmed. */
export const DEFAULT_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * The reason a worker process gives when it aborts its running jobs at shutdown
 * (`worker.cancelAllJobs(SHUTDOWN_ABORT_REASON)`; the processor's `signal.reason`). A processor that
 * sees it stops without recording a failure: the worker moves the job back to its queue.
 */
export const SHUTDOWN_ABORT_REASON = 'worker shutdown';

/** Producer side of the queues (the API and the CLI enqueue through this). */
export interface Queues {
  /** The Queue for a name (created on first use). */
  get(name: QueueName): Queue;
  /** All queues created so far (bull-board lists them). */
  all(): Queue[];
  /** Closes the queues and the connection it owns. */
  close(): Promise<void>;
  /**
   * Pings the producer connection (bull-board checks Redis before it calls it).
   * @returns true when Redis answered within timeoutMs (ms); never rejects
   */
  ping(timeoutMs: number): Promise<boolean>;
  readonly prefix: string;
  /** How long a request waits for Redis to take a job, in ms (addOrUnavailable's bound). */
  readonly enqueueTimeoutMs: number;
}

/**
 * Creates the producer factory.
 * @param redisUrl redis:// URL
 * @param opts.prefix queue key prefix (tests pass a unique one)
 * @param opts.offlineQueue false (default) makes adds fail fast when Redis is down (-> 503)
 * @param opts.bounds command and connect bounds of the producer connection (default DEFAULT_REDIS_BOUNDS)
 * @param opts.enqueueTimeoutMs bound of a request's enqueue, in ms (default ENQUEUE_TIMEOUT_MS)
 */
export function createQueues(
  redisUrl: string,
  opts: { prefix?: string; offlineQueue?: boolean; bounds?: RedisBounds; enqueueTimeoutMs?: number } = {},
): Queues {
  const prefix = opts.prefix ?? QUEUE_PREFIX;
  let conn: Redis | null = null;
  const queues = new Map<QueueName, Queue>();
  const connection = (): ConnectionOptions => {
    if (!conn) {
      conn = new Redis(redisUrl, producerRedisOptions(opts.offlineQueue ?? false, opts.bounds));
      conn.on('error', () => {
        /* reported by the failing call */
      });
    }
    return conn;
  };
  return {
    prefix,
    enqueueTimeoutMs: opts.enqueueTimeoutMs ?? ENQUEUE_TIMEOUT_MS,
    ping: (timeoutMs) => pingWithin(connection() as Redis, timeoutMs),
    get(name) {
      let q = queues.get(name);
      if (!q) {
        q = new Queue(name, { connection: connection(), prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
        q.on('error', () => {
          /* surfaced to the caller of add() */
        });
        queues.set(name, q);
      }
      return q;
    },
    all: () => QUEUE_NAMES.map((n) => queues.get(n) ?? null).filter((q): q is Queue => q !== null),
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      if (conn) await conn.quit().catch(() => conn?.disconnect());
    },
  };
}

/**
 * Redis (the job queue) could not take a job in time. Thrown by addOrUnavailable; the HTTP error
 * table (api/http/error-table.ts) answers it with 503 QUEUE_UNAVAILABLE and Retry-After. Its own
 * class here so that jobs/ never imports the HTTP layer (DESIGN.md §3 "arrows point down").
 */
export class QueueUnavailableError extends Error {
  /** @param queue the queue name; @param cause the failed or timed-out add */
  constructor(
    readonly queue: string,
    cause?: unknown,
  ) {
    super(`The job queue ${queue} is unavailable.`, { cause });
    this.name = 'QueueUnavailableError';
  }
}

/** ioredis states of a connection that was lost (reconnecting in the background, or given up). */
const LOST = new Set(['reconnecting', 'end', 'close']);

/** Default bound of addOrUnavailable, in milliseconds (ENQUEUE_TIMEOUT_MS in lib/config.ts). */
export const ENQUEUE_TIMEOUT_MS = 1000;

/**
 * Adds a job for a request handler, failing fast when Redis cannot take it (DESIGN.md §4
 * QUEUE_UNAVAILABLE). enableOfflineQueue: false alone is not enough: BullMQ's `queue.add()` first
 * waits for its connection to become ready, which never happens while Redis is unreachable, so the
 * add is raced against a timer; and when the producer connection is known to be lost (ioredis is
 * reconnecting) the add is not even tried.
 * A timed-out add is abandoned, not cancelled: should Redis come back within the retry window it
 * may still land. Use a fixed job id (safeJobId) so that the client's retry dedupes it, and in the
 * "write the record, enqueue, undo the record if enqueue fails" pattern treat a timeout like a failure.
 * @param queue a producer Queue (Queues.get(name))
 * @param name job name
 * @param data job data: ids only, never a secret (DESIGN.md §3)
 * @param opts BullMQ job options (jobId, attempts, ...)
 * @param timeoutMs how long to wait for Redis, in ms (default ENQUEUE_TIMEOUT_MS, 1000)
 * @returns the added job (an existing job when the id deduplicated it)
 * @throws QueueUnavailableError (503 QUEUE_UNAVAILABLE over HTTP, the cause kept) when the add fails or does not
 *   finish within timeoutMs
 */
export async function addOrUnavailable<D>(
  queue: Queue,
  name: string,
  data: D,
  opts: JobsOptions = {},
  timeoutMs = ENQUEUE_TIMEOUT_MS,
): Promise<Job<D>> {
  const conn = queue.opts.connection;
  if (conn instanceof Redis && LOST.has(conn.status)) {
    // the connection was lost and ioredis is reconnecting: BullMQ would wait for it, the caller should not
    throw new QueueUnavailableError(queue.name, new Error(`the Redis connection is ${conn.status}`));
  }
  let timer: NodeJS.Timeout | undefined;
  const adding = queue.add(name, data, opts) as Promise<Job<D>>;
  adding.catch(() => {
    /* a late failure of an abandoned add has nobody to report to */
  });
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`queue ${queue.name}: Redis did not take the job within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([adding, timeout]);
  } catch (err) {
    throw new QueueUnavailableError(queue.name, err);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * ioredis options for producers: fail fast instead of buffering while Redis is down, and bound every
 * command (lib/redis.ts boundedRedisOptions), so a frozen Redis never holds a request.
 * @param offlineQueue true buffers commands while disconnected (scripts that prefer waiting)
 * @param bounds command and connect bounds in ms
 */
export function producerRedisOptions(offlineQueue: boolean, bounds: RedisBounds = DEFAULT_REDIS_BOUNDS): RedisOptions {
  return { ...boundedRedisOptions(bounds), enableOfflineQueue: offlineQueue, lazyConnect: false };
}

/** ioredis options for workers (BullMQ requires maxRetriesPerRequest: null). */
export function workerRedisOptions(): RedisOptions {
  return { maxRetriesPerRequest: null };
}

/** True when `name` is one of QUEUE_NAMES. */
export function isQueueName(name: string): name is QueueName {
  return (QUEUE_NAMES as readonly string[]).includes(name);
}

/**
 * The names in `names` that are not queues (WORKER_QUEUES validation).
 * @returns the unknown names, in the given order (empty when all are known)
 */
export function unknownQueueNames(names: readonly string[]): string[] {
  return names.filter((n) => !isQueueName(n));
}

/**
 * Builds a fixed job id from parts (DESIGN.md §3: ids dedupe enqueues; BullMQ reserves ':' and
 * treats all-digit ids as its own counters).
 * @param parts pieces joined with '-', e.g. ('dns', 42) -> "dns-42"
 * @throws Error when the result contains ':' or is all digits (a programming error)
 */
export function safeJobId(...parts: (string | number)[]): string {
  const id = parts.map(String).join('-');
  if (!id || id.includes(':') || /^\d+$/.test(id)) throw new Error(`Invalid job id "${id}": no ':' and not all digits`);
  return id;
}

/**
 * The part of a BullMQ Job a processor uses. Real Jobs satisfy it; tests pass a fake with spies.
 * updateProgress takes a percentage (0..100) or an object; log appends one line shown in bull-board.
 */
export interface JobLike<D> {
  id?: string;
  name: string;
  data: D;
  updateProgress(progress: number | object): Promise<void>;
  log(line: string): Promise<number>;
}

/**
 * A job scheduler (a cron) the worker registers with `queue.upsertJobScheduler` when it starts
 * (DESIGN.md §1). Upserting by `id` is idempotent: restarting workers never duplicates it.
 */
export interface JobSchedulerDef {
  /** Scheduler id (stable across deploys; changing the repeat options updates it in place). */
  id: string;
  /** Either `pattern` (cron, with tz) or `every` (ms). Never BullMQ 5's `repeat` job option. */
  repeat: Omit<RepeatOptions, 'key'>;
  /** Name, data and options of the jobs the scheduler produces. */
  template: { name: string; data?: Record<string, unknown>; opts?: JobSchedulerTemplateOptions };
}
