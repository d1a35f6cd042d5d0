import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

/** Settings of one limiter: `points` per window of `durationSeconds`, keys under `keyPrefix`. */
export interface LimiterOptions {
  points: number;
  durationSeconds: number;
  keyPrefix: string;
}

/** How often a limiter reports that it answers from memory, in ms (one report per limiter per period). */
export const FALLBACK_REPORT_MS = 30_000;

/**
 * The in-memory stand-in of a Redis limiter (rate-limiter-flexible's `insuranceLimiter`): the same
 * points and window, counted in this process only. Reports its use through `onUse` at most once per
 * FALLBACK_REPORT_MS, so a Redis outage gives one warning, not one per request.
 */
class ReportingMemoryLimiter extends RateLimiterMemory {
  private lastReport = 0;

  constructor(
    opts: LimiterOptions,
    private readonly onUse: () => void,
  ) {
    super({ points: opts.points, duration: opts.durationSeconds, keyPrefix: `${opts.keyPrefix}:mem` });
  }

  private used(): void {
    const now = Date.now();
    if (now - this.lastReport < FALLBACK_REPORT_MS) return;
    this.lastReport = now;
    this.onUse();
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>) {
    this.used();
    return super.consume(...args);
  }

  override get(...args: Parameters<RateLimiterMemory['get']>) {
    this.used();
    return super.get(...args);
  }

  override delete(...args: Parameters<RateLimiterMemory['delete']>) {
    this.used();
    return super.delete(...args);
  }

  override penalty(...args: Parameters<RateLimiterMemory['penalty']>) {
    this.used();
    return super.penalty(...args);
  }

  override reward(...args: Parameters<RateLimiterMemory['reward']>) {
    this.used();
    return super.reward(...args);
  }
}

/**
 * A Redis-backed limiter that never fails open (issue 7 item 2): when Redis errors, times out
 * (the client's command timeout, lib/redis.ts) or is not connected (`rejectIfRedisNotReady`, so
 * a reconnecting client costs no wait at all), the same call is answered by an in-memory limiter
 * with the same points and window. The memory counts start empty and hold for this process only:
 * while Redis is down the limit is per process instead of global, never off.
 * @param redis the counters' connection (a bounded one, lib/redis.ts)
 * @param opts points per window, window in seconds, key prefix
 * @param onFallback called when the memory limiter answers (at most once per FALLBACK_REPORT_MS), e.g. a warning log
 */
export function insuredRedisLimiter(
  redis: Redis,
  opts: LimiterOptions,
  onFallback: () => void = () => {},
): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    points: opts.points,
    duration: opts.durationSeconds,
    keyPrefix: opts.keyPrefix,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new ReportingMemoryLimiter(opts, onFallback),
  });
}
