import type { Knex } from 'knex';
import { resolvePlatformTenant } from '../tenant-param.js';
import { tenantPools } from '../../../db/tenant-pools.js';
import { tenantConnection } from './admin.js';
import { ident, readTenantDb, type TenantDbRow } from './state.js';
import { appliedMigrations } from './schema.js';
import type { CopyTable } from './copy-plan.js';
import { rowExpr, whereOf } from './copy-plan.js';

/**
 * What the read-only reports of issue 14 item 8 share: the tenant, its row, the request pool (5 s
 * connect, 10 s statement timeout) and the rule that an unreachable tenant database answers 200
 * with the failing check `tenant_db_reachable` instead of an error.
 */

/** What the report routes pass in. */
export interface ReportDeps {
  knex: Knex;
  appKey: Buffer;
}

/** A check of a report: `{name, ok, detail}`. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** The reachability part of every report answer. */
export type Reach = { reachable: boolean; check: Check };

/** Columns never shown by a report (password hashes, sealed secrets, tokens). */
export const SECRET_COLUMN = /password|secret|token|_enc$|hash/i;

/** The natural key of a table (rows keyed DEMO- by the demo flow); other tables are keyed by id. */
export const KEY_COLUMNS: Record<string, string> = {
  users: 'email',
  customers: 'code',
  invoices: 'invoice_number',
  tickets: 'ticket_number',
};

/** The message of an error, short (a tenant database's failure, never a secret: pg never echoes passwords). */
export const reasonOf = (err: unknown): string => String((err as Error)?.message ?? err).slice(0, 200);

/** Node socket errors of a database that cannot be reached. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ECONNRESET', 'EAI_AGAIN']);
/**
 * PostgreSQL SQLSTATEs of an unreachable or refusing server: admin/crash shutdown, cannot connect
 * now, too many connections, auth failure, database missing, statement timeout (the 10 s bound).
 */
const PG_CODES = new Set(['57P01', '57P02', '57P03', '53300', '28P01', '28000', '3D000', '57014']);
/** Messages of the 5 s connect timeout (pg), the pool's acquire timeout (knex) and a dropped connection. */
const CONNECT_MESSAGES = /connection timeout|timeout acquiring a connection|Connection terminated/i;

/**
 * Whether a report's error means "the tenant database cannot be reached" (200 with the failing
 * check) rather than a bug (propagated: a logged 500 with a request id). Connection class only:
 * the socket codes, SQLSTATE class 08 (connection exception) and PG_CODES, the 5 s connect timeout,
 * the 10 s statement timeout (57014) and knex's acquire timeout.
 * @param err anything thrown by a read of the tenant database
 */
export function isUnreachable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; name?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (SOCKET_CODES.has(code) || PG_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  if (e?.name === 'KnexTimeoutError') return true;
  return typeof e?.message === 'string' && CONNECT_MESSAGES.test(e.message);
}

/**
 * Resolves the tenant and runs `fn` with the tenant database's request pool.
 * @param opts.schema `fn` reads the copied tables: with migrations pending in the tenant database
 *   (no tables yet, or older ones) `fn` is not run and the check is `tenant_db_schema_current`
 *   (reachable, ok false), since reading missing tables or columns would be an error, not a state
 * @returns `{tenant, row, reach, value}`; `value` is undefined when there is no pilot database or
 *   the tenant database could not be reached (isUnreachable; then `reach.check.ok` is false with the reason)
 * @throws NotFound (404) for an unknown tenant; any other error of `fn` as it is (a 500 with a request id)
 */
export async function withTenantDb<T>(
  deps: ReportDeps,
  ref: string | number,
  fn: (tk: Knex, row: TenantDbRow) => Promise<T>,
  opts: { schema?: boolean } = {},
): Promise<{ tenant: { id: number; slug: string }; row: TenantDbRow; reach: Reach; value?: T }> {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  const row = await readTenantDb(deps.knex, tenant.id);
  const fail = (detail: string) => ({ reachable: false, check: { name: 'tenant_db_reachable', ok: false, detail } });
  if (row.status === 'none' || !row.role_password_enc)
    return { tenant, row, reach: fail(`no pilot database (status ${row.status})`) };
  try {
    const tk = tenantPools('request').get(tenant.id, tenantConnection(row, deps.appKey));
    if (opts.schema) {
      const [shared, have] = await Promise.all([appliedMigrations(deps.knex), appliedMigrations(tk)]);
      const pending = shared.filter((m) => !have.includes(m)).length;
      if (pending)
        return {
          tenant,
          row,
          reach: {
            reachable: true,
            check: {
              name: 'tenant_db_schema_current',
              ok: false,
              detail: `the tenant database answered, but ${pending} migrations are pending (tenant-schema/run)`,
            },
          },
        };
    }
    const value = await fn(tk, row);
    return {
      tenant,
      row,
      value,
      reach: { reachable: true, check: { name: 'tenant_db_reachable', ok: true, detail: 'answered' } },
    };
  } catch (err) {
    if (!isUnreachable(err)) throw err;
    return { tenant, row, reach: fail(`the tenant database did not answer: ${reasonOf(err)}`) };
  }
}

/** One row's id, md5 (same columns as the copy's checksum, TimeZone UTC) and natural key. */
export interface RowHash {
  id: number;
  h: string;
  key: string | null;
}

/**
 * The rows' ids and md5s of a table (the tenant's rows in shared, every row in the tenant database).
 * @param limit the lowest ids only (shadow-read), or all when undefined
 * @param range only ids in [from, to) (reconciliation's differing buckets)
 */
export async function rowHashes(
  k: Knex,
  t: CopyTable,
  tenantId: number | null,
  limit?: number,
  range?: [number, number],
): Promise<RowHash[]> {
  const key = KEY_COLUMNS[t.table] && t.columns.includes(KEY_COLUMNS[t.table]) ? KEY_COLUMNS[t.table] : null;
  return k.transaction(async (trx) => {
    await trx.raw("SET LOCAL TimeZone = 'UTC'");
    const conds = [
      ...(tenantId === null ? [] : [whereOf(t, tenantId)]),
      ...(range ? [`x.id >= ${Number(range[0])} AND x.id < ${Number(range[1])}`] : []),
    ];
    const where = conds.length ? `WHERE ${conds.join(' AND ')}` : '';
    const r = await trx.raw<{ rows: RowHash[] }>(
      `SELECT x.id::bigint::float8 AS id, md5(${rowExpr('x', t.columns)}::text) AS h,
              ${key ? `x.${ident(key)}::text` : 'NULL'} AS key
         FROM ${ident(t.table)} x ${where} ORDER BY x.id${limit ? ` LIMIT ${Number(limit)}` : ''}`,
    );
    return r.rows.map((x) => ({ ...x, id: Number(x.id) }));
  });
}

/** Ids per bucket of bucketHashes. */
export const BUCKET_IDS = 1000;

/** One bucket of ids [b * 1000, (b + 1) * 1000): its row count and its rows' md5s concatenated in id order. */
export interface Bucket {
  b: number;
  n: number;
  hs: string;
}

/**
 * A table's rows as buckets of 1,000 ids (one scan, a few hundred answer rows instead of one per
 * row): equal `hs` on both sides means equal rows; the md5 of every `hs` concatenated in bucket
 * order is the copy's checksum (md5 over md5(row::text) in id order, TimeZone UTC).
 */
export async function bucketHashes(k: Knex, t: CopyTable, tenantId: number | null): Promise<Bucket[]> {
  return k.transaction(async (trx) => {
    await trx.raw("SET LOCAL TimeZone = 'UTC'");
    const where = tenantId === null ? '' : `WHERE ${whereOf(t, tenantId)}`;
    const r = await trx.raw<{ rows: { b: string; n: number; hs: string }[] }>(
      `SELECT (x.id / ${BUCKET_IDS})::bigint::text AS b, count(*)::int AS n,
              string_agg(md5(${rowExpr('x', t.columns)}::text), '' ORDER BY x.id) AS hs
         FROM ${ident(t.table)} x ${where} GROUP BY 1 ORDER BY min(x.id)`,
    );
    return r.rows.map((x) => ({ ...x, b: Number(x.b) }));
  });
}
