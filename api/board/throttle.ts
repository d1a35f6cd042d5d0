import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';

/**
 * Login throttling of the operator sign-in: at most `points` failed attempts per IP and e-mail per
 * `durationSeconds` (default 5 a minute), counted in Redis so the limit holds across web processes.
 * While the limit is exhausted every attempt is refused, a correct password included. A success
 * clears the counter. Keys hold a SHA-256 of IP and e-mail, never the e-mail itself.
 */
export interface LoginThrottle {
  /** Seconds until the next attempt is allowed, or 0 when allowed now. Throws when Redis fails. */
  retryAfter(ip: string, email: string): Promise<number>;
  /** Counts a failed attempt. */
  fail(ip: string, email: string): Promise<void>;
  /** Clears the counter after a successful sign-in. */
  reset(ip: string, email: string): Promise<void>;
}

/**
 * Creates the throttle.
 * @param redis the web process's Redis connection
 * @param opts points (failures allowed per window), durationSeconds, keyPrefix
 */
export function loginThrottle(redis: Redis, opts: { points?: number; durationSeconds?: number; keyPrefix?: string } = {}): LoginThrottle {
  const points = opts.points ?? 5;
  const limiter = new RateLimiterRedis({ storeClient: redis, points, duration: opts.durationSeconds ?? 60, keyPrefix: opts.keyPrefix ?? 'rl:board-login' });
  const key = (ip: string, email: string) => createHash('sha256').update(`${ip}\n${email.trim().toLowerCase()}`).digest('hex');
  return {
    async retryAfter(ip, email) {
      const res = await limiter.get(key(ip, email));
      if (!res || res.consumedPoints < points) return 0;
      return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    },
    async fail(ip, email) {
      // consume rejects (with a RateLimiterRes) once the points are used up: that is expected here.
      await limiter.consume(key(ip, email)).catch((e: unknown) => { if (e instanceof Error) throw e; });
    },
    async reset(ip, email) {
      await limiter.delete(key(ip, email));
    },
  };
}
