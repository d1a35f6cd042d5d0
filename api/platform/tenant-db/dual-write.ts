import type { Knex } from 'knex';
import { systemClock } from '../../../lib/clock.js';
import { TenantDbPermanentError } from './admin.js';
import type { CopyReporter } from './copy.js';
import {
  columnsOf,
  deleteRows,
  recordedRows,
  requireDemoKey,
  rowHash,
  rowJson,
  sharedId,
  upsertRow,
  type DemoTable,
} from './demo-rows.js';

/**
 * The dual write pilot (issue 15 item 6; decision in docs/decisions.md "Issue 15"): a job writes,
 * then updates, a DEMO- customer, invoice and ticket in both databases. Each write runs in a shared
 * transaction; the row as the shared database wrote it (JSON of the copy's columns) is written into
 * the tenant database and committed there while the shared transaction is still open, so a tenant
 * failure rolls the shared write back. Then the row hashes of both sides are compared and recorded
 * in `tenant_db_demo_rows` (origin `dual_write`). The writer refuses any key not starting `DEMO-`.
 */

/** The fixed dual-write rows. */
export const DUAL_WRITE_KEYS = {
  customers: 'DEMO-DW-C0001',
  invoices: 'DEMO-DW-INV-0001',
  tickets: 'DEMO-DW-TCK-0001',
} as const;

/**
 * Writes one row in both databases: `write` runs in the shared transaction and returns the row's id;
 * the shared row is then written into the tenant database (committed inside the open shared
 * transaction); `after` (in the shared transaction) records it.
 * @throws TenantDbPermanentError for a key not starting DEMO- (nothing written); a tenant failure
 *   rolls the shared write back and is rethrown
 */
export async function dualWrite(
  knex: Knex,
  tk: Knex,
  table: DemoTable,
  key: string,
  write: (trx: Knex.Transaction) => Promise<number>,
  after?: (trx: Knex.Transaction, id: number) => Promise<void>,
): Promise<number> {
  requireDemoKey(key);
  const columns = await columnsOf(knex, table);
  return knex.transaction(async (trx) => {
    const id = await write(trx);
    const json = await rowJson(trx, table, columns, id);
    if (!json) throw new TenantDbPermanentError(`dual write: ${table}.id ${id} was not written`);
    await tk.transaction((ttx) => upsertRow(ttx, table, columns, json, key));
    if (after) await after(trx, id);
    return id;
  });
}

/** The dual_write_run's work: insert, update, compare hashes, record. */
export async function executeDualWrite(knex: Knex, tk: Knex, tenantId: number, runId: number, rep: CopyReporter) {
  const recorded = new Map((await recordedRows(knex, tenantId, 'dual_write')).map((r) => [r.demo_key, r]));
  const ids: Partial<Record<DemoTable, number>> = {};
  const today = systemClock.now().toISOString().slice(0, 10);
  const record = (table: DemoTable, key: string) => async (trx: Knex.Transaction, id: number) => {
    await trx('tenant_db_demo_rows')
      .insert({
        tenant_id: tenantId,
        table_name: table,
        row_id: id,
        demo_key: key,
        origin: 'dual_write',
        run_id: runId,
      })
      .onConflict(['tenant_id', 'table_name', 'row_id'])
      .ignore();
  };
  const insertOnce = async (table: DemoTable, values: (trx: Knex.Transaction) => Record<string, unknown>) => {
    const key = DUAL_WRITE_KEYS[table];
    const have = recorded.get(key);
    if (have) {
      ids[table] = Number(have.row_id);
      return;
    }
    ids[table] = await dualWrite(
      knex,
      tk,
      table,
      key,
      async (trx) => {
        const id = await sharedId(trx, table);
        await trx(table).insert({ id, tenant_id: tenantId, ...values(trx) });
        return id;
      },
      record(table, key),
    );
  };
  await insertOnce('customers', () => ({
    code: DUAL_WRITE_KEYS.customers,
    name: 'Demo Dual Write',
    phone: '080000000101',
    address: 'Dual Write Street 1',
  }));
  await insertOnce('invoices', () => ({
    invoice_number: DUAL_WRITE_KEYS.invoices,
    customer_id: ids.customers,
    amount: '100000.00',
    status: 'unpaid',
    due_date: today,
  }));
  await insertOnce('tickets', () => ({
    ticket_number: DUAL_WRITE_KEYS.tickets,
    customer_id: ids.customers,
    type: 'Demo: dual write',
    priority: 'low',
    status: 'open',
    source: 'admin',
  }));
  await rep.log(`dual write: inserted ${JSON.stringify(ids)}`);
  const updates: Record<DemoTable, Record<string, unknown>> = {
    customers: { name: 'Demo Dual Write (updated)' },
    invoices: { amount: '125000.00' },
    tickets: { priority: 'medium' },
  };
  const rows = [];
  for (const table of ['customers', 'invoices', 'tickets'] as const) {
    const id = ids[table]!;
    await dualWrite(knex, tk, table, DUAL_WRITE_KEYS[table], async (trx) => {
      await trx(table)
        .where({ id, tenant_id: tenantId })
        .update({ ...updates[table], updated_at: trx.fn.now() });
      return id;
    });
    const columns = await columnsOf(knex, table);
    const [shared_hash, tenant_hash] = await Promise.all([
      rowHash(knex, table, columns, id),
      rowHash(tk, table, columns, id),
    ]);
    await knex('tenant_db_demo_rows')
      .where({ tenant_id: tenantId, table_name: table, row_id: id })
      .update({ shared_hash, tenant_hash });
    rows.push({ table, key: DUAL_WRITE_KEYS[table], id, shared_hash, tenant_hash, equal: shared_hash === tenant_hash });
  }
  await rep.log(`dual write: hashes ${rows.map((r) => `${r.table} ${r.equal ? 'equal' : 'DIFFERENT'}`).join(', ')}`);
  const different = rows.filter((r) => !r.equal);
  if (different.length) {
    const err = new TenantDbPermanentError(
      `dual write: row hashes differ: ${different.map((r) => r.table).join(', ')}`,
    );
    Object.assign(err, { result: { rows } });
    throw err;
  }
  return { rows, hashes_equal: true };
}

/** The dual_write_rollback's work: deletes the recorded dual-write rows from both databases, then the records. */
export async function executeDualWriteRollback(knex: Knex, tk: Knex, tenantId: number, rep: CopyReporter) {
  const rows = await recordedRows(knex, tenantId, 'dual_write');
  const out = await knex.transaction(async (trx) => {
    const shared = await deleteRows(trx, rows);
    const tenant = await tk.transaction((ttx) => deleteRows(ttx, rows));
    await trx('tenant_db_demo_rows')
      .whereIn(
        'id',
        rows.map((r) => r.id),
      )
      .delete();
    return { shared, tenant };
  });
  await rep.log(`dual write rollback: ${rows.length} rows removed from both databases`);
  return { deleted: out, records_removed: rows.length };
}
