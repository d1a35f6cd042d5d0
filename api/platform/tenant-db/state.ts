import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { open, seal } from '../../../lib/crypto.js';

/**
 * A tenant's own database (issue 14 item 1): the `tenant_databases` row, its statuses and the sealed
 * role password. The password is sealed AES-256-GCM under APP_KEY, bound to the column and tenant
 * (associated data), and never leaves this module except as the connection of db/tenant-pools.ts.
 */

/** Statuses of a tenant database, in order (`production` belongs to issue 13). */
export const TENANT_DB_STATUSES = ['none', 'pilot_created', 'schema_migrated', 'data_copied', 'production'] as const;
export type TenantDbStatus = (typeof TENANT_DB_STATUSES)[number];

/** Kinds of tenant_db_runs, each a job on queue `tenant-db`. */
export const RUN_KINDS = [
  'pilot_run',
  'pilot_rollback',
  'schema_run',
  'copy_dry_run',
  'copy_run',
  'copy_rollback',
  // issue 15
  'demo_seed',
  'demo_seed_rollback',
  'dual_write_run',
  'dual_write_rollback',
  'cutover_production',
  'rollback_production',
] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/**
 * Which statuses each step is accepted from, and the status it leaves (decision, docs/decisions.md
 * "Issue 14"): `null` keeps the status. Anything else answers 422 INVALID_TRANSITION.
 */
export const STEPS: Record<RunKind | 'db_test', { from: readonly TenantDbStatus[]; to: TenantDbStatus | null }> = {
  pilot_run: { from: ['none'], to: 'pilot_created' },
  pilot_rollback: { from: ['pilot_created', 'schema_migrated', 'data_copied'], to: 'none' },
  schema_run: { from: ['pilot_created', 'schema_migrated'], to: 'schema_migrated' },
  copy_dry_run: { from: ['schema_migrated', 'data_copied'], to: null },
  copy_run: { from: ['schema_migrated'], to: 'data_copied' },
  copy_rollback: { from: ['schema_migrated', 'data_copied'], to: 'schema_migrated' },
  db_test: { from: ['pilot_created', 'schema_migrated', 'data_copied', 'production'], to: null },
  // issue 15 (items 3, 5, 6, 7): the demo rows and dual write need a verified copy; cutover moves
  // the tenant to `production`, its rollback back to `data_copied` (the tenant database stays).
  demo_seed: { from: ['data_copied'], to: null },
  demo_seed_rollback: { from: ['data_copied'], to: null },
  dual_write_run: { from: ['data_copied'], to: null },
  dual_write_rollback: { from: ['data_copied'], to: null },
  cutover_production: { from: ['data_copied'], to: 'production' },
  rollback_production: { from: ['production'], to: 'data_copied' },
};

/** A tenant_databases row (role_password_enc included: callers must never pass it on). */
export interface TenantDbRow {
  tenant_id: number;
  status: TenantDbStatus;
  database_name: string | null;
  role_name: string | null;
  server_host: string | null;
  server_port: number | null;
  subdomain: string | null;
  domain: string | null;
  db_user_host: string | null;
  role_password_enc: string | null;
  role_oid: number | null;
  database_oid: number | null;
  use_tenant_db_read: boolean;
  schema_run_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The public view of a tenant database: every field but the sealed password. */
export type TenantDbView = Omit<TenantDbRow, 'role_password_enc'> & { role_password_set: boolean };

/** The row of a tenant that never had a pilot. */
export function emptyTenantDb(tenantId: number): Omit<TenantDbRow, 'created_at' | 'updated_at'> {
  return {
    tenant_id: tenantId,
    status: 'none',
    database_name: null,
    role_name: null,
    server_host: null,
    server_port: null,
    subdomain: null,
    domain: null,
    db_user_host: null,
    role_password_enc: null,
    role_oid: null,
    database_oid: null,
    use_tenant_db_read: false,
    schema_run_at: null,
  };
}

/**
 * Reads a tenant's database row (a `none` row when there is none).
 * @param knex the database or a transaction; `forUpdate` locks an existing row
 */
export async function readTenantDb(
  knex: Knex | Knex.Transaction,
  tenantId: number,
  opts: { forUpdate?: boolean } = {},
): Promise<TenantDbRow> {
  const q = knex('tenant_databases').where({ tenant_id: tenantId });
  if (opts.forUpdate) q.forUpdate();
  const row = (await q.first()) as TenantDbRow | undefined;
  return row ?? ({ ...emptyTenantDb(tenantId), created_at: new Date(0), updated_at: new Date(0) } as TenantDbRow);
}

/** Strips the sealed password (DESIGN.md §3: secrets are write-only). */
export function viewOf(row: TenantDbRow): TenantDbView {
  const { role_password_enc, ...rest } = row;
  return { ...rest, role_password_set: !!role_password_enc };
}

const aad = (tenantId: number) => `tenant_databases.role_password:${tenantId}`;

/** A new random role password (32 hex characters: safe inside an SQL string literal). */
export const newRolePassword = (): string => randomBytes(16).toString('hex');

/**
 * Seals a role password for tenant_databases.role_password_enc.
 * @param appKey the 32-byte APP_KEY
 */
export function sealRolePassword(appKey: Buffer, tenantId: number, password: string): string {
  return seal(appKey, password, aad(tenantId));
}

/**
 * Opens what sealRolePassword produced.
 * @throws Error when the key or tenant differ or the value was tampered with
 */
export function openRolePassword(appKey: Buffer, tenantId: number, sealed: string): string {
  return open(appKey, sealed, aad(tenantId));
}

/** The database and role names of a pilot (issue 14 item 3): `isp_t_<subdomain>` and `..._app`. */
export function pilotNames(subdomain: string): { database: string; role: string } {
  const base = `isp_t_${subdomain.replace(/-/g, '_')}`;
  return { database: base, role: `${base}_app` };
}

/** Quotes an SQL identifier (names here are already [a-z0-9_], this is belt and braces). */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
