import type { Config } from '../../lib/config.js';
import type { Logger } from '../../lib/logger.js';
import type { DbBounds } from '../../db/knex.js';
import type { RedisBounds } from '../../lib/redis.js';
import type { ServerLimits } from './server-limits.js';

/** How often the request-path Redis client may log a connection error, in ms. */
export const REDIS_ERROR_LOG_MS = 10_000;

/** The fault and abuse bounds of a request-serving process (web, mail), from lib/config.ts. */
export interface ServiceBounds {
  /** PostgreSQL bounds (set `logger` to send knex's warnings to the service's log). */
  db: DbBounds;
  redis: RedisBounds;
  /** How long a request waits for Redis to take a job, in ms. */
  enqueueTimeoutMs: number;
  http: ServerLimits;
  /** An ioredis 'error' listener that logs at most one warning per REDIS_ERROR_LOG_MS (a dead Redis retries often). */
  redisErrorLog(logger: Logger): (err: Error) => void;
}

/**
 * Maps the configuration to the bounds both services apply (issue 7 items 2, 3, 6): PostgreSQL
 * (statement, connect, pool acquire), Redis (command, connect), enqueue, and the HTTP server's
 * timeouts and per-IP connection cap.
 * @param config the validated configuration
 */
export function serviceBounds(config: Pick<Config, 'faults' | 'abuse'>): ServiceBounds {
  const f = config.faults;
  const a = config.abuse;
  return {
    db: {
      queryTimeoutMs: f.dbQueryTimeoutMs,
      connectTimeoutMs: f.dbConnectTimeoutMs,
      acquireTimeoutMs: f.dbAcquireTimeoutMs,
    },
    redis: { commandTimeoutMs: f.redisCommandTimeoutMs, connectTimeoutMs: f.redisConnectTimeoutMs },
    enqueueTimeoutMs: f.enqueueTimeoutMs,
    http: {
      requestTimeoutMs: a.httpRequestTimeoutMs,
      headersTimeoutMs: a.httpHeadersTimeoutMs,
      keepAliveTimeoutMs: a.httpKeepAliveTimeoutMs,
      maxConnectionsPerIp: a.maxConnectionsPerIp,
    },
    redisErrorLog(logger) {
      let last = 0;
      return (err) => {
        const now = Date.now();
        if (now - last < REDIS_ERROR_LOG_MS) return;
        last = now;
        logger.warn({ err: err.message }, 'redis error');
      };
    },
  };
}
