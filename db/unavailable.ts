/**
 * When PostgreSQL cannot serve a request (issue 7 item 3): frozen, restarting, in recovery, refusing
 * connections, or the pool has no connection to give. The HTTP error table (api/http/error-table.ts)
 * answers these with 503 DATABASE_UNAVAILABLE and Retry-After; nothing here knows HTTP.
 */

/**
 * A statement got no byte back from PostgreSQL within the bound: the connection was destroyed
 * (db/knex.ts watches each pooled socket), so the pool replaces it and no half-finished
 * transaction is ever handed to the next request.
 */
export class DatabaseTimeoutError extends Error {
  readonly code = 'DB_SILENT';
  /** @param ms the silence bound that was exceeded, in ms */
  constructor(readonly ms: number) {
    super(`PostgreSQL sent nothing for ${ms} ms while a statement was running; the connection was dropped`);
    this.name = 'DatabaseTimeoutError';
  }
}

/**
 * SQLSTATEs meaning "the server cannot serve this now", never "the request is wrong": class 08
 * (connection exception) is matched by prefix; 57P01 admin_shutdown (pg_terminate_backend, a fast
 * shutdown), 57P02 crash_shutdown (another backend crashed), 57P03 cannot_connect_now (starting up,
 * in recovery mode), 57014 query_canceled (our statement_timeout), 53300 too_many_connections,
 * 53400 configuration_limit_exceeded, 58000 system_error, 58030 io_error.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '53300', '53400', '58000', '58030']);

/**
 * Texts of node-postgres and knex errors that carry no code: a connection that died under a query,
 * a connect that timed out, a client that is no longer usable. knex prefixes a failed query's
 * message with its SQL and " - ", hence the alternative start.
 */
const UNAVAILABLE_MESSAGES = [
  /(^| - )Connection terminated/,
  /(^| - )timeout expired$/,
  /(^| - )Query read timeout$/,
  /(^| - )Client has encountered a connection error and is not queryable$/,
  /(^| - )Client was closed and is not queryable$/,
  /(^| - )Connection ended unexpectedly$/,
];

/** Socket errors of a connection to the database (errno codes). */
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Duck-typed: knex rethrows driver errors whose prototype is not always this realm's Error. */
function matches(e: object): boolean {
  if (e instanceof DatabaseTimeoutError) return true;
  const { name, code, syscall, message } = e as {
    name?: unknown;
    code?: unknown;
    syscall?: unknown;
    message?: unknown;
  };
  // knex: "Timeout acquiring a connection. The pool is probably full."
  if (name === 'KnexTimeoutError' || name === 'DatabaseTimeoutError') return true;
  if (typeof code === 'string') {
    if (/^08[0-9A-Z]{3}$/.test(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (UNAVAILABLE_ERRNO.has(code) && syscall !== undefined) return true;
  }
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message));
}

/**
 * True when `e` (or the database error Objection wrapped as `nativeError`, or its `cause`, or an
 * AggregateError's member: node's connect to "localhost" tries IPv4 and IPv6) says PostgreSQL is
 * unavailable rather than that the request was wrong. Raw socket errors (ECONNREFUSED, ...) count
 * too: every other client of the services (Redis, IMAP, the mail panels) wraps its own.
 * @param e whatever a query, a transaction or the pool threw
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (x: unknown, depth: number): boolean => {
    if (x === null || typeof x !== 'object' || seen.has(x) || depth > 3) return false;
    seen.add(x);
    if (matches(x)) return true;
    const o = x as { nativeError?: unknown; cause?: unknown; errors?: unknown };
    if (visit(o.nativeError, depth + 1) || visit(o.cause, depth + 1)) return true;
    return x instanceof AggregateError && Array.isArray(o.errors) && o.errors.some((m) => visit(m, depth + 1));
  };
  return visit(e, 0);
}
