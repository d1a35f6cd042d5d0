/**
 * The cut-over test mode (issue 15, "Cut-over tenant: #2's external API tests and #6's customer,
 * invoice, ticket tests pass"): with TEST_TENANT_DB=1 every tenant made by makeTenant is cut over
 * to a tenant database of its own on the test run's PostgreSQL before the test sees it.
 *
 * How the tenant database is made (fast, and as the real steps leave it):
 * - once per mocha process a template database is migrated with db/migrations as a role of its own
 *   (the schema run's work: tables owned by the migrating role);
 * - per tenant: a role and a database named as the pilot names them (`isp_t_<slug>`, `..._app`,
 *   the pilot's marker comments, CONNECT revoked from PUBLIC), the database cloned from the template
 *   (`CREATE DATABASE ... TEMPLATE`) and its objects handed to the tenant's role (REASSIGN OWNED);
 *   the tenant_databases row as the pilot, schema and copy runs leave it (`data_copied`, the sealed
 *   role password);
 * - then the REAL cutover job work (`executeMove` 'to_tenant': passes, exclusive lock, verification,
 *   id blocks, db_mode in both databases, status `production`, approval `used`) for an approval and
 *   a `cutover_production` run recorded as the route records them.
 * The app then finds the rows only through its routing (tenants.db_mode).
 */
import knexPkg from 'knex';
import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { env, registerCleanup } from './env.js';
import { TEST_WEB_APP_KEY } from './http.js';
import { knexConfig } from '../../db/knex.js';
import { tenantKnexConfig } from '../../db/tenant-pools.js';
import { IDENTITY_TABLES, MOVED_TABLES, tenantDbKnex, tenantScopeOf } from '../../db/tenant-routing.js';
import { closeTenantPools } from '../../db/tenant-pools.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { passPlan, syncPass, type SyncTable } from '../../api/platform/tenant-db/cutover-passes.js';
import { ID_BLOCK_SIZE } from '../../api/platform/tenant-db/id-blocks.js';
import { whereOf } from '../../api/platform/tenant-db/copy-plan.js';
import { ident, newRolePassword, pilotNames, sealRolePassword } from '../../api/platform/tenant-db/state.js';
import { pilotMarker } from '../../api/platform/tenant-db/pilot.js';

/** Whether this mocha process runs in the cut-over mode (TEST_TENANT_DB=1, set by bin/test.ts). */
export const TENANT_DB_MODE = process.env.TEST_TENANT_DB === '1';

const TEMPLATE_DB = 'isp_tdb_template';
const TEMPLATE_ROLE = 'isp_tdb_template_owner';

interface ModeState {
  template?: Promise<void>;
  plan?: Promise<SyncTable[]>;
  admin?: Knex;
  knexes: Map<number, Knex>;
  ids: number[];
  /** Per cut-over tenant: its rows in the shared database's moved tables right after the cutover. */
  footprints: Map<number, Record<string, string>>;
}
// Kept on globalThis like env.ts: mocha may load the helpers as more than one module instance.
const g = globalThis as unknown as { __ispTenantDbMode?: ModeState };
const state: ModeState = (g.__ispTenantDbMode ??= { knexes: new Map(), ids: [], footprints: new Map() });

const urlOf = (database: string) => env.adminDatabaseUrl.replace(/\/[^/]+$/, `/${database}`);

/** The superuser's connection to the server's `postgres` database (one per process). */
function admin(): Knex {
  if (!state.admin) {
    state.admin = knexPkg.knex(knexConfig(env.adminDatabaseUrl, { min: 0, max: 1 }));
    const a = state.admin;
    registerCleanup(async () => {
      await closeTenantPools();
      await Promise.all([...state.knexes.values()].map((k) => k.destroy()));
      state.knexes.clear();
      await a.destroy();
      delete state.admin;
      delete state.template;
    });
  }
  return state.admin;
}

/** Creates and migrates the template database once per process (the schema run's work). */
function template(): Promise<void> {
  return (state.template ??= (async () => {
    const a = admin();
    const password = newRolePassword();
    await a.raw(`CREATE ROLE ${ident(TEMPLATE_ROLE)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${password}'`);
    await a.raw(`CREATE DATABASE ${ident(TEMPLATE_DB)} OWNER ${ident(TEMPLATE_ROLE)}`);
    const u = new URL(env.adminDatabaseUrl);
    const k = knexPkg.knex(
      tenantKnexConfig({
        host: u.hostname,
        port: Number(u.port),
        database: TEMPLATE_DB,
        user: TEMPLATE_ROLE,
        password,
      }),
    );
    try {
      await k.migrate.latest();
    } finally {
      await k.destroy();
    }
    // the template itself belongs to the superuser, so REASSIGN OWNED in a clone moves only the
    // clone's objects
    await a.raw(`ALTER DATABASE ${ident(TEMPLATE_DB)} OWNER TO CURRENT_USER`);
  })());
}

/**
 * Cuts a tenant (freshly made, its rows in the shared database) over to a tenant database of its
 * own: pilot-like role and database (cloned from the migrated template), the tenant_databases row
 * of a verified copy, then the real cutover work (executeMove) under a used approval.
 * @throws Error when the cutover's verification fails (the run's error)
 */
export async function cutOverTenant(tenantId: number, slug: string): Promise<void> {
  await template();
  const a = admin();
  const subdomain = slug
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')
    .slice(0, 40);
  const { database, role } = pilotNames(subdomain);
  const password = newRolePassword();
  const marker = pilotMarker(tenantId);
  await a.raw(`CREATE ROLE ${ident(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${password}'`);
  await a.raw(`COMMENT ON ROLE ${ident(role)} IS '${marker}'`);
  await a.raw(
    `CREATE DATABASE ${ident(database)} TEMPLATE ${ident(TEMPLATE_DB)} OWNER ${ident(role)} STRATEGY FILE_COPY`,
  );
  await a.raw(`COMMENT ON DATABASE ${ident(database)} IS '${marker}'`);
  await a.raw(`REVOKE CONNECT, TEMPORARY ON DATABASE ${ident(database)} FROM PUBLIC`);
  await a.raw(`GRANT CONNECT ON DATABASE ${ident(database)} TO ${ident(role)}`);
  const su = knexPkg.knex(knexConfig(urlOf(database), { min: 0, max: 2 }));
  state.knexes.set(tenantId, su);
  state.ids.push(tenantId);
  await su.raw(`REASSIGN OWNED BY ${ident(TEMPLATE_ROLE)} TO ${ident(role)}`);
  const oids = (
    await a.raw<{ rows: { role_oid: string; database_oid: string }[] }>(
      `SELECT (SELECT oid FROM pg_roles WHERE rolname = ?) AS role_oid,
              (SELECT oid FROM pg_database WHERE datname = ?) AS database_oid`,
      [role, database],
    )
  ).rows[0];
  const u = new URL(env.adminDatabaseUrl);
  const row = {
    status: 'data_copied',
    database_name: database,
    role_name: role,
    server_host: u.hostname,
    server_port: Number(u.port),
    subdomain,
    db_user_host: '%',
    role_password_enc: sealRolePassword(TEST_WEB_APP_KEY, tenantId, password),
    role_oid: Number(oids.role_oid),
    database_oid: Number(oids.database_oid),
    schema_run_at: new Date(),
    updated_at: new Date(),
  };
  await env
    .knex('tenant_databases')
    .insert({ tenant_id: tenantId, ...row })
    .onConflict('tenant_id')
    .merge();
  const [run] = await env
    .knex('tenant_db_runs')
    .insert({ tenant_id: tenantId, kind: 'cutover_production', status: 'running', started_at: new Date() })
    .returning('id');
  const now = Date.now();
  await env.knex('tenant_db_approvals').insert({
    tenant_id: tenantId,
    fingerprint: randomBytes(32).toString('hex'),
    approver: 'Test Mode Approver',
    rollback_owner: 'Test Mode Rollback',
    monitoring_owner: 'Test Mode Monitor',
    reason: 'The cut-over test mode (TEST_TENANT_DB=1)',
    window_start: new Date(now - 3600_000),
    window_end: new Date(now + 3600_000),
    cutover_run_id: run.id,
  });
  const tk = tenantDbKnex(tenantId, row, TEST_WEB_APP_KEY, 'job');
  const plan = await (state.plan ??= passPlan(env.knex, 'to_tenant'));
  // the pass over the tables that hold rows of the tenant (the clone is empty: nothing to delete)
  const held = await tablesWithRows(plan, tenantId);
  const pass = await syncPass(
    env.knex,
    tk,
    plan.filter((t) => held.has(t.table)),
    tenantId,
  );
  const blocks = await idBlocks(tk, tenantId, plan);
  await tk('tenants').where({ id: tenantId }).update({ db_mode: 'tenant_db' });
  await env.knex.transaction(async (trx) => {
    await trx('tenants').where({ id: tenantId }).update({ db_mode: 'tenant_db' });
    await trx('tenant_databases')
      .where({ tenant_id: tenantId })
      .update({ status: 'production', updated_at: new Date() });
    await trx('tenant_db_approvals')
      .where({ tenant_id: tenantId, cutover_run_id: run.id })
      .update({ status: 'used', used_at: new Date() });
    await trx('tenant_db_runs')
      .where({ id: run.id })
      .update({
        status: 'succeeded',
        result: JSON.stringify({ db_mode: 'tenant_db', passes: [pass], id_blocks: blocks }),
        finished_at: new Date(),
      });
  });
  state.footprints.set(tenantId, await sharedFootprint(tenantId));
}

/** The tables of the plan holding rows of the tenant in the shared database (one query). */
async function tablesWithRows(plan: SyncTable[], tenantId: number): Promise<Set<string>> {
  const sql = plan
    .map((t) => `SELECT '${t.table}' AS t WHERE EXISTS (SELECT 1 FROM ${ident(t.table)} WHERE ${whereOf(t, tenantId)})`)
    .join(' UNION ALL ');
  return new Set(((await env.knex.raw<{ rows: { t: string }[] }>(sql)).rows ?? []).map((r) => r.t));
}

/**
 * The cutover's id blocks (api/platform/tenant-db/id-blocks.ts startIdBlocks: reserveIdBlock then
 * applyIdBlock per serial moved table) in two round trips: the same statements in one DO block on
 * the shared database (ALTER SEQUENCE ... INCREMENT BY the block, nextval, back to 1, the
 * tenant_db_id_blocks row), then the RESTART/MAXVALUE of each tenant sequence in one on the tenant
 * database.
 */
async function idBlocks(tk: Knex, tenantId: number, plan: SyncTable[]) {
  const tables = plan
    .filter((t) => t.serial && !(IDENTITY_TABLES as readonly string[]).includes(t.table))
    .map((t) => t.table);
  const list = tables.map((t) => `'${t}'`).join(', ');
  await env.knex.raw(`DO $$
    DECLARE t text; seq text; called boolean; e bigint;
    BEGIN
      FOREACH t IN ARRAY ARRAY[${list}]::text[] LOOP
        seq := pg_get_serial_sequence(t, 'id');
        EXECUTE format('ALTER SEQUENCE %s INCREMENT BY ${ID_BLOCK_SIZE}', seq);
        EXECUTE format('SELECT is_called FROM %s', seq) INTO called;
        IF NOT called THEN PERFORM nextval(seq); END IF;
        e := nextval(seq);
        EXECUTE format('ALTER SEQUENCE %s INCREMENT BY 1', seq);
        INSERT INTO tenant_db_id_blocks (tenant_id, table_name, block_start, block_end)
          VALUES (${Number(tenantId)}, t, e - ${ID_BLOCK_SIZE} + 1, e);
      END LOOP;
    END $$`);
  const blocks = (
    (await env.knex('tenant_db_id_blocks').where({ tenant_id: tenantId }).orderBy('id')) as {
      table_name: string;
      block_start: string;
      block_end: string;
    }[]
  ).map((b) => ({ table: b.table_name, start: Number(b.block_start), end: Number(b.block_end) }));
  await tk.raw(
    `DO $$ BEGIN ${blocks
      .map(
        (b) =>
          `EXECUTE format('ALTER SEQUENCE %s MINVALUE 1 MAXVALUE ${b.end} RESTART WITH ${b.start}', pg_get_serial_sequence('${b.table}', 'id'));`,
      )
      .join(' ')} END $$`,
  );
  return blocks;
}

/**
 * The knex holding a tenant's moved tables (db/tenant-routing.ts MOVED_TABLES): the tenant
 * database (as the superuser) for a tenant cut over by this mode, else the shared database. Tests
 * read and write customers, invoices, tickets, audit_log, tenant_counters ... through it; identity
 * tables (tenants, users, roles, auth_tokens) and idempotency_keys stay on env.knex.
 */
export function tenantKnex(tenantId: number): Knex {
  return state.knexes.get(Number(tenantId)) ?? env.knex;
}

/** The tenants cut over by this process so far (in creation order). */
export function cutOverTenantIds(): number[] {
  return [...state.ids];
}

/** A tenant's TenantScope as a request would get it (routed by db_mode). */
export function routedScope(tenantId: number): Promise<TenantScope> {
  return tenantScopeOf(env.knex, tenantId, TEST_WEB_APP_KEY, 'request');
}

/**
 * The first row of a moved table matching `where`, wherever it lives: the shared database, then each
 * tenant database of this mode (ids never collide across them: the cutover's id blocks).
 */
export async function findRow(table: string, where: Record<string, unknown>): Promise<any> {
  return (await knexHolding(table, where))(table).where(where).first();
}

/** The database holding a row of a moved table matching `where` (shared when none does). */
export async function knexHolding(table: string, where: Record<string, unknown>): Promise<Knex> {
  for (const k of [env.knex, ...state.knexes.values()]) if (await k(table).where(where).first()) return k;
  return env.knex;
}

/**
 * A tenant's rows in the shared database's moved tables (db/tenant-routing.ts MOVED_TABLES), per
 * table `count:md5` of the rows' text (order-independent), in one query.
 */
export async function sharedFootprint(tenantId: number): Promise<Record<string, string>> {
  const sql = MOVED_TABLES.map(
    (t) =>
      `SELECT '${t}' AS t, count(*) || ':' || md5(coalesce(string_agg(md5(x::text), '' ORDER BY md5(x::text)), '')) AS f
         FROM ${ident(t)} x WHERE x.tenant_id = ${Number(tenantId)}`,
  ).join(' UNION ALL ');
  const rows = (await env.knex.raw<{ rows: { t: string; f: string }[] }>(sql)).rows;
  return Object.fromEntries(rows.map((r) => [r.t, r.f]));
}

/**
 * The cut-over tenants of this process whose rows in the shared database's moved tables changed
 * since their cutover ("shared rows untouched"): tenant, table, then and now (`count:md5`).
 * Tenants deleted since (their shared rows cascaded away) are left out.
 */
export async function sharedFootprintChanges(): Promise<
  { tenant: number; table: string; then: string; now: string }[]
> {
  const out = [];
  for (const [tenant, then] of state.footprints) {
    if (!(await env.knex('tenants').where({ id: tenant }).first('id'))) continue;
    const now = await sharedFootprint(tenant);
    for (const table of Object.keys(then))
      if (then[table] !== now[table]) out.push({ tenant, table, then: then[table], now: now[table] });
  }
  return out;
}
