import type { Redis } from 'ioredis';
import { limiterKeys, WABOT_KEY_PREFIX } from './keys.js';

/**
 * The per-account send limiter (issue 10 item 3; DESIGN.md §6 "chat bot limits": both limits hold
 * across all worker processes). One Lua script on the account's keys (one hash tag) reads Redis
 * `TIME` (one clock for every process) and grants a send only if fewer than `maxPerMinute` grants
 * lie in the last 60 s AND the last grant is at least `delaySeconds` ago; a grant records "now".
 * Otherwise it returns how long to wait and records nothing. 0 means no cap / no delay.
 *
 * The script keeps the newest max(N, 1) grant times (µs) in a list, newest first: the N-th newest
 * grant decides the window (a grant at g leaves the window at g + 60 s), the newest the delay. So
 * for any grants i and i-N: t_i - t_{i-N} >= 60 s, and t_i - t_{i-1} >= delay. A denied caller waits
 * the returned time (a delayed job; no busy wait) and asks again: several callers may wake for one
 * slot and only one gets it.
 *
 * WABOT_TIME_SCALE (tests, benchmark) divides the window and the delays: 50 makes a minute 1.2 s.
 */

/**
 * KEYS[1] grants list, KEYS[2] grant log stream. ARGV[1] N (0 = no cap), ARGV[2] delay µs,
 * ARGV[3] window µs, ARGV[4] log length (0 = no log), ARGV[5] log tag.
 * Returns {1, now µs} for a grant, {0, wait µs} otherwise.
 */
const LIMITER_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n = tonumber(ARGV[1])
local delay = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local wait = 0
if delay > 0 then
  local last = redis.call('LINDEX', KEYS[1], 0)
  if last then
    local w = tonumber(last) + delay - now
    if w > wait then wait = w end
  end
end
if n > 0 then
  local nth = redis.call('LINDEX', KEYS[1], n - 1)
  if nth then
    local w = tonumber(nth) + window - now
    if w > wait then wait = w end
  end
end
if wait > 0 then return { 0, wait } end
local stamp = string.format('%d', now)
redis.call('LPUSH', KEYS[1], stamp)
redis.call('LTRIM', KEYS[1], 0, math.max(n, 1) - 1)
redis.call('PEXPIRE', KEYS[1], math.ceil(math.max(window, delay) / 1000) + 1000)
local logLen = tonumber(ARGV[4])
if logLen > 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', logLen, '*', 't', stamp, 'm', ARGV[5])
end
return { 1, now }
`;

type LimiterRedis = Redis & {
  wabotLimit?: (k1: string, k2: string, ...args: string[]) => Promise<[number, number]>;
};

function withScript(redis: Redis): Required<Pick<LimiterRedis, 'wabotLimit'>> {
  const r = redis as LimiterRedis;
  if (!r.wabotLimit) redis.defineCommand('wabotLimit', { numberOfKeys: 2, lua: LIMITER_SCRIPT });
  return r as Required<Pick<LimiterRedis, 'wabotLimit'>>;
}

/** The limits of one account (SendAccount's). */
export interface AccountLimits {
  /** grants in any 60 s window; 0 = no cap */
  maxPerMinute: number;
  /** seconds between two grants; 0 = no delay */
  delaySeconds: number;
}

/** Options of acquireSendSlot. */
export interface LimiterOptions {
  /** divides the 60 s window and the delays (WABOT_TIME_SCALE); default 1 */
  timeScale?: number;
  /** key prefix (tests, benchmark); default `wabot` */
  prefix?: string;
  /** keep a grant log of about this many entries per account (0 = none, the default) */
  grantLog?: number;
  /** stored with the grant in the log (e.g. the message id) */
  tag?: string;
}

/** What acquireSendSlot answers: a grant at `at` (ms since the epoch, Redis clock) or a wait. */
export type SlotAnswer = { granted: true; atUs: number } | { granted: false; waitMs: number };

/**
 * Asks for one send slot of an account.
 * @param redis any ioredis client
 * @param tenantId the account's tenant
 * @param accountId the account id (`[A-Za-z0-9_-]{1,80}`)
 * @param limits the account's cap and delay (0 = none)
 * @returns a grant (recorded) or the wait in ms (>= 1; nothing recorded)
 * @throws the Redis client's error when Redis does not answer
 */
export async function acquireSendSlot(
  redis: Redis,
  tenantId: number,
  accountId: string,
  limits: AccountLimits,
  opts: LimiterOptions = {},
): Promise<SlotAnswer> {
  const scale = opts.timeScale ?? 1;
  const [grants, log] = limiterKeys(tenantId, accountId, opts.prefix ?? WABOT_KEY_PREFIX);
  const n = Math.max(0, Math.trunc(limits.maxPerMinute));
  const delayUs = Math.round((Math.max(0, limits.delaySeconds) * 1e6) / scale);
  const windowUs = Math.round(60e6 / scale);
  const [ok, value] = await withScript(redis).wabotLimit(
    grants,
    log,
    String(n),
    String(delayUs),
    String(windowUs),
    String(Math.max(0, Math.trunc(opts.grantLog ?? 0))),
    opts.tag ?? '',
  );
  if (Number(ok) === 1) return { granted: true, atUs: Number(value) };
  return { granted: false, waitMs: Math.max(1, Math.ceil(Number(value) / 1000)) };
}

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
  const [, log] = limiterKeys(tenantId, accountId, prefix);
  const entries = await redis.xrange(log, '-', '+');
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
