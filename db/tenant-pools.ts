import knexPkg from 'knex';
import type { Knex } from 'knex';
import { createHash } from 'node:crypto';
import { MIGRATIONS_DIR } from './knex.js';

const { knex: createKnexInstance } = knexPkg;

/**
 * A knex pool per tenant database, connected as the tenant's own role (issue 14): small (requests
 * 0..2, jobs 0..JOB_POOL_MAX), opened on first use, closed on shutdown. Keyed by tenant, so a
 * changed password or host (a rollback and a new pilot) replaces the tenant's pool.
 */

/** Where and as whom a tenant database is reached; the password is opened from its sealed column. */
export interface TenantDbConnection {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
}

/** Time bounds of a tenant pool, in ms. */
export interface TenantPoolBounds {
  connectTimeoutMs: number;
  /** statement_timeout of every session (0: none, for migrations and copies) */
  statementTimeoutMs: number;
  /** most connections of one tenant's pool (default 2) */
  maxConnections?: number;
}

/**
 * The knex configuration of a tenant database as its role: the same migrations directory and table
 * as db/knex.ts, so `migrate.latest()` applies the shared database's own migrations.
 */
export function tenantKnexConfig(
  conn: TenantDbConnection,
  bounds: TenantPoolBounds = { connectTimeoutMs: 5000, statementTimeoutMs: 0 },
  pool = { min: 0, max: 2 },
): Knex.Config {
  return {
    client: 'pg',
    connection: {
      host: conn.host,
      port: conn.port,
      database: conn.database,
      user: conn.user,
      password: conn.password,
      connectionTimeoutMillis: bounds.connectTimeoutMs,
      ...(bounds.statementTimeoutMs ? { statement_timeout: bounds.statementTimeoutMs } : {}),
    },
    pool: { ...pool, idleTimeoutMillis: 10_000 },
    acquireConnectionTimeout: bounds.connectTimeoutMs + 5000,
    // knex's own console lines (e.g. "Acquire connection error") stay quiet: every failure reaches the
    // caller, which records it (the run's error, the test's 422)
    log: { warn: () => {}, error: () => {}, deprecate: () => {}, debug: () => {} },
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], extension: 'ts', tableName: 'knex_migrations' },
  };
}

/** The pools of one process. */
export interface TenantPools {
  /** The pool of a tenant database (created on first use; replaced when the connection changed). */
  get(tenantId: number, conn: TenantDbConnection): Knex;
  /** Closes one tenant's pool (before its database is dropped). */
  release(tenantId: number): Promise<void>;
  /** Closes every pool (process shutdown). */
  close(): Promise<void>;
}

/**
 * Creates the pool registry.
 * @param bounds time bounds of each pool (default 5 s connect, no statement timeout)
 */
export function createTenantPools(bounds?: TenantPoolBounds): TenantPools {
  const pools = new Map<number, { key: string; knex: Knex }>();
  const keyOf = (c: TenantDbConnection) =>
    createHash('sha256')
      .update(JSON.stringify([c.host, c.port, c.database, c.user, c.password]))
      .digest('hex');
  const release = async (tenantId: number) => {
    const p = pools.get(tenantId);
    pools.delete(tenantId);
    if (p) await p.knex.destroy();
  };
  return {
    get(tenantId, conn) {
      const key = keyOf(conn);
      const existing = pools.get(tenantId);
      if (existing?.key === key) return existing.knex;
      if (existing) void release(tenantId);
      const knex = createKnexInstance(tenantKnexConfig(conn, bounds, { min: 0, max: bounds?.maxConnections ?? 2 }));
      pools.set(tenantId, { key, knex });
      return knex;
    },
    release,
    async close() {
      await Promise.all([...pools.keys()].map(release));
    },
  };
}

/**
 * Connections of a tenant's JOB pool (issue 15, decision in docs/decisions.md "Cut-over tenants:
 * small fixes"). Every per-tenant job of one worker process shares it (tenantPools('job') is per
 * process, not per queue). Most jobs hold one connection at a time; two hold a transaction and
 * query outside it, i.e. 2 at their peak: customer-network-push (its transaction + the fake
 * driver's own connection, "like a router") and imap-sync (the account lock's transaction for the
 * whole run + each query of the sync). Such jobs cannot deadlock on the pool when it has at least
 * (their concurrency together) × (2 - 1) + 1 connections: customer-network 4 + imap-sync 4 + 1 = 9
 * with workers/registry.ts's concurrencies (a test checks the bound against the registry); one more
 * for the jobs that hold one. Idle connections close after 10 s (min 0).
 */
export const JOB_POOL_MAX = 10;

/**
 * Bounds of the two registries of a process (decision): requests (the connection test, previews,
 * cut-over tenants' routes) wait at most 5 s for a connection and 10 s for a statement, 2
 * connections per tenant; jobs (schema, copy, every per-tenant job) 5 s to connect and no statement
 * timeout (a migration or a batch may take longer), JOB_POOL_MAX connections per tenant.
 */
export const REQUEST_POOL_BOUNDS: TenantPoolBounds = { connectTimeoutMs: 5000, statementTimeoutMs: 10_000 };
export const JOB_POOL_BOUNDS: TenantPoolBounds = {
  connectTimeoutMs: 5000,
  statementTimeoutMs: 0,
  maxConnections: JOB_POOL_MAX,
};

const shared: Partial<Record<'request' | 'job', TenantPools>> = {};
/**
 * The process's pools.
 * @param use `request` (bounded statements, for routes) or `job` (default, for the tenant-db jobs)
 */
export function tenantPools(use: 'request' | 'job' = 'job'): TenantPools {
  return (shared[use] ??= createTenantPools(use === 'request' ? REQUEST_POOL_BOUNDS : JOB_POOL_BOUNDS));
}
/** Closes the process's pools (shutdown of the worker and web processes; before a database is dropped). */
export async function closeTenantPools(): Promise<void> {
  const all = Object.values(shared);
  delete shared.request;
  delete shared.job;
  await Promise.all(all.map((p) => p.close()));
}

/**
 * Closes one tenant's pools of both registries of this process (before its database is dropped).
 */
export async function releaseTenantPools(tenantId: number): Promise<void> {
  await Promise.all(Object.values(shared).map((p) => p.release(tenantId)));
}
