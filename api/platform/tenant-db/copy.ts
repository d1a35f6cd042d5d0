import type { Knex } from 'knex';
import { ident } from './state.js';
import { TenantDbPermanentError } from './admin.js';
import { columnList, copyPlan, rowExpr, whereOf, type CopyTable } from './copy-plan.js';

/**
 * The data copy (issue 14 item 6): the shared database is only read; rows go to the tenant
 * database in batches of 1,000 by id as JSON (`json_populate_recordset`: every type kept exactly),
 * `INSERT ... ON CONFLICT (id) DO UPDATE`, a collision check and a checkpoint per batch; at the end
 * per-table counts and checksums (md5 over md5(row::text) in id order, TimeZone UTC, same columns).
 */

export const BATCH_SIZE = 1000;
/** Keys listed per table in a result. */
const MAX_KEYS = 20;

/** Where a run reports to (the job: progress, per-table log lines, checkpoint). */
export interface CopyReporter {
  progress(p: Record<string, unknown>): Promise<void>;
  log(line: string): Promise<void>;
  checkpoint(c: Record<string, number>): Promise<void>;
  /** Test hook called after each committed batch (1-based count over the run). */
  afterBatch?: (batch: number) => Promise<void> | void;
}

interface Batch {
  rows: string;
  last: number | null;
  n: number;
}

/** Reads one batch of the tenant's rows of a table from the shared database, after id `after`. */
async function readBatch(knex: Knex, t: CopyTable, tenantId: number, after: number): Promise<Batch> {
  const r = await knex.raw<{ rows: Batch[] }>(
    `SELECT coalesce(json_agg(b ORDER BY b.id), '[]')::text AS rows, max(b.id) AS last, count(*)::int AS n
       FROM (SELECT ${columnList(t.columns)} FROM ${ident(t.table)} WHERE ${whereOf(t, tenantId)} AND id > ? ORDER BY id LIMIT ?) b`,
    [after, BATCH_SIZE],
  );
  return r.rows[0];
}

/**
 * The dry-run's batch: per row only the id, the md5 of its text (TimeZone UTC, as the checksum) as
 * `h__`, and the columns the collision checks compare (unique keys, owner); a fraction of the rows.
 */
async function readHashBatch(knex: Knex, t: CopyTable, tenantId: number, after: number): Promise<Batch> {
  const cols = [...new Set(['id', ...t.uniqueKeys.flat(), ...t.owner])].map((c) => `x.${ident(c)}`);
  return knex.transaction(async (trx) => {
    await trx.raw("SET LOCAL TimeZone = 'UTC'");
    const r = await trx.raw<{ rows: Batch[] }>(
      `SELECT coalesce(json_agg(b ORDER BY b.id), '[]')::text AS rows, max(b.id) AS last, count(*)::int AS n
         FROM (SELECT ${cols.join(', ')}, md5(${rowExpr('x', t.columns)}::text) AS h__ FROM ${ident(t.table)} x
                WHERE ${whereOf(t, tenantId)} AND x.id > ? ORDER BY x.id LIMIT ?) b`,
      [after, BATCH_SIZE],
    );
    return r.rows[0];
  });
}

/** A SQL string literal. */
const lit = (v: string) => `'${v.replace(/'/g, "''")}'`;

/** `r`: the batch's rows as the table's record type (parsed once per statement). */
const batchCte = (t: CopyTable) =>
  `r AS MATERIALIZED (SELECT * FROM json_populate_recordset(null::${ident(t.table)}, ?::json))`;

/**
 * `c`: the batch's collisions in the tenant database (`o` orders them, `msg` names them): a unique
 * key on another id, or the same id with other owner columns (another tenant, slug or pair).
 */
function collisionCte(t: CopyTable): string {
  const parts = t.uniqueKeys.map((key, i) => {
    const on = key.map((c) => `t.${ident(c)} = r.${ident(c)}`).join(' AND ');
    return `SELECT ${i} AS o, r.id, ${lit(`${t.table}.${key.join('+')}: id `)} || r.id || ' vs ' || t.id AS msg
              FROM r JOIN ${ident(t.table)} t ON ${on} WHERE t.id <> r.id`;
  });
  if (t.owner.length) {
    const of = (alias: string) => `ROW(${t.owner.map((c) => `${alias}.${ident(c)}`).join(', ')})`;
    parts.push(`SELECT ${parts.length} AS o, r.id, ${lit(`${t.table}.id `)} || r.id || ${lit(`: another ${t.owner.join('+')}`)} AS msg
              FROM r JOIN ${ident(t.table)} t ON t.id = r.id WHERE ${of('t')} IS DISTINCT FROM ${of('r')}`);
  }
  if (!parts.length) parts.push("SELECT 0 AS o, 0::bigint AS id, ''::text AS msg WHERE false");
  return `c AS (${parts.join(' UNION ALL ')})`;
}

/** The first 20 collision messages of `c`, as JSON. */
const collisionKeys = `coalesce((SELECT json_agg(x.msg ORDER BY x.o, x.id)
   FROM (SELECT * FROM c ORDER BY o, id LIMIT ${MAX_KEYS}) x), '[]'::json) AS keys`;

/** Count and checksum of a table's rows (the tenant's in shared; all in the tenant database). */
export async function checksum(
  k: Knex,
  t: CopyTable,
  tenantId: number | null,
): Promise<{ count: number; checksum: string }> {
  return k.transaction(async (trx) => {
    await trx.raw("SET LOCAL TimeZone = 'UTC'");
    const where = tenantId === null ? '' : `WHERE ${whereOf(t, tenantId)}`;
    const r = await trx.raw<{ rows: { n: number; sum: string }[] }>(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(md5(${rowExpr('x', t.columns)}::text), '' ORDER BY x.id), '')) AS sum
         FROM ${ident(t.table)} x ${where}`,
    );
    return { count: r.rows[0].n, checksum: r.rows[0].sum };
  });
}

/**
 * POST data-copy/dry-run's work (reads only, both sides): per table count, to_insert, to_update,
 * collisions and up to 20 keys; `collisions_total` decides whether data-copy/run may start.
 */
export async function executeDryRun(knex: Knex, tk: Knex, tenantId: number, rep: CopyReporter) {
  const plan = await copyPlan(knex);
  const tables: Record<string, unknown>[] = [];
  let total = 0;
  for (const [i, t] of plan.entries()) {
    const s = { table: t.table, count: 0, to_insert: 0, to_update: 0, collisions: 0, keys: [] as string[] };
    let next = readHashBatch(knex, t, tenantId, 0);
    for (;;) {
      const b = await next;
      if (!b.n) break;
      // the next batch is read from the shared database while this one is compared
      next = readHashBatch(knex, t, tenantId, Number(b.last));
      next.catch(() => undefined);
      // one statement: ids, keys and row md5s of the batch against the tenant database's rows
      const r = await tk.transaction(async (trx) => {
        await trx.raw("SET LOCAL TimeZone = 'UTC'");
        return trx.raw<{ rows: { ins: number; upd: number; n: number; keys: string[] }[] }>(
          `WITH r AS MATERIALIZED (SELECT p.*, e->>'h__' AS h__ FROM json_array_elements(?::json) e,
                                      LATERAL json_populate_record(null::${ident(t.table)}, e) p),
                ${collisionCte(t)}
           SELECT count(*) FILTER (WHERE t.id IS NULL)::int AS ins,
                  count(*) FILTER (WHERE t.id IS NOT NULL AND md5(${rowExpr('t', t.columns)}::text) <> r.h__)::int AS upd,
                  (SELECT count(*)::int FROM c) AS n, ${collisionKeys}
             FROM r LEFT JOIN ${ident(t.table)} t ON t.id = r.id`,
          [b.rows],
        );
      });
      const x = r.rows[0];
      s.count += b.n;
      s.to_insert += x.ins;
      s.to_update += x.upd;
      s.collisions += x.n;
      s.keys = [...s.keys, ...x.keys].slice(0, MAX_KEYS);
    }
    total += s.collisions;
    tables.push(s);
    await rep.log(
      `${t.table}: ${s.count} rows, ${s.to_insert} to insert, ${s.to_update} to update, ${s.collisions} collisions`,
    );
    await rep.progress({ step: 'dry-run', table: t.table, tables_done: i + 1, tables_total: plan.length });
  }
  return { tables, collisions_total: total };
}

/**
 * POST data-copy/run's work: resumes from the run's checkpoint `{table: lastId}` (a killed run
 * re-copies no committed batch), then verifies counts and checksums.
 * @throws TenantDbPermanentError on a collision or a checksum mismatch (the result attached)
 */
export async function executeCopy(
  knex: Knex,
  tk: Knex,
  tenantId: number,
  rep: CopyReporter,
  checkpoint: Record<string, number>,
) {
  const plan = await copyPlan(knex);
  const done: Record<string, number> = { ...checkpoint };
  let batches = 0;
  for (const [i, t] of plan.entries()) {
    let after = done[t.table] ?? 0;
    let copied = 0;
    const updates = t.columns.filter((c) => c !== 'id').map((c) => `${ident(c)} = EXCLUDED.${ident(c)}`);
    let next = readBatch(knex, t, tenantId, after);
    for (;;) {
      const b = await next;
      if (!b.n) break;
      // the next batch is read from the shared database while this one is written (reads only: a
      // failed write leaves nothing behind, the retry starts again from the checkpoint)
      next = readBatch(knex, t, tenantId, Number(b.last));
      next.catch(() => undefined);
      // one statement (atomic without a transaction block): collisions first; with any, nothing is written
      const r = await tk.raw<{ rows: { keys: string[] }[] }>(
        `WITH ${batchCte(t)}, ${collisionCte(t)},
              w AS (INSERT INTO ${ident(t.table)} (${columnList(t.columns)})
                    SELECT ${columnList(t.columns)} FROM r WHERE NOT EXISTS (SELECT 1 FROM c)
                    ON CONFLICT (id) DO ${updates.length ? `UPDATE SET ${updates.join(', ')}` : 'NOTHING'} RETURNING 1)
         SELECT (SELECT count(*) FROM w) AS written, ${collisionKeys}`,
        [b.rows],
      );
      const keys = r.rows[0].keys;
      if (keys.length) {
        const err = new TenantDbPermanentError(`collision in ${t.table}: ${keys[0]}`);
        Object.assign(err, { result: { collisions: keys } });
        throw err;
      }
      after = Number(b.last);
      copied += b.n;
      done[t.table] = after;
      await rep.checkpoint(done);
      batches += 1;
      await rep.progress({ step: 'copy', table: t.table, last_id: after, tables_done: i, tables_total: plan.length });
      if (rep.afterBatch) await rep.afterBatch(batches);
    }
    await tk.raw(
      `SELECT setval(pg_get_serial_sequence(?, 'id'), m) FROM (SELECT max(id) AS m FROM ${ident(t.table)}) x WHERE m IS NOT NULL AND pg_get_serial_sequence(?, 'id') IS NOT NULL`,
      [t.table, t.table],
    );
    await rep.log(`${t.table}: ${copied} rows copied in this attempt (up to id ${after})`);
  }
  const tables: Record<string, unknown>[] = [];
  const mismatched: string[] = [];
  for (const t of plan) {
    const [a, b] = await Promise.all([checksum(knex, t, tenantId), checksum(tk, t, null)]);
    const ok = a.count === b.count && a.checksum === b.checksum;
    if (!ok) mismatched.push(t.table);
    tables.push({
      table: t.table,
      count: a.count,
      tenant_count: b.count,
      checksum: a.checksum,
      tenant_checksum: b.checksum,
      ok,
    });
    await rep.log(`${t.table}: count ${a.count}/${b.count}, checksum ${ok ? 'equal' : 'DIFFERENT'}`);
  }
  const result = { tables, batches, collisions: [] as string[] };
  if (mismatched.length) {
    const err = new TenantDbPermanentError(`count or checksum differ: ${mismatched.join(', ')}`);
    Object.assign(err, { result });
    throw err;
  }
  await knex('tenant_databases')
    .where({ tenant_id: tenantId })
    .update({ status: 'data_copied', use_tenant_db_read: true, updated_at: knex.fn.now() });
  return result;
}

/**
 * POST data-copy/rollback's work: empties the copied tables (one log line per table with its row
 * count); back to `schema_migrated`, read flag off.
 */
export async function executeCopyRollback(knex: Knex, tk: Knex, tenantId: number, rep: CopyReporter) {
  const plan = await copyPlan(knex);
  const parts = plan.map((t) => `(SELECT count(*)::int FROM ${ident(t.table)}) AS ${ident(t.table)}`);
  const rows = (await tk.raw<{ rows: Record<string, number>[] }>(`SELECT ${parts.join(', ')}`)).rows[0];
  await tk.raw(`TRUNCATE ${plan.map((t) => ident(t.table)).join(', ')} RESTART IDENTITY CASCADE`);
  for (const t of plan) await rep.log(`${t.table}: emptied (${rows[t.table]} rows)`);
  await knex('tenant_databases')
    .where({ tenant_id: tenantId })
    .update({ status: 'schema_migrated', use_tenant_db_read: false, updated_at: knex.fn.now() });
  return { emptied: plan.map((t) => t.table) };
}
