import type { Knex } from 'knex';
import { open } from '../lib/crypto.js';
import { TENANT_TABLES, TenantScope, type TenantTable } from './tenant-scope.js';
import { tenantPools } from './tenant-pools.js';
import { gateWrites, type GatedTransaction } from './autocommit-gate.js';

/**
 * Where a tenant's rows live (issue 15 item 4, decision in docs/decisions.md "Issue 15"): ONE
 * routing table read by TenantScope (through tenantScopeOf), the write plan and the production
 * status. Before cutover (`tenants.db_mode = shared_db`) every table is in the shared database;
 * after it (`tenant_db`) the MOVED tables are read and written in the tenant's own database, the
 * SHARED ones stay in the shared database.
 */

/** A tenant's mode (tenants.db_mode). */
export type DbMode = 'shared_db' | 'tenant_db';

/**
 * Tenant-scoped tables that stay in the shared database after cutover (decision): auth_tokens
 * (identity: every sign-in looks a token up before the tenant is known) and idempotency_keys (the
 * idempotency middleware reserves a key before the route's scope work, on the shared database).
 */
export const SHARED_TENANT_TABLES: readonly TenantTable[] = ['auth_tokens', 'idempotency_keys'];

/**
 * Identity and platform tables: always in the shared database, never through a tenant's pool for
 * writes. `users` and the role tables are also copied to the tenant database (a copy kept by the
 * user writes and the cutover's passes) so that tenant rows can keep their foreign keys to users
 * and the tenant database shows the same roles (issue 15 item 4).
 */
export const IDENTITY_TABLES = [
  'tenants',
  'users',
  'roles',
  'auth_tokens',
  'user_roles',
  'role_permissions',
  'permissions',
] as const;

/**
 * Tables whose rows move to the tenant database at cutover: every tenant-scoped table of
 * db/tenant-scope.ts but SHARED_TENANT_TABLES (tenant_counters and audit_log move: numbers and the
 * audit trail are written in the same transaction as the rows they number or describe).
 */
export const MOVED_TABLES: readonly TenantTable[] = TENANT_TABLES.filter((t) => !SHARED_TENANT_TABLES.includes(t));

/**
 * Identity tables a cut-over tenant's database keeps a copy of (written shared first, then mirrored
 * by mirrorUser: the user, the user's user_roles and the custom roles they name).
 */
export const MIRRORED_TABLES: readonly string[] = ['users', 'user_roles', 'roles'];

/**
 * Identity tables the cutover's shared → tenant passes keep in step besides the moved tables (to
 * tenant only; the rollback's tenant → shared passes skip every IDENTITY_TABLES). Their foreign-key
 * parents (roles, permissions) are added by the copy plan.
 */
export const PASSED_IDENTITY_TABLES: readonly string[] = ['users', 'user_roles', 'role_permissions'];

/**
 * Where writes to a table go after cutover (the write plan, item 4): `tenant_db` for a moved
 * table, `shared+tenant_db` for a mirrored identity table, `shared` otherwise.
 */
export function writeLocationAfterCutover(table: string): 'tenant_db' | 'shared+tenant_db' | 'shared' {
  if (MIRRORED_TABLES.includes(table)) return 'shared+tenant_db';
  return tableLocation(table, 'tenant_db') === 'tenant_db' ? 'tenant_db' : 'shared';
}

/** Where a table of a tenant in a mode is read and written. */
export function tableLocation(table: string, mode: DbMode): 'shared' | 'tenant_db' {
  return mode === 'tenant_db' && (MOVED_TABLES as readonly string[]).includes(table) ? 'tenant_db' : 'shared';
}

/** Advisory-lock class of the cutover lock (`pg_advisory_xact_lock[_shared](15015, tenant)`). */
export const CUTOVER_LOCK_CLASS = 15015;

/** How long a write waits for a cutover's lock, in ms (item 3 b: 5 s, then 503). */
export const WRITE_LOCK_WAIT_MS = 5000;

let lockWaitMs = WRITE_LOCK_WAIT_MS;
/**
 * Sets this process's lock wait (tests only: a test of a write that must outlast a slow locked pass
 * on a loaded machine); no argument restores WRITE_LOCK_WAIT_MS.
 */
export function configureTenantRouting(o: { lockWaitMs?: number } = {}): void {
  lockWaitMs = o.lockWaitMs ?? WRITE_LOCK_WAIT_MS;
}

/**
 * 503 `tenant_db_cutover_in_progress` (api/http/error-table.ts): a write waited WRITE_LOCK_WAIT_MS
 * for a cutover or production rollback of its tenant, or found the tenant moved twice.
 */
export class TenantDbCutoverInProgress extends Error {
  constructor() {
    super('The tenant is moving between databases. Retry in a minute.');
  }
}

/** The tenant moved while a write waited (internal: the write is retried once on the other side). */
class TenantMoved extends Error {
  constructor(readonly mode: DbMode) {
    super(`tenant moved to ${mode}`);
  }
}

/** Resolves a tenant's current knex (a mode) for the retry on the other side. */
export type KnexOfMode = (mode: DbMode) => Promise<Knex>;

/**
 * The gate of a write transaction (item 3 b): one statement (tenant_write_gate of migration
 * 20261207200000) taking the shared cutover lock and reading db_mode under it.
 * @returns the tenant's db_mode as seen by that database
 * @throws TenantDbCutoverInProgress when the lock was not granted within WRITE_LOCK_WAIT_MS
 */
export async function writeGate(trx: Knex.Transaction, tenantId: number, waitMs = lockWaitMs): Promise<DbMode> {
  try {
    const r = await trx.raw<{ rows: { mode: DbMode }[] }>('SELECT tenant_write_gate(?, ?) AS mode', [tenantId, waitMs]);
    return r.rows[0].mode;
  } catch (err) {
    if ((err as { code?: string }).code === '55P03') throw new TenantDbCutoverInProgress();
    throw err;
  }
}

/**
 * A knex whose `transaction(cb)` opens the gate first: the transaction holds the shared cutover
 * lock of the tenant until it ends, and when the tenant's db_mode is no longer `mode` the
 * transaction is rolled back and `cb` runs once more on the other side's knex, which then serves
 * every later query of this knex. A write run outside a transaction (autocommit: a builder's
 * insert/update/del/truncate, objection's insert/patch/delete, a raw INSERT/UPDATE/DELETE/...,
 * batchInsert) runs in such a gated transaction too (db/autocommit-gate.ts); reads stay
 * autocommit and ungated. Everything else is the underlying knex (a Proxy).
 * @param base the knex of the side `mode` names
 * @param other resolves the knex of a mode (the retry)
 */
export function gatedKnex(base: Knex, tenantId: number, mode: DbMode, other: KnexOfMode): Knex {
  let current = base;
  let side = mode;
  const attempt = (k: Knex, side: DbMode, cb: (trx: Knex.Transaction) => unknown, config?: Knex.TransactionConfig) =>
    k.transaction(async (trx) => {
      const now = await writeGate(trx, tenantId);
      if (now !== side) throw new TenantMoved(now);
      return cb(trx);
    }, config);
  // `transaction()` without a callback (knex's provider form): the same gate before it is handed out
  const opened = async (config?: Knex.TransactionConfig): Promise<Knex.Transaction> => {
    for (let tries = 0; ; tries += 1) {
      const trx = await current.transaction(config);
      let now: DbMode;
      try {
        now = await writeGate(trx, tenantId);
      } catch (err) {
        await trx.rollback();
        throw err;
      }
      if (now === side) return trx;
      await trx.rollback();
      if (tries > 0) throw new TenantDbCutoverInProgress();
      current = await other(now);
      side = now;
    }
  };
  const transaction = async (cb: unknown, config?: Knex.TransactionConfig) => {
    if (typeof cb !== 'function') return opened((cb ?? config) as Knex.TransactionConfig | undefined);
    const fn = cb as (trx: Knex.Transaction) => unknown;
    try {
      return await attempt(current, side, fn, config);
    } catch (err) {
      if (!(err instanceof TenantMoved)) throw err;
      // the rest of the request (or job) follows the tenant to the other side
      current = await other(err.mode);
      side = err.mode;
      try {
        return await attempt(current, side, fn, config);
      } catch (again) {
        if (again instanceof TenantMoved) throw new TenantDbCutoverInProgress();
        throw again;
      }
    }
  };
  const gate = transaction as GatedTransaction;
  const queryBuilder = () => gateWrites(current.queryBuilder(), gate);
  const raw = (...args: unknown[]) => gateWrites((current.raw as (...a: unknown[]) => Knex.Raw)(...args), gate);
  const batchInsert = (...args: Parameters<Knex['batchInsert']>) =>
    gate((trx) => current.batchInsert(...args).transacting(trx));
  return new Proxy(base, {
    get(_target, prop) {
      if (prop === 'transaction') return transaction;
      // builders and raws run their autocommit writes through the gate (db/autocommit-gate.ts);
      // knex.insert/update/from/... of the knex object call this.queryBuilder(), i.e. this trap
      if (prop === 'queryBuilder') return queryBuilder;
      if (prop === 'raw') return raw;
      if (prop === 'batchInsert') return batchInsert;
      return Reflect.get(current, prop, current);
    },
    apply(_target, thisArg, args) {
      return gateWrites(Reflect.apply(current, thisArg, args), gate);
    },
  });
}

/** What reaching a tenant database needs (tenant_databases row, APP_KEY). */
interface TenantDbRowLike {
  database_name: string | null;
  role_name: string | null;
  role_password_enc: string | null;
  server_host: string | null;
  server_port: number | null;
}

/**
 * The knex of a tenant database from its tenant_databases row (the sealed role password opened
 * here, as api/platform/tenant-db/state.ts seals it: same associated data).
 * @param use `request` (routes) or `job` pools
 * @throws Error when the row has no database or password
 */
export function tenantDbKnex(
  tenantId: number,
  row: TenantDbRowLike | undefined,
  appKey: Buffer,
  use: 'request' | 'job',
): Knex {
  if (!row?.database_name || !row.role_name || !row.role_password_enc || !row.server_host || !row.server_port)
    throw new Error(`tenant ${tenantId} is in tenant_db mode without a tenant database`);
  return tenantPools(use).get(tenantId, {
    host: row.server_host,
    port: row.server_port,
    database: row.database_name,
    user: row.role_name,
    password: open(appKey, row.role_password_enc, `tenant_databases.role_password:${tenantId}`),
  });
}

/** A tenant's routing: its mode and the knex of its moved tables (the shared knex before cutover). */
export interface TenantRoute {
  mode: DbMode;
  knex: Knex;
}

/**
 * Reads a tenant's db_mode (fresh: per request, per job) and picks the knex of its moved tables.
 * @param knex the shared database
 * @param appKey APP_KEY (absent: a tenant_db tenant cannot be reached, Error)
 */
export async function routeTenant(
  knex: Knex,
  tenantId: number,
  appKey: Buffer | undefined,
  use: 'request' | 'job' = 'request',
): Promise<TenantRoute> {
  const t = (await knex('tenants').where({ id: tenantId }).first('db_mode')) as { db_mode: DbMode } | undefined;
  const mode: DbMode = t?.db_mode === 'tenant_db' ? 'tenant_db' : 'shared_db';
  return { mode, knex: await knexOfMode(knex, tenantId, appKey, use, mode) };
}

async function knexOfMode(
  knex: Knex,
  tenantId: number,
  appKey: Buffer | undefined,
  use: 'request' | 'job',
  mode: DbMode,
): Promise<Knex> {
  if (mode === 'shared_db') return knex;
  if (!appKey) throw new Error('APP_KEY is needed to reach a tenant database');
  return tenantDbKnex(tenantId, await knex('tenant_databases').where({ tenant_id: tenantId }).first(), appKey, use);
}

/**
 * The TenantScope of a tenant (item 4): its knex from the tenant's db_mode, gated (every
 * `scope.knex.transaction`, and every write run outside a transaction, takes the cutover lock
 * shared and re-reads db_mode; moved: retried once on the other side; reads are not gated).
 * Build one per request and per job run, never cache it.
 * @param knex the shared database
 */
export async function tenantScopeOf(
  knex: Knex,
  tenantId: number,
  appKey: Buffer | undefined,
  use: 'request' | 'job' = 'request',
): Promise<TenantScope> {
  const route = await routeTenant(knex, tenantId, appKey, use);
  const other: KnexOfMode = (mode) => knexOfMode(knex, tenantId, appKey, use, mode);
  const shared = route.mode === 'tenant_db' ? { knex, tables: SHARED_TENANT_TABLES } : undefined;
  return new TenantScope(gatedKnex(route.knex, tenantId, route.mode, other), tenantId, shared);
}

/** One database a cross-tenant scan visits. */
export interface ScanTarget {
  knex: Knex;
  /** null on the shared database; the tenant on a tenant database */
  tenantId: number | null;
  /** Tenants a scan of the shared database must leave out (cut over: their rows are elsewhere). */
  excludeTenantIds: number[];
}

/**
 * Runs a cross-tenant scan (crons, event dispatch; item 4) on the shared database minus the cut-over
 * tenants, then on each cut-over tenant's database (in tenant id order). A tenant database that
 * fails is reported through `onError` and the others still run.
 * @param knex the shared database
 * @param fn the scan of one database; filter the shared one with `excludeTenantIds`
 * @param onlyTenantId a run limited to one tenant visits that tenant's database only: the shared
 *   one while it is not cut over, else its own; other tenants' databases are not opened, so one of
 *   them being unreachable cannot fail the run (null: every database)
 */
export async function forEachTenantDatabase(
  knex: Knex,
  appKey: Buffer | undefined,
  fn: (target: ScanTarget) => Promise<void>,
  onError: (tenantId: number, err: unknown) => void = () => {},
  onlyTenantId: number | null = null,
): Promise<void> {
  const moved = (
    (await knex('tenants').where({ db_mode: 'tenant_db' }).orderBy('id').select('id')) as { id: number }[]
  ).map((t) => Number(t.id));
  const only = onlyTenantId === null ? null : Number(onlyTenantId);
  if (only === null || !moved.includes(only)) await fn({ knex, tenantId: null, excludeTenantIds: moved });
  for (const id of moved) {
    if (only !== null && id !== only) continue;
    try {
      await fn({ knex: await knexOfMode(knex, id, appKey, 'job', 'tenant_db'), tenantId: id, excludeTenantIds: [] });
    } catch (err) {
      onError(id, err);
    }
  }
}

/** The outcome of one tenant database's migrations (bin/release.ts). */
export interface TenantMigration {
  tenant_id: number;
  database: string | null;
  applied?: string[];
  error?: string;
}

/**
 * Applies the shared database's pending migrations in every tenant database that has a schema
 * (status schema_migrated, data_copied or production; item 4: `bin/release.ts` migrates them too),
 * as each tenant's role. A database that fails is reported and the others still run.
 * @param knex the shared database (already migrated)
 * @returns per tenant database the migrations applied or the error
 */
export async function migrateTenantDatabases(knex: Knex, appKey: Buffer | undefined): Promise<TenantMigration[]> {
  const rows = (await knex('tenant_databases')
    .whereIn('status', ['schema_migrated', 'data_copied', 'production'])
    .orderBy('tenant_id')) as (TenantDbRowLike & { tenant_id: number })[];
  const out: TenantMigration[] = [];
  for (const row of rows) {
    const r: TenantMigration = { tenant_id: row.tenant_id, database: row.database_name };
    try {
      if (!appKey) throw new Error('APP_KEY is needed to reach a tenant database');
      const [, applied] = await tenantDbKnex(row.tenant_id, row, appKey, 'job').migrate.latest();
      r.applied = applied as string[];
    } catch (err) {
      r.error = String((err as Error)?.message ?? err).slice(0, 300);
    }
    out.push(r);
  }
  return out;
}
