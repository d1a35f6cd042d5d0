import type { Redis } from 'ioredis';
import { limiterKeys, WABOT_KEY_PREFIX } from './keys.js';

/**
 * The per-account send limiter (issue 10 item 3; DESIGN.md §6 "chat bot limits": both limits hold
 * across all worker processes). One Lua script on the account's keys (one hash tag) reads Redis
 * `TIME` (one clock for every process) and grants a send only if fewer than `maxPerMinute` sends
 * lie in the last 60 s AND the last send is at least `delaySeconds` ago; a grant records "now".
 * Otherwise it returns how long to wait and records nothing. 0 means no cap / no delay.
 *
 * Paced at the gateway, not only in the log (decision, docs/decisions.md "Issue 10", "The pace
 * at the gateway"): a request reaches the provider some time after its grant (a busy worker, a
 * slow connection), so grants spaced exactly can arrive closer together. A grant made with a lease
 * (`leaseMs`) is therefore a send under way until completeSendSlot records when the provider
 * answered (which is after the request arrived there): while it is under way it counts as sent
 * "now" (it is in the window, and no delayed account grants another), and once finished its time
 * is the answer's. So for any two arrivals at the gateway, the later one was granted at least the
 * delay after the earlier one's answer, and no window holds more than N arrivals. A lease that ends
 * without completion (the worker died mid-send) counts as a send finished at its end. A grant
 * without a lease is finished at once (the old rule: spaced by grant times).
 *
 * The waiting room (peekSendSlot, a second script on the same keys' tag): a message that cannot be
 * granted now is ranked by its first denial and sleeps until its projected slot (the account's
 * ideal schedule, rank slots on), so each slot wakes about one message instead of every waiting
 * message of the account. It is a hint only: grants never read it, a message that wakes before its
 * slot asks again, and a stale member (its job gone) is dropped after a few sleeps.
 *
 * WABOT_TIME_SCALE (tests, benchmark) divides the window and the delays: 50 makes a minute 1.2 s.
 */

/**
 * Lua, shared: `now` (µs, Redis TIME); settle(done, flight) turns ended leases into sends finished
 * at the lease end; waitBefore(done, flight, n, delay, window) is the wait (µs, 0 = now) before the
 * next grant, a send under way counting as finished now.
 */
const SHARED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local function settle(done, flight)
  local ended = redis.call('ZRANGEBYSCORE', flight, '-inf', now, 'WITHSCORES')
  for i = 1, #ended, 2 do
    redis.call('ZADD', done, ended[i + 1], ended[i])
    redis.call('ZREM', flight, ended[i])
  end
end
local function waitBefore(done, flight, n, delay, window)
  local active = redis.call('ZCARD', flight)
  local wait = 0
  if delay > 0 then
    if active > 0 then
      wait = delay
    else
      local last = redis.call('ZREVRANGE', done, 0, 0, 'WITHSCORES')
      if last[2] then
        local w = tonumber(last[2]) + delay - now
        if w > wait then wait = w end
      end
    end
  end
  if n > 0 then
    if active >= n then
      if window > wait then wait = window end
    else
      local k = n - 1 - active
      local nth = redis.call('ZREVRANGE', done, k, k, 'WITHSCORES')
      if nth[2] then
        local w = tonumber(nth[2]) + window - now
        if w > wait then wait = w end
      end
    end
  end
  return wait
end
`;

/**
 * The limiter. KEYS: done, flight, log, waiting, seen. ARGV[1] N (0 = no cap), ARGV[2] delay µs,
 * ARGV[3] window µs, ARGV[4] log length (0 = no log), ARGV[5] tag, ARGV[6] lease µs (0 = finished at
 * once). Returns {1, now µs} for a grant (recorded as `<tag>:<now>`; the tag leaves the waiting
 * room), or {0, wait µs} with nothing written but ended leases settled.
 */
const LIMITER_SCRIPT = `${SHARED}
local n = tonumber(ARGV[1])
local delay = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local lease = tonumber(ARGV[6])
settle(KEYS[1], KEYS[2])
local wait = waitBefore(KEYS[1], KEYS[2], n, delay, window)
if wait > 0 then return { 0, wait } end
local stamp = string.format('%d', now)
local member = ARGV[5] .. ':' .. stamp
if lease > 0 then
  redis.call('ZADD', KEYS[2], now + lease, member)
else
  redis.call('ZADD', KEYS[1], now, member)
end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(math.max(n, 1) + 1))
local ttl = math.ceil(math.max(window, delay, lease) / 1000) + 1000
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
local logLen = tonumber(ARGV[4])
if logLen > 0 then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', logLen, '*', 't', stamp, 'm', ARGV[5])
end
if ARGV[5] ~= '' then
  redis.call('ZREM', KEYS[4], ARGV[5])
  redis.call('ZREM', KEYS[5], ARGV[5])
end
return { 1, now }
`;

/**
 * The end of a send under way. KEYS: done, flight. ARGV[1] member, ARGV[2] `1` the request may have
 * reached the provider / `0` it cannot have, ARGV[3] N, ARGV[4] ttl ms. Returns 1 when the lease was
 * still open.
 */
const COMPLETE_SCRIPT = `${SHARED}
local open = redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(math.max(tonumber(ARGV[3]), 1) + 1))
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
else
  redis.call('ZREM', KEYS[1], ARGV[1])
end
return open
`;

/**
 * The peek and the waiting room (a wake-up hint; the grant decision never reads it). KEYS: done,
 * flight, waiting (tag -> first denial µs), seen (tag -> last denial µs). ARGV[1..3] as the
 * limiter, ARGV[4] tag, ARGV[5] stale µs. Returns {0, 0} when a grant is possible now (nothing
 * written but ended leases settled), else registers the tag, drops members not seen for `stale`,
 * and returns {wait µs, rank}: rank = members registered before it, wait = until its own projected
 * slot, the slot it gets if each member before it takes its slot on time (the account's ideal
 * schedule from its recent sends, a send under way counting as finished now; at most
 * MAX_PROJECTED ranks are projected, later ones get the last projected slot).
 */
/** Ranks beyond this get the last projected slot (they wake early and ask again). */
const MAX_PROJECTED = 5000;

const PEEK_SCRIPT = `${SHARED}
local n = tonumber(ARGV[1])
local delay = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
settle(KEYS[1], KEYS[2])
local wait = waitBefore(KEYS[1], KEYS[2], n, delay, window)
if wait <= 0 then return { 0, 0 } end
local stale = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[5]), 'LIMIT', 0, 100)
for _, m in ipairs(stale) do
  redis.call('ZREM', KEYS[3], m)
  redis.call('ZREM', KEYS[4], m)
end
redis.call('ZADD', KEYS[3], 'NX', now, ARGV[4])
redis.call('ZADD', KEYS[4], now, ARGV[4])
local ttl = math.ceil(tonumber(ARGV[5]) / 1000) + 1000
redis.call('PEXPIRE', KEYS[3], ttl)
redis.call('PEXPIRE', KEYS[4], ttl)
local rank = redis.call('ZRANK', KEYS[3], ARGV[4])
-- the projection: the account's recent sends in a ring (oldest first), then rank + 1 ideal slots
local size = math.max(n, 1)
local buf, count, pos = {}, 0, 0
local function push(v)
  buf[pos] = v
  pos = (pos + 1) % size
  if count < size then count = count + 1 end
end
local active = math.min(redis.call('ZCARD', KEYS[2]), size)
if size - active > 0 then
  local d = redis.call('ZREVRANGE', KEYS[1], 0, size - active - 1, 'WITHSCORES')
  for i = #d, 2, -2 do push(tonumber(d[i])) end
end
for i = 1, active do push(now) end
local slot = now
for k = 0, math.min(rank, ${MAX_PROJECTED}) do
  slot = now
  if count > 0 and delay > 0 then slot = math.max(slot, buf[(pos - 1) % size] + delay) end
  if n > 0 and count >= n then slot = math.max(slot, buf[pos % size] + window) end
  push(slot)
end
return { math.max(slot - now, wait), rank }
`;

type Script = (...keysThenArgs: string[]) => Promise<[number, number] | number>;
type LimiterRedis = Redis & { wabotLimit?: Script; wabotPeek?: Script; wabotComplete?: Script };

function withScripts(redis: Redis): Required<Pick<LimiterRedis, 'wabotLimit' | 'wabotPeek' | 'wabotComplete'>> {
  const r = redis as LimiterRedis;
  if (!r.wabotLimit) redis.defineCommand('wabotLimit', { numberOfKeys: 5, lua: LIMITER_SCRIPT });
  if (!r.wabotPeek) redis.defineCommand('wabotPeek', { numberOfKeys: 4, lua: PEEK_SCRIPT });
  if (!r.wabotComplete) redis.defineCommand('wabotComplete', { numberOfKeys: 2, lua: COMPLETE_SCRIPT });
  return r as Required<Pick<LimiterRedis, 'wabotLimit' | 'wabotPeek' | 'wabotComplete'>>;
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
  /**
   * > 0: the grant is a send under way for at most this many ms (real time, not scaled) until
   * completeSendSlot; 0 (default): the send counts as finished at its grant.
   */
  leaseMs?: number;
}

/** What acquireSendSlot answers: a grant at `atUs` (µs since the epoch, Redis clock) or a wait. */
export type SlotAnswer = { granted: true; atUs: number } | { granted: false; waitMs: number };

/**
 * Asks for one send slot of an account (a grant also takes `opts.tag` out of the waiting room).
 * @param redis any ioredis client
 * @param tenantId the account's tenant
 * @param accountId the account id (`[A-Za-z0-9_-]{1,80}`)
 * @param limits the account's cap and delay (0 = none)
 * @returns a grant (recorded; with `opts.leaseMs`, end it with completeSendSlot) or the wait in ms
 *   (>= 1; nothing recorded)
 * @throws the Redis client's error when Redis does not answer
 */
export async function acquireSendSlot(
  redis: Redis,
  tenantId: number,
  accountId: string,
  limits: AccountLimits,
  opts: LimiterOptions = {},
): Promise<SlotAnswer> {
  const k = limiterKeys(tenantId, accountId, opts.prefix ?? WABOT_KEY_PREFIX);
  const [ok, value] = (await withScripts(redis).wabotLimit(
    k.done,
    k.flight,
    k.log,
    k.waiting,
    k.seen,
    ...limitArgs(limits, opts.timeScale ?? 1),
    String(Math.max(0, Math.trunc(opts.grantLog ?? 0))),
    opts.tag ?? '',
    String(Math.max(0, Math.round((opts.leaseMs ?? 0) * 1000))),
  )) as [number, number];
  if (Number(ok) === 1) return { granted: true, atUs: Number(value) };
  return { granted: false, waitMs: Math.max(1, Math.ceil(Number(value) / 1000)) };
}

/**
 * Ends a send under way (a grant made with `leaseMs`): `reached` true records it as sent when this
 * is called (after the provider answered, or gave up on); false (the request cannot have reached
 * the provider: refused, DNS, connect failure) forgets it.
 * @param grant the grant's `atUs` and the tag it was asked with
 * @returns true when the lease was still open (false: it had ended and counted as sent at its end)
 * @throws the Redis client's error when Redis does not answer (the lease then ends by itself)
 */
export async function completeSendSlot(
  redis: Redis,
  tenantId: number,
  accountId: string,
  limits: AccountLimits,
  grant: { atUs: number; tag?: string },
  reached: boolean,
  opts: Pick<LimiterOptions, 'prefix' | 'timeScale'> = {},
): Promise<boolean> {
  const k = limiterKeys(tenantId, accountId, opts.prefix ?? WABOT_KEY_PREFIX);
  const [n, delayUs, windowUs] = limitArgs(limits, opts.timeScale ?? 1);
  const ttlMs = Math.ceil(Math.max(Number(delayUs), Number(windowUs)) / 1000) + 1000;
  const open = await withScripts(redis).wabotComplete(
    k.done,
    k.flight,
    `${grant.tag ?? ''}:${grant.atUs}`,
    reached ? '1' : '0',
    n,
    String(ttlMs),
  );
  return Number(open) === 1;
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
  const k = limiterKeys(tenantId, accountId, opts.prefix ?? WABOT_KEY_PREFIX);
  const [wait, rank] = (await withScripts(redis).wabotPeek(
    k.done,
    k.flight,
    k.waiting,
    k.seen,
    ...limitArgs(limits, opts.timeScale ?? 1),
    opts.tag,
    String(Math.round(opts.staleMs * 1000)),
  )) as [number, number];
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
  const k = limiterKeys(tenantId, accountId, prefix);
  await redis.zrem(k.waiting, tag);
  await redis.zrem(k.seen, tag);
}

/**
 * How long a denied message sleeps before asking again, in ms: until its projected slot (the
 * peek's wait), but at most twice the window plus the delay, so that it is seen in the waiting room
 * well within waitingStaleMs. Without the room every waiting message of an account would wake for
 * every slot.
 */
export function wakeDelayMs(limits: AccountLimits, timeScale: number, waitMs: number): number {
  return Math.ceil(Math.min(waitMs, maxSleepMs(limits, timeScale)));
}

/** How long a waiting-room member may stay without asking again, in ms (2 longest sleeps + 5 s). */
export function waitingStaleMs(limits: AccountLimits, timeScale: number): number {
  return Math.ceil(2 * maxSleepMs(limits, timeScale) + 5000);
}

/** The longest sleep of a waiting message: 2 × (window + delay), scaled, in ms. */
function maxSleepMs(limits: AccountLimits, timeScale: number): number {
  return (2 * (60_000 + Math.max(0, limits.delaySeconds) * 1000)) / timeScale;
}
