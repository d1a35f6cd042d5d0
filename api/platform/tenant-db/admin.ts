import pg from 'pg';
import type { Knex } from 'knex';
import { isIP } from 'node:net';
import { InvalidTransition } from '../../errors.js';
import { createProvisioningCredentialSource } from '../../../jobs/provisioning/credentials.js';
import { openRolePassword, type TenantDbRow } from './state.js';
import type { TenantDbConnection } from '../../../db/tenant-pools.js';

/**
 * Connections of the tenant-db steps (issue 14): the tenant_db credential's admin login on the
 * server's `postgres` database, and the tenant role on its own database.
 */

/** The tenant_db credential (issue 13's store), opened. */
export type TenantDbServer = { host: string; port: number; adminUser: string; adminPassword: string };

/** A step refused for good (UnrecoverableError in the job): bad password, privilege, unexpected object, collision. */
export class TenantDbPermanentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TenantDbPermanentError';
  }
}

/**
 * Loads the tenant_db credential.
 * @throws InvalidTransition (422) when none is saved
 */
export async function tenantDbServer(knex: Knex, appKey: Buffer): Promise<TenantDbServer> {
  const creds = await createProvisioningCredentialSource(knex, appKey).load();
  if (!creds.tenantDb) throw new InvalidTransition('no tenant_db credential', 'use a tenant database');
  return creds.tenantDb;
}

/**
 * Runs `fn` with a short-lived admin connection to the server's `postgres` database.
 * @param timeoutMs connect and statement timeout in ms
 */
export async function withAdmin<T>(
  server: TenantDbServer,
  fn: (c: pg.Client) => Promise<T>,
  timeoutMs = 10_000,
): Promise<T> {
  const client = new pg.Client({
    host: server.host,
    port: server.port,
    user: server.adminUser,
    password: server.adminPassword,
    database: 'postgres',
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs * 3,
  });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The connection of a tenant database as its role.
 * @throws InvalidTransition (422) when the tenant has no pilot database
 */
export function tenantConnection(row: TenantDbRow, appKey: Buffer): TenantDbConnection {
  if (!row.database_name || !row.role_name || !row.role_password_enc || !row.server_host || !row.server_port)
    throw new InvalidTransition(row.status, 'connect to the tenant database');
  return {
    host: row.server_host,
    port: row.server_port,
    database: row.database_name,
    user: row.role_name,
    password: openRolePassword(appKey, row.tenant_id, row.role_password_enc),
  };
}

/**
 * Whether a client address matches db_user_host (issue 14 item 3): `%` any, `localhost` a local
 * socket or loopback, else an IP or a CIDR.
 * @param clientAddr inet_client_addr() (null over a Unix socket)
 */
export function clientAddrAllowed(dbUserHost: string | null, clientAddr: string | null): boolean {
  const rule = dbUserHost ?? '%';
  if (rule === '%') return true;
  const addr = clientAddr?.replace(/^::ffff:/, '') ?? null;
  if (rule === 'localhost') return addr === null || addr === '127.0.0.1' || addr === '::1';
  if (!addr) return false;
  const [base, bitsText] = rule.split('/');
  if (!bitsText) return base === addr;
  if (isIP(base) !== 4 || isIP(addr) !== 4) return base === addr;
  const bits = Number(bitsText);
  const toInt = (ip: string) => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const mask = bits === 0 ? 0 : 2 ** 32 - 2 ** (32 - bits);
  return (toInt(base) & mask) >>> 0 === (toInt(addr) & mask) >>> 0;
}

/** Whether an error is worth a retry: connection refused, reset or timed out, server starting. */
export function isRetryable(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  const codes = ['ECONNREFUSED', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', '57P03', '53300'];
  if (e?.code && codes.includes(e.code)) return true;
  return /timeout|timed out|Connection terminated/i.test(e?.message ?? '');
}
