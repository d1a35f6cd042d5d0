import type { Knex } from 'knex';
import { TenantDbPermanentError } from './admin.js';
import { columnList, copyPlan, rowExpr } from './copy-plan.js';
import { ident } from './state.js';

/**
 * What the demo seed and the dual write (issue 15 items 6 and 7) share: DEMO- keys only, ids from
 * the shared database's sequences, row JSON read on one side and written identically on the other,
 * md5 row hashes over the copy's columns (TimeZone UTC, as the copy's checksum).
 */

/** The tables a demo row may live in, with their natural key column. */
export const DEMO_TABLES = { customers: 'code', invoices: 'invoice_number', tickets: 'ticket_number' } as const;
export type DemoTable = keyof typeof DEMO_TABLES;

/**
 * Refuses a key that does not start `DEMO-` (the demo writers touch nothing else).
 * @throws TenantDbPermanentError naming the key
 */
export function requireDemoKey(key: string): void {
  if (!key.startsWith('DEMO-'))
    throw new TenantDbPermanentError(`refused: ${key} is not a DEMO- key; the demo writers only write DEMO- rows`);
}

/** A new id from the shared database's sequence of a table (so a demo id never collides with a shared row). */
export async function sharedId(knex: Knex | Knex.Transaction, table: DemoTable): Promise<number> {
  const r = await knex.raw<{ rows: { id: string }[] }>(`SELECT nextval(pg_get_serial_sequence(?, 'id')) AS id`, [
    table,
  ]);
  return Number(r.rows[0].id);
}

/** The columns of a table as the copy plan has them. */
export async function columnsOf(knex: Knex, table: DemoTable): Promise<string[]> {
  const t = (await copyPlan(knex)).find((x) => x.table === table);
  if (!t) throw new Error(`${table} is not in the copy plan`);
  return t.columns;
}

/** A row as JSON text (the copy plan's columns), or null. */
export async function rowJson(
  k: Knex | Knex.Transaction,
  table: DemoTable,
  columns: string[],
  id: number,
): Promise<string | null> {
  const r = await k.raw<{ rows: { j: string }[] }>(
    `SELECT row_to_json(s)::text AS j FROM (SELECT ${columnList(columns)} FROM ${ident(table)} WHERE id = ?) s`,
    [id],
  );
  return r.rows[0]?.j ?? null;
}

/**
 * Writes a row given as JSON (insert, or update of every column when the id exists). A row of
 * another id holding the same DEMO- key (left by an attempt that failed after the tenant commit) is
 * removed first.
 * @throws TenantDbPermanentError when the key is not DEMO-
 */
export async function upsertRow(
  k: Knex | Knex.Transaction,
  table: DemoTable,
  columns: string[],
  json: string,
  key: string,
): Promise<void> {
  requireDemoKey(key);
  const keyCol = ident(DEMO_TABLES[table]);
  await k.raw(`DELETE FROM ${ident(table)} WHERE ${keyCol} = ? AND id <> (?::json->>'id')::bigint`, [key, json]);
  const updates = columns.filter((c) => c !== 'id').map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`);
  await k.raw(
    `INSERT INTO ${ident(table)} (${columnList(columns)})
     SELECT ${columnList(columns)} FROM json_populate_record(null::${ident(table)}, ?::json)
     ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}`,
    [json],
  );
}

/** md5 of a row's text over the copy's columns (TimeZone UTC), or null when absent. */
export async function rowHash(k: Knex, table: DemoTable, columns: string[], id: number): Promise<string | null> {
  return k.transaction(async (trx) => {
    await trx.raw("SET LOCAL TimeZone = 'UTC'");
    const r = await trx.raw<{ rows: { h: string }[] }>(
      `SELECT md5(${rowExpr('x', columns)}::text) AS h FROM ${ident(table)} x WHERE x.id = ?`,
      [id],
    );
    return r.rows[0]?.h ?? null;
  });
}

/** A recorded demo row (tenant_db_demo_rows). */
export interface DemoRowRecord {
  id: number;
  table_name: DemoTable;
  row_id: string | number;
  demo_key: string;
}

/** Recorded demo rows of a tenant and origin. */
export async function recordedRows(
  knex: Knex | Knex.Transaction,
  tenantId: number,
  origin: 'demo_seed' | 'dual_write',
): Promise<DemoRowRecord[]> {
  return (await knex('tenant_db_demo_rows')
    .where({ tenant_id: tenantId, origin })
    .orderBy('id')
    .select('id', 'table_name', 'row_id', 'demo_key')) as DemoRowRecord[];
}

/**
 * Deletes recorded DEMO- rows from one database (tickets, then invoices, then customers), each by
 * id and key, so nothing but the recorded DEMO- row can go.
 * @returns rows deleted per table
 */
export async function deleteRows(k: Knex | Knex.Transaction, rows: DemoRowRecord[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['tickets', 'invoices', 'customers'] as const) {
    out[table] = 0;
    for (const r of rows.filter((x) => x.table_name === table)) {
      requireDemoKey(r.demo_key);
      const n = await k(table)
        .where({ id: Number(r.row_id), [DEMO_TABLES[table]]: r.demo_key })
        .delete();
      out[table] += n;
    }
  }
  return out;
}
