import { Redis, type RedisOptions } from 'ioredis';

/** Time bounds of a request-path Redis connection, in ms (lib/config.ts FaultLimits). */
export interface RedisBounds {
  /** One command (the socket may stay silent twice as long while commands wait, then it is replaced). */
  commandTimeoutMs: number;
  /** Opening the TCP connection. */
  connectTimeoutMs: number;
}

/** The bounds used when a caller gives none (the defaults of lib/config.ts). */
export const DEFAULT_REDIS_BOUNDS: RedisBounds = { commandTimeoutMs: 500, connectTimeoutMs: 1000 };

/**
 * ioredis options for connections used while a request waits (rate limits, login throttles,
 * producers, bull-board): nothing waits on Redis longer than the bounds (issue 7 item 2).
 * - `enableOfflineQueue: false`: while disconnected or reconnecting, a command fails at once
 *   instead of queueing (callers fall back to memory or answer 503);
 * - `commandTimeout`: a command that gets no answer (a frozen redis-server still accepts TCP) rejects;
 * - `socketTimeout` (twice the command timeout): a socket silent that long while commands wait is
 *   destroyed, so the client reconnects and the following commands fail at once instead of each
 *   waiting the timeout (twice, so that one slow answer under load does not drop the connection);
 * - `connectTimeout` bounds the TCP connect, `maxRetriesPerRequest: 1` the retries after a reconnect.
 * Never for BullMQ's blocking connections (Worker, QueueEvents): they need maxRetriesPerRequest null
 * and no command timeout (their XREAD/BZPOPMIN block for seconds on purpose).
 * @param bounds ms bounds (default DEFAULT_REDIS_BOUNDS)
 */
export function boundedRedisOptions(bounds: RedisBounds = DEFAULT_REDIS_BOUNDS): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: bounds.commandTimeoutMs,
    socketTimeout: 2 * bounds.commandTimeoutMs,
    connectTimeout: bounds.connectTimeoutMs,
  };
}

/**
 * Options that undo boundedRedisOptions on a `duplicate()` used for blocking commands (BullMQ
 * QueueEvents): no command or socket timeout, unlimited retries, offline queue on.
 */
export const BLOCKING_REDIS_OVERRIDES: RedisOptions = {
  commandTimeout: undefined,
  socketTimeout: undefined,
  maxRetriesPerRequest: null,
  enableOfflineQueue: true,
};

/**
 * A request-path Redis client with the bounds above. Connection errors are passed to `onError`
 * (never thrown: an 'error' event without a listener would crash the process).
 * @param url redis:// URL
 * @param bounds ms bounds
 * @param onError called with each connection error (e.g. a rate-limited warning log)
 */
export function createBoundedRedis(url: string, bounds: RedisBounds, onError: (err: Error) => void): Redis {
  const redis = new Redis(url, boundedRedisOptions(bounds));
  redis.on('error', onError);
  return redis;
}

/** ioredis states in which the client is still opening its first connection (a ping waits for it). */
const OPENING = new Set(['wait', 'connecting', 'connect']);

/**
 * Pings Redis within `timeoutMs`. A client still opening its connection (a lazily created one) is
 * waited for within the same bound; a client that lost its connection ('reconnecting', 'end')
 * answers false at once.
 * @returns true when PONG came back in time, false on any error or timeout (never rejects)
 */
export async function pingWithin(redis: Redis, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const ping = async (): Promise<boolean> => {
    if (OPENING.has(redis.status)) {
      if (redis.status === 'wait') redis.connect().catch(() => undefined);
      await new Promise<void>((resolve) => redis.once('ready', resolve));
    }
    if (redis.status !== 'ready') return false;
    return (await redis.ping()) === 'PONG';
  };
  try {
    return await Promise.race([ping().catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
