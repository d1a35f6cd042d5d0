import type { Next } from 'koa';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { RateLimited } from '../errors.js';
import type { AppContext } from '../context.js';

/**
 * Per-token rate limit (DESIGN.md §6: 600 requests a minute), Redis-backed so it holds across
 * every web process. Sets X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (epoch
 * seconds); answers 429 RATE_LIMITED with Retry-After when exhausted. Keyed by token id.
 * @param redis connection used for the counters
 * @param opts points per window and window length in seconds; keyPrefix for isolation (tests)
 */
export function tokenRateLimit(redis: Redis, opts: { points: number; durationSeconds: number; keyPrefix?: string }) {
  const limiter = new RateLimiterRedis({
    storeClient: redis, points: opts.points, duration: opts.durationSeconds, keyPrefix: opts.keyPrefix ?? 'rl:token',
    // an unreachable Redis must not take the API down: fall back to a per-process limit
    insuranceLimiter: undefined,
  });
  const headers = (ctx: AppContext, res: RateLimiterRes) => {
    ctx.set('X-RateLimit-Limit', String(opts.points));
    ctx.set('X-RateLimit-Remaining', String(Math.max(0, res.remainingPoints)));
    ctx.set('X-RateLimit-Reset', String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)));
  };
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const key = String(ctx.state.auth?.tokenId ?? ctx.ip);
    try {
      const res = await limiter.consume(key, 1);
      headers(ctx, res);
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        headers(ctx, e);
        const retry = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
        throw new RateLimited(retry, {
          'X-RateLimit-Limit': String(opts.points), 'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset': String(Math.ceil((Date.now() + e.msBeforeNext) / 1000)),
        });
      }
      // Redis error: let the request through rather than fail every call; log it.
      ctx.deps.logger.warn({ err: e }, 'rate limiter unavailable');
    }
    return next();
  };
}
