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
 * (a delayed job; no busy wait) and asks again.
 *
 * The waiting room (peekSendSlot, a second script on the same keys' tag): a message that cannot be
 * granted now is ranked by its first denial, and sleeps the wait plus its rank times the account's
 * shortest spacing (wakeDelayMs), so one slot wakes about one message instead of every waiting
 * message of the account. It is a hint only: grants never read it, and a stale member (its job
 * gone) is dropped after a few sleeps.
 *
 * WABOT_TIME_SCALE (tests, benchmark) divides the window and the delays: 50 makes a minute 1.2 s.
 */

/** Lua: the wait before the next grant (µs, 0 = now) from the grants list KEYS[1]; reads only. */
const WAIT_FUNCTION = `
local function waitBefore(key, now, n, delay, window)
  local wait = 0
  if delay > 0 then
    local last = redis.call('LINDEX', key, 0)
    if last then
      local w = tonumber(last) + delay - now
      if w > wait then wait = w end
    end
  end
  if n > 0 then
    local nth = redis.call('LINDEX', key, n - 1)
    if nth then
      local w = tonumber(nth) + window - now
      if w > wait then wait = w end
    end
  end
  return wait
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
`;

/**
 * The limiter. KEYS[1] grants list, KEYS[2] grant log stream, KEYS[3] waiting room, KEYS[4] seen.
 * ARGV[1] N (0 = no cap), ARGV[2] delay µs, ARGV[3] window µs, ARGV[4] log length (0 = no log),
 * ARGV[5] tag. Returns {1, now µs} for a grant (recorded; the tag leaves the waiting room), or
 * {0, wait µs} with nothing written.
 */
const LIMITER_SCRIPT = `${WAIT_FUNCTION}
local n = tonumber(ARGV[1])
local delay = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local wait = waitBefore(KEYS[1], now, n, delay, window)
if wait > 0 then return { 0, wait } end
local stamp = string.format('%d', now)
redis.call('LPUSH', KEYS[1], stamp)
redis.call('LTRIM', KEYS[1], 0, math.max(n, 1) - 1)
redis.call('PEXPIRE', KEYS[1], math.ceil(math.max(window, delay) / 1000) + 1000)
local logLen = tonumber(ARGV[4])
if logLen > 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', logLen, '*', 't', stamp, 'm', ARGV[5])
end
if ARGV[5] ~= '' then
  redis.call('ZREM', KEYS[3], ARGV[5])
  redis.call('ZREM', KEYS[4], ARGV[5])
end
return { 1, now }
`;

/**
 * The peek and the waiting room (a wake-up hint; the grant decision never reads it). KEYS[1]
 * grants list, KEYS[2] waiting room (tag -> first denial µs), KEYS[3] seen (tag -> last denial µs).
 * ARGV[1..3] as the limiter, ARGV[4] tag, ARGV[5] stale µs. Returns {0, 0} when a grant is possible
 * now (nothing written), else registers the tag, drops members not seen for `stale`, and returns
 * {wait µs, rank} (rank: members registered before it).
 */
const PEEK_SCRIPT = `${WAIT_FUNCTION}
local wait = waitBefore(KEYS[1], now, tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
if wait <= 0 then return { 0, 0 } end
local stale = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[5]), 'LIMIT', 0, 100)
for _, m in ipairs(stale) do
  redis.call('ZREM', KEYS[2], m)
  redis.call('ZREM', KEYS[3], m)
end
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[4])
redis.call('ZADD', KEYS[3], now, ARGV[4])
local ttl = math.ceil(tonumber(ARGV[5]) / 1000) + 1000
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', KEYS[3], ttl)
return { wait, redis.call('ZRANK', KEYS[2], ARGV[4]) }
`;

type LimiterRedis = Redis & {
  wabotLimit?: (k1: string, k2: string, k3: string, k4: string, ...args: string[]) => Promise<[number, number]>;
  wabotPeek?: (k1: string, k2: string, k3: string, ...args: string[]) => Promise<[number, number]>;
};

function withScripts(redis: Redis): Required<Pick<LimiterRedis, 'wabotLimit' | 'wabotPeek'>> {
  const r = redis as LimiterRedis;
  if (!r.wabotLimit) redis.defineCommand('wabotLimit', { numberOfKeys: 4, lua: LIMITER_SCRIPT });
  if (!r.wabotPeek) redis.defineCommand('wabotPeek', { numberOfKeys: 3, lua: PEEK_SCRIPT });
  return r as Required<Pick<LimiterRedis, 'wabotLimit' | 'wabotPeek'>>;
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
 * Asks for one send slot of an account (a grant also takes `opts.tag` out of the waiting room).
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
  const [grants, log, waiting, seen] = limiterKeys(tenantId, accountId, opts.prefix ?? WABOT_KEY_PREFIX);
  const [ok, value] = await withScripts(redis).wabotLimit(
    grants,
    log,
    waiting,
    seen,
    ...limitArgs(limits, opts.timeScale ?? 1),
    String(Math.max(0, Math.trunc(opts.grantLog ?? 0))),
    opts.tag ?? '',
  );
  if (Number(ok) === 1) return { granted: true, atUs: Number(value) };
  return { granted: false, waitMs: Math.max(1, Math.ceil(Number(value) / 1000)) };
}

/** The limiter's ARGV[1..3]: N, delay µs, window µs (scaled). */
function limitArgs(limits: AccountLimits, scale: number): [string, string, string] {
  const n = Math.max(0, Math.trunc(limits.maxPerMinute));
  const delayUs = Math.round((Math.max(0, limits.delaySeconds) * 1e6) / scale);
  return [String(n), String(delayUs), String(Math.round(60e6 / scale))];
}

/** What peekSendSlot answers: `waitMs` 0 = a grant is possible now; else the wait and the rank. */
export interface PeekAnswer {
  waitMs: number;
  /** messages of the account that started waiting before this one (0 = first in line) */
  rank: number;
}

/**
 * Asks, without taking anything, whether the account could grant now; when not, puts `opts.tag`
 * (the message id) in the account's waiting room (first come, first ranked; members not seen for
 * longer than `staleMs` are dropped) and answers the wait and its rank there. The waiting room only
 * spreads wake-ups (wakeDelayMs): the grant decision never reads it.
 * @param staleMs how long a waiting member stays without asking again (see wakeDelayMs's cap)
 * @throws the Redis client's error when Redis does not answer
 */
export async function peekSendSlot(
  redis: Redis,
  tenantId: number,
  accountId: string,
  limits: AccountLimits,
  opts: LimiterOptions & { tag: string; staleMs: number },
): Promise<PeekAnswer> {
  const [grants, , waiting, seen] = limiterKeys(tenantId, accountId, opts.prefix ?? WABOT_KEY_PREFIX);
  const [wait, rank] = await withScripts(redis).wabotPeek(
    grants,
    waiting,
    seen,
    ...limitArgs(limits, opts.timeScale ?? 1),
    opts.tag,
    String(Math.round(opts.staleMs * 1000)),
  );
  return Number(wait) <= 0
    ? { waitMs: 0, rank: 0 }
    : { waitMs: Math.max(1, Math.ceil(Number(wait) / 1000)), rank: Number(rank) };
}

/**
 * Takes a message out of an account's waiting room (it failed or was skipped; a granted one leaves
 * by itself). Best effort: stale members are dropped anyway.
 */
export async function leaveWaitingRoom(
  redis: Redis,
  tenantId: number,
  accountId: string,
  tag: string,
  prefix = WABOT_KEY_PREFIX,
): Promise<void> {
  const [, , waiting, seen] = limiterKeys(tenantId, accountId, prefix);
  await redis.zrem(waiting, tag);
  await redis.zrem(seen, tag);
}

/**
 * How long a denied message sleeps before asking again, in ms: the wait until the next slot plus
 * `rank` times an interval that is never longer than the account's real one (the delay, or half the
 * window's average spacing 60 s / 2N), so a message wakes at or before its own slot (one that wakes
 * early asks again with a fresh rank), and at most the window plus the delay (it stays in the room).
 * Without the room every waiting message of an account would wake for every slot.
 */
export function wakeDelayMs(limits: AccountLimits, timeScale: number, waitMs: number, rank: number): number {
  const delayMs = (Math.max(0, limits.delaySeconds) * 1000) / timeScale;
  const windowMs = 60_000 / timeScale;
  const n = Math.max(0, Math.trunc(limits.maxPerMinute));
  const interval = Math.max(delayMs, n > 0 ? windowMs / (2 * n) : 0);
  return Math.ceil(Math.min(waitMs + rank * interval, Math.max(waitMs, windowMs + delayMs)));
}

/** How long a waiting-room member may stay without asking again, in ms (3 sleeps + 5 s). */
export function waitingStaleMs(limits: AccountLimits, timeScale: number): number {
  const delayMs = (Math.max(0, limits.delaySeconds) * 1000) / timeScale;
  return Math.ceil(3 * (60_000 / timeScale + delayMs) + 5000);
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
