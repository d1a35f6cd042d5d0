import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { insuredRedisLimiter } from './limiter.js';

/** Default per-IP limit across all e-mails: failed sign-ins per IP per window (LOGIN_IP_LIMIT). */
export const DEFAULT_LOGIN_IP_LIMIT = { points: 20, durationSeconds: 900 } as const;

/** Login throttling settings. */
export interface LoginThrottleOptions {
  /** Failures allowed per IP + e-mail within durationSeconds. */
  points: number;
  durationSeconds: number;
  keyPrefix?: string;
  /**
   * Failures allowed per IP across all e-mails (password spraying, issue 7 item 6) within
   * ipDurationSeconds (default DEFAULT_LOGIN_IP_LIMIT: 20 per 15 minutes).
   */
  ipPoints?: number;
  ipDurationSeconds?: number;
  /** Called when Redis fails and the in-memory limiter answers (at most every 30 s), e.g. a warning log. */
  onFallback?: () => void;
}

/**
 * Login throttling shared by every sign-in of the platform (POST /api/auth/login, the bull-board
 * sign-in, the Mailbox API dashboard), after rate-limiter-flexible's "login endpoint protection"
 * recipe: failures are counted per IP + e-mail (`points` per window) and per IP across all e-mails
 * (`ipPoints` per `ipDurationSeconds`, against password spraying); once a counter is used up every
 * attempt is refused until its window ends, even with the right password. A success clears the
 * IP + e-mail counter only. Counters live in Redis so the limits hold across processes; when Redis
 * fails or freezes, an in-memory limiter with the same limits answers (lib/limiter.ts), so the
 * throttle never switches off. Keys hold a SHA-256 of the e-mail, never the e-mail itself.
 */
export class LoginThrottle {
  private readonly byPair: RateLimiterRedis;
  private readonly byIp: RateLimiterRedis;
  private readonly ipPoints: number;
  /**
   * @param redis connection for the counters (a bounded one, lib/redis.ts)
   * @param opts points and window per IP + e-mail, ipPoints and window per IP, keyPrefix, onFallback
   */
  constructor(
    redis: Redis,
    readonly opts: LoginThrottleOptions,
  ) {
    const prefix = opts.keyPrefix ?? 'rl:login';
    this.ipPoints = opts.ipPoints ?? DEFAULT_LOGIN_IP_LIMIT.points;
    const ipDuration = opts.ipDurationSeconds ?? DEFAULT_LOGIN_IP_LIMIT.durationSeconds;
    this.byPair = insuredRedisLimiter(
      redis,
      { points: opts.points, durationSeconds: opts.durationSeconds, keyPrefix: `${prefix}:pair` },
      opts.onFallback,
    );
    this.byIp = insuredRedisLimiter(
      redis,
      { points: this.ipPoints, durationSeconds: ipDuration, keyPrefix: `${prefix}:ip` },
      opts.onFallback,
    );
  }

  private static pair(ip: string, email: string): string {
    return createHash('sha256').update(`${ip}\n${email.trim().toLowerCase()}`).digest('hex');
  }

  /** @returns seconds to wait when blocked (the Retry-After), or 0 when an attempt may be made */
  async blockedFor(ip: string, email: string): Promise<number> {
    const [p, i] = await Promise.all([this.byPair.get(LoginThrottle.pair(ip, email)), this.byIp.get(ip)]);
    let wait = 0;
    if (p && p.consumedPoints >= this.opts.points) wait = Math.max(wait, p.msBeforeNext);
    if (i && i.consumedPoints >= this.ipPoints) wait = Math.max(wait, i.msBeforeNext);
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : 0;
  }

  /** Counts a failed attempt (for the IP + e-mail and for the IP). */
  async failed(ip: string, email: string): Promise<void> {
    const swallow = (e: unknown) => {
      if (!(e instanceof RateLimiterRes)) throw e;
    };
    await Promise.all([
      this.byPair.consume(LoginThrottle.pair(ip, email)).catch(swallow),
      this.byIp.consume(ip).catch(swallow),
    ]);
  }

  /** Clears the IP + e-mail counter after a successful sign-in (the IP counter stays). */
  async succeeded(ip: string, email: string): Promise<void> {
    await this.byPair.delete(LoginThrottle.pair(ip, email));
  }
}
