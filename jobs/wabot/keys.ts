/**
 * Redis keys of the chat bot's send path (issue 10 item 3). Each key carries a hash tag, so the Lua
 * script that uses it runs on one Redis Cluster slot:
 * - routing: one hash per tenant, `{wabot:t<tenant>}:rr`;
 * - limiter: per account, `{wabot:t<tenant>:a<account>}:done` (recent sends by the time the
 *   provider answered), `...:flight` (sends under way, by lease end), `...:log` (the optional grant
 *   log stream) and the waiting room `...:wait` (message ids by first denial) and `...:seen` (by
 *   last denial).
 * Account ids are `[A-Za-z0-9_-]{1,80}` (issue 10 item 2), so they never contain `{`, `}` or `:`.
 */

/** Default key prefix; tests and the benchmark may pass their own. */
export const WABOT_KEY_PREFIX = 'wabot';

/** The routing state hash of a tenant. */
export function routingKey(tenantId: number, prefix = WABOT_KEY_PREFIX): string {
  return `{${prefix}:t${tenantId}}:rr`;
}

/** The limiter keys of one account, one hash tag. */
export interface LimiterKeys {
  /** sorted set: a finished send (`<tag>:<grant µs>`) -> when the provider answered, µs */
  done: string;
  /** sorted set: a send under way -> its lease end, µs */
  flight: string;
  /** stream: the grant log (tests, benchmark) */
  log: string;
  /** sorted set: the waiting room, message id -> first denial, µs */
  waiting: string;
  /** sorted set: message id -> last denial, µs */
  seen: string;
}

/** The limiter keys of one account. */
export function limiterKeys(tenantId: number, accountId: string, prefix = WABOT_KEY_PREFIX): LimiterKeys {
  const tag = `{${prefix}:t${tenantId}:a${accountId}}`;
  return {
    done: `${tag}:done`,
    flight: `${tag}:flight`,
    log: `${tag}:log`,
    waiting: `${tag}:wait`,
    seen: `${tag}:seen`,
  };
}
