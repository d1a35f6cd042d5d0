import type { Knex } from 'knex';
import type pg from 'pg';
import { isIP } from 'node:net';
import { InvalidTransition, ValidationFailed, type FieldErrors } from '../../errors.js';
import type { PlatformTenantRow } from '../tenant-param.js';
import { ident, newRolePassword, openRolePassword, pilotNames, readTenantDb, sealRolePassword } from './state.js';
import { TenantDbPermanentError, withAdmin, type TenantDbServer } from './admin.js';

/**
 * The pilot database (issue 14 item 3): preview, run (role with a random password, database owned by
 * it, CONNECT revoked from PUBLIC) and rollback (drops only the objects whose OIDs the pilot recorded).
 */

/** The pilot request (admin-api.md "pilot database request"). */
export interface PilotInput {
  subdomain?: string;
  domain?: string;
  db_user_host?: string;
  confirm_phrase?: string;
}

/** The pilot request with its defaults applied. */
export interface PilotRequest {
  subdomain: string;
  domain: string | null;
  db_user_host: string;
}

const LABEL = /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;
const HOST = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Whether db_user_host is `%`, `localhost`, an IP or a CIDR. */
export function validDbUserHost(v: string): boolean {
  if (v === '%' || v === 'localhost') return true;
  const [base, bits, extra] = v.split('/');
  if (extra !== undefined) return false;
  const family = isIP(base);
  if (!family) return false;
  if (bits === undefined) return true;
  return /^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * Applies the defaults (subdomain: the slug; domain: the primary domain; db_user_host: `%`) and checks
 * the fields (decision: subdomain a DNS label of 1-40, domain a hostname).
 * @throws ValidationFailed (422) with field errors
 */
export function pilotRequest(tenant: PlatformTenantRow, input: PilotInput): PilotRequest {
  const errors: FieldErrors = {};
  const subdomain = input.subdomain ?? tenant.slug;
  if (!LABEL.test(subdomain))
    errors.subdomain = ['The subdomain must be a DNS label of 1-40 lower-case letters, digits and inner dashes.'];
  const domain = input.domain ?? tenant.primary_domain ?? null;
  if (domain !== null && (domain.length > 253 || !HOST.test(domain)))
    errors.domain = ['The domain must be a lower-case hostname.'];
  const dbUserHost = input.db_user_host ?? '%';
  if (!validDbUserHost(dbUserHost)) errors.db_user_host = ['The db_user_host must be %, localhost, an IP or a CIDR.'];
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return { subdomain, domain, db_user_host: dbUserHost };
}

/** The pg_hba.conf lines a db_user_host needs (PostgreSQL keeps host rules there, beyond SQL). */
export function pgHbaLines(database: string, role: string, dbUserHost: string): string[] {
  const line = (addr: string) => `host    ${database}    ${role}    ${addr}    scram-sha-256`;
  if (dbUserHost === '%') return [line('all')];
  if (dbUserHost === 'localhost')
    return [`local   ${database}    ${role}    scram-sha-256`, line('127.0.0.1/32'), line('::1/128')];
  if (dbUserHost.includes('/')) return [line(dbUserHost)];
  return [line(isIP(dbUserHost) === 6 ? `${dbUserHost}/128` : `${dbUserHost}/32`)];
}

/** The SQL the pilot runs, the password shown as a placeholder. */
export function pilotSql(database: string, role: string): string[] {
  return [
    `CREATE ROLE ${ident(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '<random>'`,
    `CREATE DATABASE ${ident(database)} OWNER ${ident(role)}`,
    `REVOKE CONNECT, TEMPORARY ON DATABASE ${ident(database)} FROM PUBLIC`,
    `GRANT CONNECT ON DATABASE ${ident(database)} TO ${ident(role)}`,
  ];
}

/** The marker comment on the objects a pilot created (a retried run adopts them; nothing else). */
export const pilotMarker = (tenantId: number) => `isp tenant-db pilot of tenant ${tenantId}`;

/** Existing objects named like the pilot's, with their OIDs and marker comments. */
export async function nameConflicts(
  c: pg.Client,
  database: string,
  role: string,
): Promise<{
  role: { oid: number; comment: string | null } | null;
  database: { oid: number; comment: string | null } | null;
}> {
  const r = await c.query<{ oid: string; comment: string | null }>(
    "SELECT oid, shobj_description(oid, 'pg_authid') AS comment FROM pg_roles WHERE rolname = $1",
    [role],
  );
  const d = await c.query<{ oid: string; comment: string | null }>(
    "SELECT oid, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1",
    [database],
  );
  const one = (rows: { oid: string; comment: string | null }[]) =>
    rows[0] ? { oid: Number(rows[0].oid), comment: rows[0].comment } : null;
  return { role: one(r.rows), database: one(d.rows) };
}

/**
 * POST pilot-db/preview (saves nothing): names, SQL, rollback plan, pg_hba.conf lines and name
 * conflicts on the tenant_db server (`conflicts.checked` false with the reason when unreachable).
 */
export async function pilotPreview(knex: Knex, server: TenantDbServer, tenant: PlatformTenantRow, req: PilotRequest) {
  const { database, role } = pilotNames(req.subdomain);
  const current = await readTenantDb(knex, tenant.id);
  let conflicts: Record<string, unknown>;
  try {
    const found = await withAdmin(server, (c) => nameConflicts(c, database, role), 5000);
    conflicts = {
      checked: true,
      database_exists: !!found.database,
      role_exists: !!found.role,
      names: [...(found.database ? [database] : []), ...(found.role ? [role] : [])],
    };
  } catch (err) {
    conflicts = { checked: false, reason: (err as Error).message.slice(0, 200) };
  }
  return {
    tenant: { id: tenant.id, slug: tenant.slug },
    status: current.status,
    subdomain: req.subdomain,
    domain: req.domain,
    db_user_host: req.db_user_host,
    database,
    role,
    server: { host: server.host, port: server.port },
    sql: pilotSql(database, role),
    pg_hba_conf: pgHbaLines(database, role, req.db_user_host),
    rollback_plan: [
      `DROP DATABASE ${ident(database)} WITH (FORCE), only if its OID is the one this pilot recorded`,
      `DROP ROLE ${ident(role)}, only if its OID is the one this pilot recorded`,
      'tenant_databases back to status none; no DNS record or mailbox is touched',
    ],
    conflicts,
    dns: false,
    mailbox: false,
  };
}

/**
 * The pilot run's work (job): creates the role (random password, sealed first so a retry reuses
 * it) and the database, revokes CONNECT from PUBLIC, records the OIDs; status `pilot_created`.
 * A same-named object without this pilot's marker is an unexpected object (permanent).
 */
export async function executePilot(knex: Knex, appKey: Buffer, server: TenantDbServer, tenantId: number) {
  let row = await readTenantDb(knex, tenantId);
  if (row.status !== 'none' || !row.database_name || !row.role_name)
    throw new TenantDbPermanentError(`the tenant database is ${row.status}, not none`);
  if (!row.role_password_enc) {
    await knex('tenant_databases')
      .where({ tenant_id: tenantId })
      .update({ role_password_enc: sealRolePassword(appKey, tenantId, newRolePassword()), updated_at: knex.fn.now() });
    row = await readTenantDb(knex, tenantId);
  }
  const database = row.database_name!;
  const role = row.role_name!;
  const password = openRolePassword(appKey, tenantId, row.role_password_enc!);
  const marker = pilotMarker(tenantId);
  return withAdmin(server, async (c) => {
    const found = await nameConflicts(c, database, role);
    if (found.role && found.role.comment !== marker)
      throw new TenantDbPermanentError(`unexpected object: role ${role} already exists`);
    if (found.database && found.database.comment !== marker)
      throw new TenantDbPermanentError(`unexpected object: database ${database} already exists`);
    if (!found.role) {
      await c.query('BEGIN');
      await c.query(`CREATE ROLE ${ident(role)} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${password}'`);
      await c.query(`COMMENT ON ROLE ${ident(role)} IS '${marker}'`);
      await c.query('COMMIT');
    } else {
      await c.query(`ALTER ROLE ${ident(role)} PASSWORD '${password}'`);
    }
    if (!found.database) {
      await c.query(`CREATE DATABASE ${ident(database)} OWNER ${ident(role)}`);
      await c.query(`COMMENT ON DATABASE ${ident(database)} IS '${marker}'`);
    }
    await c.query(`REVOKE CONNECT, TEMPORARY ON DATABASE ${ident(database)} FROM PUBLIC`);
    await c.query(`GRANT CONNECT ON DATABASE ${ident(database)} TO ${ident(role)}`);
    const now = await nameConflicts(c, database, role);
    await knex('tenant_databases').where({ tenant_id: tenantId }).update({
      status: 'pilot_created',
      role_oid: now.role!.oid,
      database_oid: now.database!.oid,
      updated_at: knex.fn.now(),
    });
    return {
      database,
      role,
      database_oid: now.database!.oid,
      role_oid: now.role!.oid,
      connect_revoked_from_public: true,
    };
  });
}

/**
 * The pilot rollback's work (job): drops the database and the role only when their OIDs are the
 * recorded ones (a same-named other object survives), then resets the state to `none` and the
 * read flag to off.
 * @param beforeDrop called before the database is dropped (closes this process's pool of it)
 */
export async function executePilotRollback(
  knex: Knex,
  server: TenantDbServer,
  tenantId: number,
  beforeDrop: () => Promise<void>,
) {
  const row = await readTenantDb(knex, tenantId);
  if (row.status === 'production' || row.status === 'none')
    throw new TenantDbPermanentError(`the tenant database is ${row.status}: no pilot rollback`);
  const result: Record<string, unknown> = {};
  await beforeDrop();
  await withAdmin(server, async (c) => {
    const found = await nameConflicts(c, row.database_name ?? '', row.role_name ?? '');
    if (found.database && found.database.oid === Number(row.database_oid)) {
      await c.query(`DROP DATABASE ${ident(row.database_name!)} WITH (FORCE)`);
      result.database = 'dropped';
    } else result.database = found.database ? 'kept: another database of that name (OID differs)' : 'absent';
    if (found.role && found.role.oid === Number(row.role_oid)) {
      await c.query(`DROP ROLE ${ident(row.role_name!)}`);
      result.role = 'dropped';
    } else result.role = found.role ? 'kept: another role of that name (OID differs)' : 'absent';
  });
  await knex('tenant_databases').where({ tenant_id: tenantId }).update({
    status: 'none',
    role_password_enc: null,
    role_oid: null,
    database_oid: null,
    use_tenant_db_read: false,
    schema_run_at: null,
    updated_at: knex.fn.now(),
  });
  return { database: row.database_name, role: row.role_name, ...result };
}

/**
 * Saves a pilot request on the tenant's row (inside startRun's transaction).
 * @throws InvalidTransition (422) for the master tenant (it stays on the shared database)
 */
export async function savePilotRequest(
  trx: Knex.Transaction,
  tenant: PlatformTenantRow,
  server: TenantDbServer,
  req: PilotRequest,
): Promise<void> {
  if (tenant.is_master) throw new InvalidTransition('shared_db_master', 'run a pilot for the master tenant');
  const { database, role } = pilotNames(req.subdomain);
  const fields = {
    database_name: database,
    role_name: role,
    server_host: server.host,
    server_port: server.port,
    subdomain: req.subdomain,
    domain: req.domain,
    db_user_host: req.db_user_host,
    role_password_enc: null,
    updated_at: trx.fn.now(),
  };
  await trx('tenant_databases')
    .insert({ tenant_id: tenant.id, status: 'none', ...fields })
    .onConflict('tenant_id')
    .merge(fields);
}
