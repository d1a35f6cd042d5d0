import type { Redis } from 'ioredis';
import { limiterKeys, WABOT_KEY_PREFIX } from './keys.js';

/**
 * Reading what the limiter did (issue 10, tests and the wabot-throttle benchmark): the optional
 * grant log the limiter script keeps (jobs/wabot/limiter.ts, `grantLog` > 0) and a checker of a
 * sequence of send times against an account's limits.
 */

/** One entry of an account's grant log. */
export interface GrantLogEntry {
  /** when the grant was made, µs since the epoch (Redis clock) */
  atUs: number;
  /** the tag given with it */
  tag: string;
}

/**
 * Reads an account's grant log (tests and the benchmark), oldest first.
 * @returns every entry still kept
 */
export async function readGrantLog(
  redis: Redis,
  tenantId: number,
  accountId: string,
  prefix = WABOT_KEY_PREFIX,
): Promise<GrantLogEntry[]> {
  const entries = await redis.xrange(limiterKeys(tenantId, accountId, prefix).log, '-', '+');
  return entries.map(([, fields]) => {
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i], fields[i + 1]);
    return { atUs: Number(f.get('t')), tag: f.get('m') ?? '' };
  });
}

/**
 * Checks a sequence of send times against an account's limits (tests, benchmark).
 * @param timesMs send times in ms, ascending (any clock)
 * @param limits the account's limits, already divided by the time scale: windowMs, delayMs
 * @param allowanceMs tolerated shortfall (0 for the grant log; 10 ms at the gateway)
 * @returns the violations, the largest count in any window and the smallest gap (Infinity for < 2)
 */
export function checkPace(
  timesMs: readonly number[],
  limits: { maxPerMinute: number; windowMs: number; delayMs: number },
  allowanceMs = 0,
): { violations: number; worstWindow: number; smallestGapMs: number } {
  let violations = 0;
  let smallestGapMs = Infinity;
  let worstWindow = timesMs.length ? 1 : 0;
  let start = 0;
  for (let i = 1; i < timesMs.length; i++) {
    const gap = timesMs[i] - timesMs[i - 1];
    smallestGapMs = Math.min(smallestGapMs, gap);
    if (limits.delayMs > 0 && gap < limits.delayMs - allowanceMs) violations += 1;
    const n = limits.maxPerMinute;
    if (n > 0 && i >= n && timesMs[i] - timesMs[i - n] < limits.windowMs - allowanceMs) violations += 1;
    // largest number of sends within one window [t, t + window), with the allowance
    while (timesMs[i] - timesMs[start] >= limits.windowMs - allowanceMs) start += 1;
    worstWindow = Math.max(worstWindow, i - start + 1);
  }
  return { violations, worstWindow, smallestGapMs };
}
