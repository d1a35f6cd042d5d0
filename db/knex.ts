import knexPkg from 'knex';
import type { Knex } from 'knex';
import pg from 'pg';
import { Model } from 'objection';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Socket } from 'node:net';
import { DatabaseTimeoutError } from './unavailable.js';
import type { Logger } from '../lib/logger.js';

const { knex: createKnexInstance } = knexPkg;

// numeric -> JS number (money is numeric(14,2): exact in a double for the amounts we handle);
// int8 -> number (ids and counters stay well under 2^53).
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => (v === null ? null : Number(v)));
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => (v === null ? null : Number(v)));
// date -> 'YYYY-MM-DD' string, never a JS Date shifted by the time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

/** Absolute path of db/migrations (knex reads the .ts migrations from here). */
export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Time bounds of the database calls of a request-serving process, in ms (lib/config.ts FaultLimits;
 * issue 7 item 3): a frozen, restarting or unreachable PostgreSQL costs a request at most about
 * max(query + 500, acquire) ms, then 503 DATABASE_UNAVAILABLE.
 */
export interface DbBounds {
  /** statement_timeout of every session; the client drops a connection silent for this + 500 ms mid-statement. */
  queryTimeoutMs: number;
  /** Opening a connection (TCP + startup + authentication). */
  connectTimeoutMs: number;
  /** Waiting for a pooled connection (knex acquireConnectionTimeout). */
  acquireTimeoutMs: number;
  /**
   * Where knex's own warnings go (a dropped connection, a failed acquire with its stack), one line
   * each at warn level; default: knex's console output.
   */
  logger?: Logger;
}

/** How much longer than statement_timeout the client waits before it drops a silent connection, in ms. */
export const SILENCE_MARGIN_MS = 500;

/**
 * Knex configuration for a database URL (used by knexfile.ts, the processes and the tests).
 * @param url postgres:// connection string
 * @param pool pool bounds (default 0..10)
 * @param bounds time bounds for request-serving processes (none: knex's and pg's defaults, for
 *   migrations, workers, the CLI and the tests' own instance)
 */
export function knexConfig(
  url: string,
  pool: { min: number; max: number } = { min: 0, max: 10 },
  bounds?: DbBounds,
): Knex.Config {
  return {
    client: 'pg',
    connection: bounds
      ? {
          connectionString: url,
          connectionTimeoutMillis: bounds.connectTimeoutMs,
          statement_timeout: bounds.queryTimeoutMs,
          keepAlive: true,
        }
      : url,
    pool: bounds ? { ...pool, afterCreate: dropWhenSilent(bounds.queryTimeoutMs + SILENCE_MARGIN_MS) } : pool,
    ...(bounds ? { acquireConnectionTimeout: bounds.acquireTimeoutMs } : {}),
    ...(bounds?.logger ? { log: knexLog(bounds.logger) } : {}),
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], extension: 'ts', tableName: 'knex_migrations' },
  };
}

/** knex's log hooks writing to a pino logger (the first line of a message: no stack in the log). */
function knexLog(logger: Logger): NonNullable<Knex.Config['log']> {
  const line = (m: unknown) => String(m).split('\n')[0];
  return {
    warn: (m: unknown) => logger.warn({ knex: line(m) }, 'database'),
    error: (m: unknown) => logger.error({ knex: line(m) }, 'database'),
    deprecate: (m: unknown) => logger.warn({ knex: line(m) }, 'database'),
    debug: () => {},
  };
}

/** The node-postgres client internals dropWhenSilent reads (pg 8; see the comment there). */
interface PgClientInternals {
  connection?: { stream?: Socket };
  _activeQuery?: unknown;
  _queryQueue?: unknown[];
  _sentQueryQueue?: unknown[];
}

/**
 * A pool `afterCreate` hook that destroys a connection whose server stays silent for `ms` while a
 * statement runs. A frozen server (SIGSTOP) keeps its TCP connections open, and statement_timeout
 * cannot fire in a server that does not run, so only the client can notice. The socket's idle timer
 * re-arms on every byte either way; when it fires with no statement running (an idle pooled
 * connection) nothing happens. Destroying the socket fails the statement with DatabaseTimeoutError,
 * pg marks the client broken and knex's pool discards it, so a transaction cut in the middle is never
 * handed on (the server rolls it back when it sees the connection gone).
 * It reads node-postgres internals (`_activeQuery`, `_queryQueue`, `_sentQueryQueue`, pg 8): should a
 * later pg rename them, the hook does nothing and test/faults/postgres.test.ts fails.
 * @param ms silence bound in ms
 */
function dropWhenSilent(ms: number) {
  return (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void): void => {
    const internals = conn as unknown as PgClientInternals; // pg keeps its socket and query queues private
    const stream = internals.connection?.stream;
    if (stream) {
      stream.setTimeout(ms);
      stream.on('timeout', () => {
        const busy =
          !!internals._activeQuery ||
          (internals._queryQueue?.length ?? 0) > 0 ||
          (internals._sentQueryQueue?.length ?? 0) > 0;
        if (busy) stream.destroy(new DatabaseTimeoutError(ms));
      });
    }
    done(null, conn);
  };
}

/**
 * Creates the process's one knex instance and binds Objection's Model to it.
 * Opens no connection until the first query.
 * @param url postgres:// connection string
 * @param pool pool bounds (default 0..10)
 * @param bounds time bounds (web and mail pass lib/config.ts FaultLimits; see DbBounds)
 */
export function createKnex(url: string, pool?: { min: number; max: number }, bounds?: DbBounds): Knex {
  const k = createKnexInstance(knexConfig(url, pool, bounds));
  Model.knex(k);
  return k;
}

/** Runs all pending migrations; returns the names applied. */
export async function migrateLatest(k: Knex): Promise<string[]> {
  const [, applied] = await k.migrate.latest();
  return applied as string[];
}

/** knex's Knex type, re-exported for modules that take the process's instance. */
export type { Knex };
