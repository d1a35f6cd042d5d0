import type { Knex } from 'knex';
import { clientAddrAllowed } from './admin.js';
import type { TenantDbRow } from './state.js';

/**
 * The tenant database's schema (issue 14 items 4-5, decision): the shared database's own
 * migrations (db/migrations, knex_migrations), applied in the tenant database as its role, so the
 * tables are owned by it and cannot drift from the shared schema.
 */

/** Tables the data copy fills; the preview reports whether they exist. */
export const PILOT_TABLES = ['tenants', 'packages', 'olts', 'onus', 'users', 'customers', 'invoices', 'tickets'];

/** Names of the migrations recorded in a database's knex_migrations, in order (empty when none). */
export async function appliedMigrations(knex: Knex): Promise<string[]> {
  const has = await knex.raw<{ rows: { t: string | null }[] }>(
    "SELECT to_regclass('public.knex_migrations')::text AS t",
  );
  if (!has.rows[0]?.t) return [];
  const rows = (await knex('knex_migrations').orderBy('id').select('name')) as { name: string }[];
  return rows.map((r) => r.name);
}

/** The migration files of db/migrations as knex lists them (the shared database's own list). */
export async function migrationFiles(tenantKnex: Knex): Promise<string[]> {
  const [done, pending] = (await tenantKnex.migrate.list()) as [{ name: string }[], { file: string }[]];
  return [...done.map((d) => d.name), ...pending.map((p) => p.file)];
}

/**
 * GET tenant-schema/preview: applied and pending migrations of the tenant database and which pilot
 * tables are present.
 */
export async function schemaPreview(tenantKnex: Knex) {
  const [done, pending] = (await tenantKnex.migrate.list()) as [{ name: string }[], { file: string }[]];
  const present = await tenantKnex.raw<{ rows: { table_name: string }[] }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name = ANY(?)",
    [PILOT_TABLES],
  );
  const names = new Set(present.rows.map((r) => r.table_name));
  return {
    applied: done.map((d) => d.name),
    pending: pending.map((p) => p.file),
    pilot_tables: PILOT_TABLES.map((t) => ({ table: t, present: names.has(t) })),
  };
}

/**
 * The schema run's work (job): applies the pending migrations as the tenant role.
 * @param log the job's log (bull-board): one line per migration applied, or one saying none was pending
 */
export async function executeSchemaRun(
  knex: Knex,
  tenantKnex: Knex,
  tenantId: number,
  log: (line: string) => Promise<void> = async () => {},
) {
  const [, applied] = (await tenantKnex.migrate.latest()) as [number, string[]];
  const names = await appliedMigrations(tenantKnex);
  for (const m of applied) await log(`migration ${m}: applied`);
  if (!applied.length) await log(`no migration pending (${names.length} applied)`);
  await knex('tenant_databases')
    .where({ tenant_id: tenantId })
    .update({ status: 'schema_migrated', schema_run_at: knex.fn.now(), updated_at: knex.fn.now() });
  return { applied, schema_version: names[names.length - 1] ?? null, migrations: names.length };
}

/**
 * POST tenant-db/test (issue 14 item 4): read-only, as the tenant role.
 * @returns {ok, server_version, client_addr_allowed, schema_version}
 * @throws whatever the connection throws (the route answers 422 with the reason)
 */
export async function testTenantDb(tenantKnex: Knex, row: TenantDbRow) {
  const r = await tenantKnex.raw<{ rows: { v: string; addr: string | null; ro: string }[] }>(
    "SELECT current_setting('server_version') AS v, host(inet_client_addr()) AS addr, current_user AS ro",
  );
  const names = await appliedMigrations(tenantKnex);
  return {
    ok: true,
    server_version: r.rows[0].v,
    client_addr_allowed: clientAddrAllowed(row.db_user_host, r.rows[0].addr),
    schema_version: names[names.length - 1] ?? null,
  };
}
