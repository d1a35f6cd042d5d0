import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** Login throttling settings: failures allowed per IP + e-mail within the window (seconds). */
export interface LoginThrottleOptions {
  points: number;
  durationSeconds: number;
  keyPrefix?: string;
}

/**
 * Login throttling shared by every sign-in of the platform (POST /api/auth/login, the bull-board
 * sign-in, the Mailbox API dashboard), after rate-limiter-flexible's "login endpoint protection"
 * recipe: failures are counted per IP + e-mail (`points` per window) and per IP (20 times that);
 * once a counter is used up every attempt is refused until the window ends, even with the right
 * password. A success clears the IP + e-mail counter. Counters live in Redis so the limit holds
 * across processes; if Redis fails, an in-process limiter stands in. Keys hold a SHA-256 of the
 * e-mail, never the e-mail itself.
 */
export class LoginThrottle {
  private readonly byPair: RateLimiterRedis;
  private readonly byIp: RateLimiterRedis;
  /**
   * @param redis connection for the counters
   * @param opts points (failures per IP + e-mail per window), durationSeconds, keyPrefix
   */
  constructor(
    redis: Redis,
    readonly opts: LoginThrottleOptions,
  ) {
    const prefix = opts.keyPrefix ?? 'rl:login';
    const mk = (points: number, p: string) =>
      new RateLimiterRedis({
        storeClient: redis,
        points,
        duration: opts.durationSeconds,
        keyPrefix: `${prefix}:${p}`,
        insuranceLimiter: new RateLimiterMemory({
          points,
          duration: opts.durationSeconds,
          keyPrefix: `${prefix}:${p}:mem`,
        }),
      });
    this.byPair = mk(opts.points, 'pair');
    this.byIp = mk(opts.points * 20, 'ip');
  }

  private static pair(ip: string, email: string): string {
    return createHash('sha256').update(`${ip}\n${email.trim().toLowerCase()}`).digest('hex');
  }

  /** @returns seconds to wait when blocked, or 0 when an attempt may be made */
  async blockedFor(ip: string, email: string): Promise<number> {
    const [p, i] = await Promise.all([this.byPair.get(LoginThrottle.pair(ip, email)), this.byIp.get(ip)]);
    let wait = 0;
    if (p && p.consumedPoints >= this.opts.points) wait = Math.max(wait, p.msBeforeNext);
    if (i && i.consumedPoints >= this.opts.points * 20) wait = Math.max(wait, i.msBeforeNext);
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : 0;
  }

  /** Counts a failed attempt. */
  async failed(ip: string, email: string): Promise<void> {
    const swallow = (e: unknown) => {
      if (!(e instanceof RateLimiterRes)) throw e;
    };
    await Promise.all([
      this.byPair.consume(LoginThrottle.pair(ip, email)).catch(swallow),
      this.byIp.consume(ip).catch(swallow),
    ]);
  }

  /** Clears the IP + e-mail counter after a successful sign-in. */
  async succeeded(ip: string, email: string): Promise<void> {
    await this.byPair.delete(LoginThrottle.pair(ip, email));
  }
}
