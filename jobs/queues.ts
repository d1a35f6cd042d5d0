import { Queue, type ConnectionOptions, type DefaultJobOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';

/**
 * Queue names (kebab-case nouns, DESIGN.md §4) and the producer factory. Every queue uses the
 * hash-tagged prefix so BullMQ runs unchanged on Redis Cluster. Importing this file opens nothing.
 */
export const QUEUE_PREFIX = '{isp}';

export const QUEUE_NAMES = ['invoice-overdue', 'ticket-sla', 'mailbox-create'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** Retention and retry defaults for every queue: failed jobs kept a week, completed ones trimmed. */
export const DEFAULT_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { age: 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** Producer side of the queues (the API and the CLI enqueue through this). */
export interface Queues {
  /** The Queue for a name (created on first use). */
  get(name: QueueName): Queue;
  /** All queues created so far (bull-board lists them). */
  all(): Queue[];
  /** Closes the queues and the connection it owns. */
  close(): Promise<void>;
  readonly prefix: string;
}

/**
 * Creates the producer factory.
 * @param redisUrl redis:// URL
 * @param opts.prefix queue key prefix (tests pass a unique one)
 * @param opts.offlineQueue false (default) makes adds fail fast when Redis is down (-> 503)
 */
export function createQueues(redisUrl: string, opts: { prefix?: string; offlineQueue?: boolean } = {}): Queues {
  const prefix = opts.prefix ?? QUEUE_PREFIX;
  let conn: Redis | null = null;
  const queues = new Map<QueueName, Queue>();
  const connection = (): ConnectionOptions => {
    conn ??= new Redis(redisUrl, producerRedisOptions(opts.offlineQueue ?? false));
    conn.on('error', () => { /* reported by the failing call */ });
    return conn;
  };
  return {
    prefix,
    get(name) {
      let q = queues.get(name);
      if (!q) {
        q = new Queue(name, { connection: connection(), prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
        q.on('error', () => { /* surfaced to the caller of add() */ });
        queues.set(name, q);
      }
      return q;
    },
    all: () => QUEUE_NAMES.map((n) => (queues.get(n) ?? null)).filter((q): q is Queue => q !== null),
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      if (conn) await conn.quit().catch(() => conn?.disconnect());
    },
  };
}

/** ioredis options for producers: fail fast instead of buffering while Redis is down. */
export function producerRedisOptions(offlineQueue: boolean): RedisOptions {
  return { enableOfflineQueue: offlineQueue, maxRetriesPerRequest: 1, lazyConnect: false };
}

/** ioredis options for workers (BullMQ requires maxRetriesPerRequest: null). */
export function workerRedisOptions(): RedisOptions {
  return { maxRetriesPerRequest: null };
}
