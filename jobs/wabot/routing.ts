import type { Redis } from 'ioredis';
import type { ChatSendConfig, SendAccount } from './send-config.js';
import { routingKey, WABOT_KEY_PREFIX } from './keys.js';

/**
 * Routing of outbound chat messages over a tenant's enabled accounts (issue 10 item 3; spec
 * "Chat bot": "several active accounts take turns round-robin"): smooth weighted round-robin, the
 * algorithm of nginx's upstream module. Each account keeps a current weight; for every pick each
 * current weight grows by the account's weight, the largest wins (the first in configuration order
 * on a tie) and loses the sum of all weights. Weights 5, 1, 1 give a a b a c a a: the heavy account
 * never takes long runs, and over any cycle of sum(weights) picks each account gets exactly its
 * weight.
 *
 * The current weights live in one Redis hash per tenant and one Lua script reads and writes them
 * atomically, so every process (API requests, jobs, workers) shares one sequence. The hash is reset
 * when the pool changes (ChatSendConfig.poolVersion: the enabled accounts' ids and weights). Picks
 * are made when a message is enqueued; the account is stored on the row and never changed.
 */

/**
 * KEYS[1] the tenant's hash; ARGV[1] pool version; ARGV[2..] account id, weight pairs in order.
 * Fields: `v` the pool version, `w:<id>` an account's current weight. Returns the picked id.
 */
const SWRR_SCRIPT = `
local key = KEYS[1]
if redis.call('HGET', key, 'v') ~= ARGV[1] then
  redis.call('DEL', key)
end
local fields = {}
for i = 2, #ARGV, 2 do fields[#fields + 1] = 'w:' .. ARGV[i] end
local current = redis.call('HMGET', key, unpack(fields))
local total, best, bestWeight = 0, 0, nil
local updated = {}
for j = 1, #fields do
  local weight = tonumber(ARGV[2 * j + 1])
  local cw = tonumber(current[j] or '0') + weight
  total = total + weight
  updated[j] = cw
  if bestWeight == nil or cw > bestWeight then best, bestWeight = j, cw end
end
updated[best] = updated[best] - total
local args = { 'v', ARGV[1] }
for j = 1, #fields do
  args[#args + 1] = fields[j]
  args[#args + 1] = string.format('%d', updated[j])
end
redis.call('HSET', key, unpack(args))
redis.call('PEXPIRE', key, 2592000000)
return ARGV[2 * best]
`;

type RoutingRedis = Redis & {
  wabotSwrr?: (key: string, ...args: string[]) => Promise<string>;
};

/** Defines the script on a client once (ioredis EVALSHA with EVAL fallback). */
function withScript(redis: Redis): Required<Pick<RoutingRedis, 'wabotSwrr'>> {
  const r = redis as RoutingRedis;
  if (!r.wabotSwrr) redis.defineCommand('wabotSwrr', { numberOfKeys: 1, lua: SWRR_SCRIPT });
  return r as Required<Pick<RoutingRedis, 'wabotSwrr'>>;
}

/** The accounts routing may pick from: the enabled ones, in configuration order. */
export function routablePool(config: ChatSendConfig): SendAccount[] {
  return config.accounts.filter((a) => a.enabled);
}

/**
 * Picks the account for the next message of a tenant (smooth weighted round-robin, shared across
 * processes through Redis). A pool of one account is answered without Redis.
 * @param redis any ioredis client (the API's or the worker's)
 * @param config the tenant's configuration (its enabled accounts and poolVersion)
 * @param opts.prefix key prefix (tests, benchmark); default `wabot`
 * @returns the picked account, or null when no account is enabled
 * @throws the Redis client's error when Redis does not answer
 */
export async function pickAccount(
  redis: Redis,
  config: ChatSendConfig,
  opts: { prefix?: string } = {},
): Promise<SendAccount | null> {
  const pool = routablePool(config);
  if (pool.length <= 1) return pool[0] ?? null;
  const args = pool.flatMap((a) => [a.id, String(Math.max(1, Math.trunc(a.weight)))]);
  const id = await withScript(redis).wabotSwrr(
    routingKey(config.tenantId, opts.prefix ?? WABOT_KEY_PREFIX),
    config.poolVersion,
    ...args,
  );
  return pool.find((a) => a.id === id) ?? null;
}
