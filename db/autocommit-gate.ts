import type { Knex } from 'knex';

/**
 * Autocommit writes through a tenant's gated knex (issue 15 item 3 b, "Never lost"; decision in
 * docs/decisions.md "Autocommit writes pass the gate"). gatedKnex (db/tenant-routing.ts) hands out
 * knex query builders and raw statements whose `then` is replaced here: a WRITE run outside a
 * transaction (insert, update, del/delete, onConflict merge/ignore, increment/decrement, truncate,
 * a select whose CTE writes, raw SQL starting with INSERT/UPDATE/DELETE/MERGE/COPY/TRUNCATE/CALL/DO
 * or a WITH that writes) runs inside a gated transaction instead (the tenant_write_gate lock and
 * db_mode check; moved: once more on the other side). Reads and writes already bound to a
 * transaction (`.transacting(trx)`, builders of a trx) run as knex runs them: no extra round trip.
 *
 * How knex executes (knex 3, lib/builder-interface-augmenter.js): `builder.then()` calls
 * `client.runner(builder).run()`; `transacting(trx)` sets `_transacting` and swaps the builder's
 * client for the transaction's, whose connection is the transaction's. objection (3.x) builds its
 * knex query with `modelClass.query(knex)` → `knex.queryBuilder()` and executes it through
 * `Promise.resolve(knexBuilder)`, i.e. the same `then`: objection writes are covered too.
 */

/** Runs `cb` in a gated transaction of the tenant (gatedKnex's `transaction`). */
export type GatedTransaction = <T>(cb: (trx: Knex.Transaction) => Promise<T>) => Promise<T>;

const GATE = Symbol('tenantWriteGate');

/** Builder fields this module reads (knex internals of QueryBuilder and Raw). */
interface Executable {
  _method?: string;
  _statements?: { grouping: string }[];
  _transacting?: unknown;
  _connection?: unknown;
  sql?: string;
  isRawInstance?: boolean;
  transacting(trx: Knex.Transaction): Executable;
  toSQL(): { sql: string } | { sql: string }[];
  then(onFulfilled?: unknown, onRejected?: unknown): Promise<unknown>;
  [GATE]?: { gate: GatedTransaction; run: Executable['then'] };
}

const WRITE_METHODS = new Set(['insert', 'update', 'del', 'truncate']);
// leading whitespace and comments of a statement
const LEADING = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/;
const WRITE_START = /^(?:insert|update|delete|merge|copy|truncate|call|do)\b/i;
const WRITE_IN_WITH = /\b(?:insert\s+into|update\s+[\w".]+(?:\s+(?:as\s+)?\w+)?\s+set|delete\s+from|merge\s+into)\b/i;

/**
 * Whether a SQL text writes, judged by its first keyword after comments and whitespace: INSERT,
 * UPDATE, DELETE, MERGE, COPY, TRUNCATE, CALL, DO; WITH when its text contains a data-modifying
 * statement. A SELECT calling a function that writes is not recognised (none goes through a
 * scope, decision).
 */
export function isWriteSql(sql: string): boolean {
  const text = sql.replace(LEADING, '');
  if (WRITE_START.test(text)) return true;
  return /^with\b/i.test(text) && WRITE_IN_WITH.test(text);
}

/** Whether a knex builder (or raw) is a write that needs the gate when run outside a transaction. */
function needsGate(b: Executable): boolean {
  if (b._transacting || b._connection) return false;
  if (b.isRawInstance) return isWriteSql(b.sql ?? '');
  if (b._method && WRITE_METHODS.has(b._method)) return true;
  if (!b._statements?.some((s) => s.grouping === 'with')) return false;
  // a read with a CTE (rare): compile it once to see whether a CTE writes
  const compiled = b.toSQL();
  return (Array.isArray(compiled) ? compiled : [compiled]).some((c) => isWriteSql(c.sql));
}

// one shared function (no closure per builder): the gate travels on the builder
function gatedThen(this: Executable, onFulfilled?: unknown, onRejected?: unknown): Promise<unknown> {
  const { gate, run } = this[GATE]!;
  if (!needsGate(this)) return run.call(this, onFulfilled, onRejected);
  return gate((trx) => run.call(this.transacting(trx))).then(
    onFulfilled as (v: unknown) => unknown,
    onRejected as (e: unknown) => unknown,
  );
}

/**
 * Makes a knex QueryBuilder or Raw run its writes through `gate` when it is executed outside a
 * transaction (see the module comment). Returns the same object.
 */
export function gateWrites<T>(builder: T, gate: GatedTransaction): T {
  // gatedKnex passes knex QueryBuilders and Raws only; Executable names the knex internals read
  const b = builder as unknown as Executable;
  if (b && typeof b.then === 'function' && !b[GATE]) {
    b[GATE] = { gate, run: b.then };
    b.then = gatedThen;
  }
  return builder;
}
