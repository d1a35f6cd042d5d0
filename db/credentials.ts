import { open, seal } from '../lib/crypto.js';

/**
 * Write-only credentials of network gear (issue 8 item 3: olts, nas) and customers' PPPoE passwords
 * (item 2), sealed at rest with APP_KEY
 * (AES-256-GCM, lib/crypto.ts; DESIGN.md §3). The associated data binds a sealed value to its table
 * and tenant, so a value copied into another tenant's row or another table does not open.
 */

/**
 * Tables whose rows carry sealed credentials: `credentials_enc` of olts and nas, and
 * `pppoe_password_enc` of customers (issue 8 item 2: `{password}` only).
 */
export type CredentialTable = 'olts' | 'nas' | 'customers';

/** Login data of a device: any of username, password, SNMP community (strings). */
export interface DeviceCredentials {
  username?: string;
  password?: string;
  snmp_community?: string;
}

const aad = (table: CredentialTable, tenantId: number) => `${table}.credentials:${tenantId}`;

/**
 * Seals credentials for `<table>.credentials_enc`.
 * @param appKey the 32-byte APP_KEY
 * @returns the sealed text (`v1.<iv>.<tag>.<ciphertext>`)
 */
export function sealCredentials(
  appKey: Buffer,
  table: CredentialTable,
  tenantId: number,
  creds: DeviceCredentials,
): string {
  return seal(appKey, JSON.stringify(creds), aad(table, tenantId));
}

/**
 * Opens what sealCredentials produced.
 * @throws Error when the key, table or tenant differ or the value was tampered with
 */
export function openCredentials(
  appKey: Buffer,
  table: CredentialTable,
  tenantId: number,
  sealed: string,
): DeviceCredentials {
  return JSON.parse(open(appKey, sealed, aad(table, tenantId))) as DeviceCredentials;
}

/** Which password of an e-mail account (issue 9 item 1). */
export type EmailPasswordKind = 'incoming' | 'outgoing';

const emailAad = (kind: EmailPasswordKind, tenantId: number) => `external_email_accounts.${kind}_password:${tenantId}`;

/**
 * Seals a password of the tenant's e-mail account for `external_email_accounts.<kind>_password_enc`
 * (AES-256-GCM under APP_KEY; bound to the tenant and the column, so a value copied elsewhere does not open).
 * @param appKey the 32-byte APP_KEY
 * @returns the sealed text
 */
export function sealEmailPassword(appKey: Buffer, kind: EmailPasswordKind, tenantId: number, password: string): string {
  return seal(appKey, password, emailAad(kind, tenantId));
}

/**
 * Opens what sealEmailPassword produced.
 * @throws Error when the key, column or tenant differ or the value was tampered with
 */
export function openEmailPassword(appKey: Buffer, kind: EmailPasswordKind, tenantId: number, sealed: string): string {
  return open(appKey, sealed, emailAad(kind, tenantId));
}
