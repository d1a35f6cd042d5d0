import type { Knex } from 'knex';
import type { CopyReporter } from './copy.js';
import { systemClock } from '../../../lib/clock.js';
import { deleteRows, recordedRows, requireDemoKey, sharedId, type DemoTable } from './demo-rows.js';

/**
 * The demo seed of a tenant database (issue 15 item 7; decision in docs/decisions.md "Issue 15"):
 * fixed DEMO- customers, invoices and a ticket written into the tenant database only, with ids from
 * the shared database's sequences, each recorded in `tenant_db_demo_rows` (origin `demo_seed`) so
 * the reconciliation counts them as `accepted_pilot_extra`. Rollback removes exactly those rows.
 * Both are idempotent: a retried attempt reuses the recorded ids.
 */

/** One fixed demo row: its table, DEMO- key and the columns it sets (customer_id by the customer's key). */
interface DemoSpec {
  table: DemoTable;
  key: string;
  customer?: string;
  values: Record<string, unknown>;
}

/** The fixed rows (two customers, an invoice each, one ticket). */
export const DEMO_SEED_ROWS: readonly DemoSpec[] = [
  {
    table: 'customers',
    key: 'DEMO-C0001',
    values: { name: 'Demo Customer One', phone: '080000000001', address: 'Demo Street 1' },
  },
  {
    table: 'customers',
    key: 'DEMO-C0002',
    values: { name: 'Demo Customer Two', phone: '080000000002', address: 'Demo Street 2' },
  },
  { table: 'invoices', key: 'DEMO-INV-0001', customer: 'DEMO-C0001', values: { amount: '150000.00' } },
  { table: 'invoices', key: 'DEMO-INV-0002', customer: 'DEMO-C0002', values: { amount: '250000.00' } },
  {
    table: 'tickets',
    key: 'DEMO-TCK-0001',
    customer: 'DEMO-C0001',
    values: { type: 'Demo: no connection', priority: 'medium', status: 'open', source: 'admin' },
  },
];

const KEY_COLUMN: Record<DemoTable, string> = {
  customers: 'code',
  invoices: 'invoice_number',
  tickets: 'ticket_number',
};

/**
 * The demo_seed run's work: records the rows' ids (shared sequences) and inserts them into the
 * tenant database (an id already there is kept).
 * @param knex the shared database; @param tk the tenant database
 * @returns per table the rows written and the keys
 */
export async function executeDemoSeed(knex: Knex, tk: Knex, tenantId: number, runId: number, rep: CopyReporter) {
  const recorded = new Map((await recordedRows(knex, tenantId, 'demo_seed')).map((r) => [r.demo_key, r]));
  const ids = new Map<string, number>();
  for (const s of DEMO_SEED_ROWS) {
    requireDemoKey(s.key);
    const have = recorded.get(s.key);
    if (have) {
      ids.set(s.key, Number(have.row_id));
      continue;
    }
    const id = await sharedId(knex, s.table);
    await knex('tenant_db_demo_rows').insert({
      tenant_id: tenantId,
      table_name: s.table,
      row_id: id,
      demo_key: s.key,
      origin: 'demo_seed',
      run_id: runId,
    });
    ids.set(s.key, id);
  }
  const today = systemClock.now().toISOString().slice(0, 10);
  const written: Record<string, number> = { customers: 0, invoices: 0, tickets: 0 };
  await tk.transaction(async (trx) => {
    for (const s of DEMO_SEED_ROWS) {
      const row: Record<string, unknown> = {
        id: ids.get(s.key),
        tenant_id: tenantId,
        [KEY_COLUMN[s.table]]: s.key,
        ...s.values,
        ...(s.customer ? { customer_id: ids.get(s.customer) } : {}),
        ...(s.table === 'invoices' ? { due_date: today, status: 'unpaid' } : {}),
      };
      const r = (await trx(s.table).insert(row).onConflict('id').ignore().returning('id')) as unknown[];
      written[s.table] += r.length;
    }
  });
  await rep.log(`demo seed: ${DEMO_SEED_ROWS.map((s) => `${s.key} -> ${s.table}.id ${ids.get(s.key)}`).join(', ')}`);
  return { written, rows: DEMO_SEED_ROWS.map((s) => ({ table: s.table, key: s.key, id: ids.get(s.key) })) };
}

/** The demo_seed_rollback run's work: deletes the recorded demo seed rows from the tenant database, then records. */
export async function executeDemoSeedRollback(knex: Knex, tk: Knex, tenantId: number, rep: CopyReporter) {
  const rows = await recordedRows(knex, tenantId, 'demo_seed');
  const deleted = await tk.transaction((trx) => deleteRows(trx, rows));
  await knex('tenant_db_demo_rows')
    .whereIn(
      'id',
      rows.map((r) => r.id),
    )
    .delete();
  await rep.log(`demo seed rollback: ${rows.length} recorded rows removed`);
  return { deleted, records_removed: rows.length };
}
