import type { Knex } from 'knex';
import { ident } from './state.js';
import { TenantDbPermanentError } from './admin.js';
import { columnList, copyPlan, rowExpr, whereOf, type CopyTable } from './copy-plan.js';
import { BATCH_SIZE } from './copy.js';
import { IDENTITY_TABLES, MOVED_TABLES, PASSED_IDENTITY_TABLES } from '../../../db/tenant-routing.js';

/**
 * The passes of a production cutover and its rollback (issue 15 items 3 and 5): make one database's
 * rows of a tenant equal to the other's, table by table in foreign-key order: insert and update in
 * batches of 1,000 (keyset on the primary key, rows as JSON through `json_populate_recordset`, the
 * data copy's technique), then delete the extras children first; then per table counts and
 * checksums (md5 over md5(row::text) in primary-key order, TimeZone UTC).
 */

/** One table of a pass: the copy plan's row plus its primary key. */
export interface SyncTable extends CopyTable {
  pk: string[];
  /** Whether `id` is a serial column (its sequence gets id blocks, item 3 e). */
  serial: boolean;
}

/** Which way a pass goes: the cutover copies shared -> tenant, the rollback tenant -> shared. */
export type PassDirection = 'to_tenant' | 'to_shared';

/**
 * The tables of a pass: every moved table (db/tenant-routing.ts) and its foreign-key parents in
 * foreign-key order. Towards the tenant database the identity rows (tenant, users) are copied too;
 * back to the shared database they are not (they never left it).
 * @param knex the shared database (its catalog)
 */
export async function passPlan(knex: Knex, direction: PassDirection): Promise<SyncTable[]> {
  // to_tenant also keeps users and the role tables in step (PASSED_IDENTITY_TABLES); to_shared skips them
  const plan = await copyPlan(knex, [...MOVED_TABLES, ...PASSED_IDENTITY_TABLES]);
  const pks = (
    await knex.raw<{ rows: { table_name: string; pk: string[]; serial: boolean }[] }>(
      `SELECT c.relname AS table_name,
              array(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(n, o)
                      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS pk,
              EXISTS (SELECT 1 FROM pg_depend d JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
                       WHERE d.refobjid = c.oid AND d.deptype IN ('a', 'i')) AS serial
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
        WHERE c.relnamespace = 'public'::regnamespace AND i.indisprimary AND c.relname = ANY(?)`,
      [plan.map((t) => t.table)],
    )
  ).rows;
  const skip: readonly string[] = direction === 'to_shared' ? IDENTITY_TABLES : [];
  return plan
    .filter((t) => !skip.includes(t.table))
    .map((t) => {
      const p = pks.find((x) => x.table_name === t.table);
      if (!p) throw new TenantDbPermanentError(`table ${t.table} has no primary key`);
      return { ...t, pk: p.pk, serial: p.serial && p.pk.length === 1 && p.pk[0] === 'id' };
    });
}

const src = (t: SyncTable) => `json_populate_recordset(null::${ident(t.table)}, ?::json)`;
const pkList = (t: SyncTable, alias = '') => t.pk.map((c) => `${alias}${ident(c)}`).join(', ');
const desc = (t: SyncTable) => t.pk.map((c) => `b.${ident(c)} DESC`).join(', ');
const pkJoin = (t: SyncTable, a: string, b: string) =>
  t.pk.map((c) => `${a}.${ident(c)} = ${b}.${ident(c)}`).join(' AND ');

interface Batch {
  rows: string;
  last: unknown[] | null;
  n: number;
}

/** One keyset batch of a tenant's rows (all columns, or the key only). */
async function readBatch(
  k: Knex,
  t: SyncTable,
  tenantId: number,
  after: unknown[] | null,
  keysOnly = false,
): Promise<Batch> {
  const cols = keysOnly ? pkList(t) : columnList(t.columns);
  const cond = after ? ` AND (${pkList(t)}) > (${t.pk.map(() => '?').join(', ')})` : '';
  const r = await k.raw<{ rows: Batch[] }>(
    `SELECT coalesce(json_agg(b ORDER BY ${pkList(t, 'b.')}), '[]')::text AS rows, count(*)::int AS n,
            (array_agg(json_build_array(${pkList(t, 'b.')}) ORDER BY ${desc(t)}))[1] AS last
       FROM (SELECT ${cols} FROM ${ident(t.table)} WHERE ${whereOf(t, tenantId)}${cond} ORDER BY ${pkList(t)} LIMIT ?) b`,
    [...((after ?? []) as Knex.Value[]), BATCH_SIZE],
  );
  return r.rows[0];
}

/** Per table what a pass did, or (dry run) would do. */
export interface PassCounts {
  table: string;
  to_insert: number;
  to_update: number;
  to_delete: number;
}

/**
 * Makes `to`'s rows of the tenant equal to `from`'s: upserts in foreign-key order, then deletes the
 * extras in reverse order. Idempotent (a retried pass finds less to do).
 * @param opts `dryRun` counts without writing (the rollback's plan); `keepExtras` tables whose
 *   extra rows in `to` stay (KEEP_ON_ROLLBACK)
 * @returns per table the rows inserted, updated and deleted (or to be)
 */
export async function syncPass(
  from: Knex,
  to: Knex,
  plan: SyncTable[],
  tenantId: number,
  opts: { dryRun?: boolean; keepExtras?: readonly string[] } = {},
): Promise<PassCounts[]> {
  const counts = new Map(plan.map((t) => [t.table, { table: t.table, to_insert: 0, to_update: 0, to_delete: 0 }]));
  for (const t of plan) {
    const c = counts.get(t.table)!;
    const rest = t.columns.filter((x) => !t.pk.includes(x));
    for (let after: unknown[] | null = null; ;) {
      const b = await readBatch(from, t, tenantId, after);
      if (!b.n) break;
      after = b.last;
      if (opts.dryRun) {
        const r = await to.raw<{ rows: { ins: number; upd: number }[] }>(
          `SELECT count(*) FILTER (WHERE x.${ident(t.pk[0])} IS NULL)::int AS ins,
                  count(*) FILTER (WHERE x.${ident(t.pk[0])} IS NOT NULL
                    AND ${rowExpr('x', t.columns)} IS DISTINCT FROM ${rowExpr('r', t.columns)})::int AS upd
             FROM ${src(t)} r LEFT JOIN ${ident(t.table)} x ON ${pkJoin(t, 'x', 'r')}`,
          [b.rows],
        );
        c.to_insert += r.rows[0].ins;
        c.to_update += r.rows[0].upd;
        continue;
      }
      const set = rest.map((x) => `${ident(x)} = EXCLUDED.${ident(x)}`).join(', ');
      const r = await to.raw<{ rows: { inserted: boolean }[] }>(
        `INSERT INTO ${ident(t.table)} AS x (${columnList(t.columns)}) SELECT ${columnList(t.columns)} FROM ${src(t)}
         ON CONFLICT (${pkList(t)}) DO ${
           rest.length
             ? `UPDATE SET ${set} WHERE ${rowExpr('x', rest)} IS DISTINCT FROM ${rowExpr('EXCLUDED', rest)}`
             : 'NOTHING'
         }
         RETURNING (xmax = 0) AS inserted`,
        [b.rows],
      );
      for (const x of r.rows)
        if (x.inserted) c.to_insert += 1;
        else c.to_update += 1;
    }
  }
  for (const t of [...plan].reverse()) {
    if (opts.keepExtras?.includes(t.table)) continue;
    const c = counts.get(t.table)!;
    for (let after: unknown[] | null = null; ;) {
      const b = await readBatch(to, t, tenantId, after, true);
      if (!b.n) break;
      after = b.last;
      const gone = await from.raw<{ rows: { keys: string }[] }>(
        `SELECT coalesce(json_agg(r), '[]')::text AS keys FROM ${src(t)} r
          WHERE NOT EXISTS (SELECT 1 FROM ${ident(t.table)} y WHERE ${pkJoin(t, 'y', 'r')})`,
        [b.rows],
      );
      const n = (JSON.parse(gone.rows[0].keys) as unknown[]).length;
      if (!n) continue;
      c.to_delete += n;
      if (!opts.dryRun)
        await to.raw(`DELETE FROM ${ident(t.table)} x USING ${src(t)} r WHERE ${pkJoin(t, 'x', 'r')}`, [
          gone.rows[0].keys,
        ]);
    }
  }
  return plan.map((t) => counts.get(t.table)!);
}

/** Count and checksum of a tenant's rows of a table (md5 over md5(row) in primary-key order, UTC). */
export async function tableChecksum(k: Knex, t: SyncTable, tenantId: number): Promise<{ count: number; sum: string }> {
  return k.transaction(async (trx) => {
    await trx.raw("SET LOCAL TimeZone = 'UTC'");
    const r = await trx.raw<{ rows: { n: number; sum: string }[] }>(
      `SELECT count(*)::int AS n,
              md5(coalesce(string_agg(md5(${rowExpr('x', t.columns)}::text), '' ORDER BY ${pkList(t, 'x.')}), '')) AS sum
         FROM ${ident(t.table)} x WHERE ${whereOf(t, tenantId)}`,
    );
    return { count: r.rows[0].n, sum: r.rows[0].sum };
  });
}

/**
 * Item 3 d: every table's count and checksum equal on both sides (a `keepExtras` table: at least
 * the source's count) and no foreign key left unvalidated in the target.
 * @returns per table the counts and checksums
 * @throws TenantDbPermanentError naming the tables that differ (the comparison attached as `result`)
 */
export async function verifyPass(
  from: Knex,
  to: Knex,
  plan: SyncTable[],
  tenantId: number,
  keepExtras: readonly string[] = [],
) {
  const tables = [];
  const bad: string[] = [];
  for (const t of plan) {
    const a = await tableChecksum(from, t, tenantId);
    const b = await tableChecksum(to, t, tenantId);
    // a table whose extras stay (KEEP_ON_ROLLBACK) holds at least the source's rows
    const ok = keepExtras.includes(t.table) ? b.count >= a.count : a.count === b.count && a.sum === b.sum;
    if (!ok) bad.push(t.table);
    tables.push({ table: t.table, count: a.count, target_count: b.count, checksum: a.sum, target_checksum: b.sum, ok });
  }
  const fk = await to.raw<{ rows: { n: number }[] }>(
    `SELECT count(*)::int AS n FROM pg_constraint
      WHERE contype = 'f' AND NOT convalidated AND connamespace = 'public'::regnamespace`,
  );
  const result = { tables, foreign_keys_unvalidated: fk.rows[0].n };
  if (bad.length || fk.rows[0].n) {
    const err = new TenantDbPermanentError(
      bad.length ? `count or checksum differ: ${bad.join(', ')}` : `${fk.rows[0].n} foreign keys not validated`,
    );
    Object.assign(err, { result });
    throw err;
  }
  return result;
}

/**
 * Tables whose shared-only rows a production rollback keeps (decision): audit_log is append-only,
 * and a cut-over tenant's user writes (shared, issue 15 item 4) audit there.
 */
export const KEEP_ON_ROLLBACK: readonly string[] = ['audit_log'];
