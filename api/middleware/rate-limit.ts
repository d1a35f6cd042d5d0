import { createHash } from 'node:crypto';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { insuredRedisLimiter } from '../../lib/limiter.js';
import { RateLimited } from '../errors.js';
import type { AppContext } from '../context.js';

/**
 * The outcome of consuming one point: allowed, refused (limit reached), or both the Redis store and
 * its in-memory stand-in failed (not expected: the memory limiter does not fail).
 */
export type RateDecision =
  | { kind: 'allowed'; res: RateLimiterRes }
  | { kind: 'refused'; res: RateLimiterRes }
  | { kind: 'unavailable'; error: unknown };

/**
 * Per-token rate limit (DESIGN.md §6: 600 requests a minute), Redis-backed so that it holds across
 * every web process. authenticate() (api/middleware/auth.ts) starts `consume` together with the
 * token lookup, so the Redis round trip and the database round trip overlap, and applies the
 * decision only once the token is verified.
 *
 * The bucket is keyed by a SHA-256 of the presented token, not by the token id in it: the id is
 * not verified when the Redis call starts, and a forged token carrying a real token's id (with a
 * valid checksum but a wrong secret) must never spend the real token's budget. A verified token
 * maps to exactly one bucket, so the limit is still per token. Buckets of tokens that fail
 * authentication are deleted (`discard`), so garbage tokens do not pile up keys in Redis.
 *
 * When Redis fails or freezes (bounded by the connection's command timeout, lib/redis.ts), an
 * in-memory limiter with the same limit counts instead (lib/limiter.ts insuredRedisLimiter): the
 * limit then holds per process, it never switches off (issue 7 item 2).
 */
export interface TokenRateLimiter {
  /** Consumes one point for the presented token; never rejects (store errors become 'unavailable'). */
  consume(token: string): Promise<RateDecision>;
  /**
   * Applies a decision to a request of a verified token: sets X-RateLimit-Limit, -Remaining and
   * -Reset (epoch seconds); on 'unavailable' (no store at all) logs a warning and lets the request through.
   * @throws RateLimited (429 RATE_LIMITED with Retry-After) when refused
   */
  apply(ctx: AppContext, decision: RateDecision): void;
  /** Deletes the bucket of a token that failed authentication (fire and forget). */
  discard(token: string): void;
}

/**
 * The bucket name of a presented token (a SHA-256 of it, base64url): never the token, and never
 * the token_hash stored in the database.
 */
export function rateLimitBucket(token: string): string {
  return createHash('sha256').update('rate-limit:').update(token).digest('base64url');
}

/**
 * Builds the limiter.
 * @param redis connection used for the counters
 * @param opts points per window and window length in seconds; keyPrefix for isolation (tests)
 * @param onFallback called when the in-memory limiter answers (at most every 30 s), e.g. a warning log
 */
export function tokenRateLimit(
  redis: Redis,
  opts: { points: number; durationSeconds: number; keyPrefix?: string },
  onFallback?: () => void,
): TokenRateLimiter {
  const limiter = insuredRedisLimiter(
    redis,
    { points: opts.points, durationSeconds: opts.durationSeconds, keyPrefix: opts.keyPrefix ?? 'rl:token' },
    onFallback,
  );
  const reset = (res: RateLimiterRes) => String(Math.ceil((Date.now() + res.msBeforeNext) / 1000));
  return {
    consume(token) {
      return limiter.consume(rateLimitBucket(token), 1).then(
        (res): RateDecision => ({ kind: 'allowed', res }),
        (e: unknown): RateDecision =>
          e instanceof RateLimiterRes ? { kind: 'refused', res: e } : { kind: 'unavailable', error: e },
      );
    },
    apply(ctx, decision) {
      if (decision.kind === 'unavailable') {
        // neither Redis nor memory answered: let the request through rather than fail every call; log it
        ctx.deps.logger.warn({ err: decision.error }, 'rate limiter unavailable');
        return;
      }
      const { res } = decision;
      if (decision.kind === 'refused') {
        throw new RateLimited(Math.max(1, Math.ceil(res.msBeforeNext / 1000)), {
          'X-RateLimit-Limit': String(opts.points),
          'X-RateLimit-Remaining': '0',
          'X-RateLimit-Reset': reset(res),
        });
      }
      ctx.set('X-RateLimit-Limit', String(opts.points));
      ctx.set('X-RateLimit-Remaining', String(Math.max(0, res.remainingPoints)));
      ctx.set('X-RateLimit-Reset', reset(res));
    },
    discard(token) {
      limiter.delete(rateLimitBucket(token)).catch(() => {
        /* the key expires with its window anyway */
      });
    },
  };
}
