import type { Next } from 'koa';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { insuredRedisLimiter } from '../../../lib/limiter.js';
import { MailApiError } from '../errors.js';
import type { MailContext } from '../context.js';

/** Default per-key limit (issue 3 item 7): 120 requests a minute. */
export const DEFAULT_MAIL_RATE_LIMIT = { points: 120, durationSeconds: 60 } as const;

/**
 * Per-API-key rate limit (issue 3 item 7), Redis-backed so it holds across every `mail` process.
 * Runs after authentication, keyed by the key id. Sets X-RateLimit-Limit, X-RateLimit-Remaining and
 * X-RateLimit-Reset (epoch seconds) on every answer; answers 429 rate_limited with Retry-After
 * (seconds) when the window is used up. When Redis fails or freezes, an in-memory limiter with the
 * same limit counts instead (lib/limiter.ts; per process, logged at most every 30 s); only if that
 * failed too would the request go through (logged): the limit must not take the API down.
 * @param redis connection for the counters (key `<keyPrefix>:<key id>`)
 * @param opts points per window, window length in seconds, key prefix (default `rl:mailkey`)
 * @param onFallback called when the in-memory limiter answers (at most every 30 s)
 */
export function keyRateLimit(
  redis: Redis,
  opts: { points: number; durationSeconds: number; keyPrefix?: string },
  onFallback?: () => void,
) {
  const limiter = insuredRedisLimiter(
    redis,
    { points: opts.points, durationSeconds: opts.durationSeconds, keyPrefix: opts.keyPrefix ?? 'rl:mailkey' },
    onFallback,
  );
  const headers = (res: RateLimiterRes): Record<string, string> => ({
    'X-RateLimit-Limit': String(opts.points),
    'X-RateLimit-Remaining': String(Math.max(0, res.remainingPoints)),
    'X-RateLimit-Reset': String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)),
  });
  return async (ctx: MailContext, next: Next): Promise<void> => {
    const key = String(ctx.state.key?.id ?? ctx.ip);
    try {
      const res = await limiter.consume(key, 1);
      ctx.set(headers(res));
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        const retry = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
        throw new MailApiError('rate_limited', undefined, { headers: { ...headers(e), 'Retry-After': String(retry) } });
      }
      ctx.deps.logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'mail rate limiter unavailable');
    }
    return next();
  };
}
