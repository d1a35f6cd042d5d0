import type { Knex } from 'knex';
import { resolvePlatformTenant } from '../tenant-param.js';
import { copyPlan, type CopyTable } from './copy-plan.js';
import { appliedMigrations, PILOT_TABLES, testTenantDb } from './schema.js';
import { ident, readTenantDb } from './state.js';
import { tenantDatabaseSummary } from './runs.js';
import { moduleRead, readSource } from './module-read.js';
import { writePlan, type RoutedModule } from './write-plan.js';
import { SECRET_COLUMN, withTenantDb, type ReportDeps } from './report-base.js';
import {
  IDENTITY_TABLES,
  MIRRORED_TABLES,
  MOVED_TABLES,
  SHARED_TENANT_TABLES,
  tableLocation,
  type DbMode,
} from '../../../db/tenant-routing.js';

/**
 * The read-only reports of issue 14 item 8 (GET `tenant-db/...`): in the request on the request
 * pool (5 s connect, 10 s statement timeout), no job; an unreachable tenant database answers 200
 * with the failing check `tenant_db_reachable` (`tenant_db: {reachable, check}` in every answer).
 */

/** Reports reading the copied tables need the current schema (withTenantDb's opts.schema). */
const SCHEMA = { schema: true };
/** Rows shown per table by read-sample. */
const SAMPLE_ROWS = 5;
/** Rows listed per table by demo-flow. */
const DEMO_ROWS = 20;

/** `to_jsonb(x)` without the columns a report never shows (password hashes, sealed secrets). */
function safeJson(t: CopyTable, alias = 'x'): string {
  const hidden = t.columns.filter((c) => SECRET_COLUMN.test(c));
  return `to_jsonb(${alias})${hidden.map((c) => ` - '${c.replace(/'/g, "''")}'`).join('')}`;
}

/** Counts of the pilot tables in the tenant database. */
async function counts(tk: Knex): Promise<Record<string, number>> {
  const parts = PILOT_TABLES.map((t) => `(SELECT count(*)::int FROM ${ident(t)}) AS ${ident(t)}`);
  const r = await tk.raw<{ rows: Record<string, number>[] }>(`SELECT ${parts.join(', ')}`);
  return r.rows[0];
}

/** GET tenant-db/read-sample: count and the 5 lowest-id rows of each pilot table (no secret columns). */
export async function readSample(deps: ReportDeps, ref: string) {
  const r = await withTenantDb(
    deps,
    ref,
    async (tk) => {
      const plan = (await copyPlan(deps.knex)).filter((t) => PILOT_TABLES.includes(t.table));
      const tables = [];
      for (const t of plan) {
        const x = await tk.raw<{ rows: { n: number; rows: unknown[] }[] }>(
          `SELECT (SELECT count(*)::int FROM ${ident(t.table)}) AS n,
                coalesce((SELECT json_agg(s.j ORDER BY s.id) FROM (SELECT x.id, ${safeJson(t)} AS j
                   FROM ${ident(t.table)} x ORDER BY x.id LIMIT ${SAMPLE_ROWS}) s), '[]') AS rows`,
        );
        tables.push({ table: t.table, count: x.rows[0].n, rows: x.rows[0].rows });
      }
      return tables;
    },
    SCHEMA,
  );
  return { status: r.row.status, tenant_db: r.reach, tables: r.value ?? [] };
}

/** GET tenant-db/demo-flow: DEMO- customers of the tenant database, their invoices and tickets (written by #13). */
export async function demoFlow(deps: ReportDeps, ref: string) {
  const r = await withTenantDb(
    deps,
    ref,
    async (tk) => {
      const plan = await copyPlan(deps.knex);
      const of = (name: string) => plan.find((t) => t.table === name)!;
      const list = async (t: CopyTable, where: string) => {
        const x = await tk.raw<{ rows: { n: number; rows: unknown[] }[] }>(
          `SELECT (SELECT count(*)::int FROM ${ident(t.table)} x WHERE ${where}) AS n,
                coalesce((SELECT json_agg(s.j ORDER BY s.id) FROM (SELECT x.id, ${safeJson(t)} AS j
                   FROM ${ident(t.table)} x WHERE ${where} ORDER BY x.id LIMIT ${DEMO_ROWS}) s), '[]') AS rows`,
        );
        return { count: x.rows[0].n, rows: x.rows[0].rows };
      };
      const demo = "x.customer_id IN (SELECT c.id FROM customers c WHERE c.code LIKE 'DEMO-%')";
      return {
        customers: await list(of('customers'), "x.code LIKE 'DEMO-%'"),
        invoices: await list(of('invoices'), demo),
        tickets: await list(of('tickets'), demo),
      };
    },
    SCHEMA,
  );
  return {
    status: r.row.status,
    tenant_db: r.reach,
    ...(r.value ?? { customers: null, invoices: null, tickets: null }),
  };
}

/** GET tenant-db/pilot-health: latency (ms), server version, schema, counts, last run. */
export async function pilotHealth(deps: ReportDeps, ref: string) {
  const r = await withTenantDb(deps, ref, async (tk, row) => {
    const t0 = process.hrtime.bigint();
    await tk.raw('SELECT 1');
    const latency_ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const test = await testTenantDb(tk, row);
    const [shared, tenant] = await Promise.all([appliedMigrations(deps.knex), appliedMigrations(tk)]);
    return {
      latency_ms: Math.round(latency_ms * 10) / 10,
      server_version: test.server_version,
      client_addr_allowed: test.client_addr_allowed,
      schema: {
        version: test.schema_version,
        applied: tenant.length,
        pending: shared.filter((m) => !tenant.includes(m)).length,
      },
      counts: tenant.length ? await counts(tk) : null,
    };
  });
  const { runs } = await tenantDatabaseSummary(deps.knex, r.tenant.id);
  return {
    status: r.row.status,
    tenant_db: r.reach,
    ...(r.value ?? { latency_ms: null, server_version: null, client_addr_allowed: null, schema: null, counts: null }),
    last_run: runs[0] ?? null,
  };
}

/**
 * GET tenant-db/production-status: status, db_mode (`tenant_db` in production, else `shared`), the
 * read flag, where reads come from now and the last 20 runs.
 */
export async function productionStatus(deps: ReportDeps, ref: string) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  const { database, runs } = await tenantDatabaseSummary(deps.knex, tenant.id);
  const row = await readTenantDb(deps.knex, tenant.id);
  const src = await readSource(deps.knex, row, deps.appKey);
  return {
    status: database.status,
    db_mode: database.status === 'production' ? 'tenant_db' : 'shared',
    use_tenant_db_read: database.use_tenant_db_read,
    reads: { source: src.tk ? 'tenant_db' : 'shared', fallback_reason: src.reason ?? null },
    runs,
    // issue 15 item 4: where the tenant's tables are now, from the one routing table
    routing: await routingOf(deps.knex, tenant.id),
  };
}

/** GET tenant-db/write-plan: per module where writes go now, in dual write, after cutover. */
export async function writePlanReport(deps: ReportDeps, ref: string) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  return writePlan((await readTenantDb(deps.knex, tenant.id)).status);
}

/** GET tenant-db/{module} and tenant-db/module-read/{module}: the first page with source and fallback_reason. */
export async function moduleReport(deps: ReportDeps, ref: string, module: RoutedModule) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  return moduleRead(deps.knex, await readTenantDb(deps.knex, tenant.id), deps.appKey, module);
}

/** A tenant's routing (issue 15 item 4): its tenants.db_mode and each table's location by it. */
async function routingOf(knex: ReportDeps['knex'], tenantId: number) {
  const t = (await knex('tenants').where({ id: tenantId }).first('db_mode')) as { db_mode: DbMode } | undefined;
  const mode: DbMode = t?.db_mode === 'tenant_db' ? 'tenant_db' : 'shared_db';
  return {
    db_mode: mode,
    tenant_db_tables: MOVED_TABLES.filter((x) => tableLocation(x, mode) === 'tenant_db'),
    shared_tables: [
      ...SHARED_TENANT_TABLES,
      ...IDENTITY_TABLES.filter((x) => !(SHARED_TENANT_TABLES as readonly string[]).includes(x)),
    ],
    mirrored_tables: MIRRORED_TABLES,
  };
}
