import type { Knex } from 'knex';

/**
 * Per-tenant gap-free document numbers (DESIGN.md §10 "numbering": INV-, SO-, Q-, TCK-, ...).
 *
 * One row per (tenant, counter name) in `tenant_counters` (core migration). Taking a number is an
 * upsert that increments the row and keeps it locked until the caller's transaction ends, so:
 * - concurrent callers for the same tenant and name queue on the row lock and get consecutive values;
 * - a rollback undoes the increment, so the number is handed out again (no gaps among committed rows);
 * - other tenants, and other names, have their own rows and never wait on each other.
 * The price is that document creation for one tenant and name is serialised from the moment the
 * number is taken until commit: take it late in the transaction, keep that transaction short.
 * Works at READ COMMITTED (the default); under REPEATABLE READ or SERIALIZABLE a waiter gets a
 * serialization failure (40001) instead of the next value and must retry its transaction.
 */

const SQL = `INSERT INTO tenant_counters (tenant_id, name, value) VALUES (?, ?, 1)
  ON CONFLICT (tenant_id, name) DO UPDATE SET value = tenant_counters.value + 1 RETURNING value`;

/**
 * Takes the next number of a per-tenant counter inside the caller's transaction (the same SQL as
 * TenantScope.nextNumber in db/tenant-scope.ts, which may delegate here). The first number is 1.
 * @param trx the transaction the document row is inserted in; the counter row stays locked until it
 *   commits or rolls back, and a rollback returns the number
 * @param tenantId tenant id (positive integer)
 * @param name counter name, 1..40 characters (tenant_counters.name), e.g. "invoice"
 * @returns the number (1, 2, 3, ... per tenant and name)
 * @throws TypeError when `trx` is not a transaction, or for an invalid tenant id or name
 */
export async function nextNumber(trx: Knex.Transaction, tenantId: number, name: string): Promise<number> {
  if (!trx || (trx as { isTransaction?: boolean }).isTransaction !== true) {
    throw new TypeError('nextNumber must run inside a transaction (knex.transaction(trx => ...))');
  }
  if (!Number.isSafeInteger(tenantId) || tenantId <= 0) throw new TypeError(`invalid tenant id ${tenantId}`);
  if (typeof name !== 'string' || name.length < 1 || name.length > 40) {
    throw new TypeError(`counter name must be 1..40 characters, got ${JSON.stringify(name)}`);
  }
  const r = await trx.raw(SQL, [tenantId, name]);
  return Number(r.rows[0].value);
}

/**
 * Formats a document number: the prefix, a dash (unless the prefix already ends with one) and the
 * number left-padded with zeros to `width` digits; longer numbers keep all their digits.
 * Example: formatDocumentNumber('INV', 123) === 'INV-000123'; ('TCK-', 7, 4) === 'TCK-0007'.
 * @param prefix document prefix, e.g. "INV", "SO", "Q", "TCK" (may be "" for bare digits)
 * @param n the number (positive safe integer, as nextNumber returns)
 * @param width minimum digit count, 1..20 (default 6)
 * @throws RangeError for a non-positive or non-integer n or a width outside 1..20
 */
export function formatDocumentNumber(prefix: string, n: number, width = 6): string {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`document number must be a positive integer, got ${n}`);
  if (!Number.isInteger(width) || width < 1 || width > 20) throw new RangeError(`width must be 1..20, got ${width}`);
  const sep = prefix === '' || prefix.endsWith('-') ? '' : '-';
  return `${prefix}${sep}${String(n).padStart(width, '0')}`;
}

/**
 * nextNumber() and formatDocumentNumber() in one call, for the usual "INV-000123" column.
 * @returns `{ n, number }`, e.g. `{ n: 123, number: 'INV-000123' }`
 * @throws as nextNumber and formatDocumentNumber
 */
export async function nextDocumentNumber(
  trx: Knex.Transaction,
  tenantId: number,
  name: string,
  prefix: string,
  width = 6,
): Promise<{ n: number; number: string }> {
  const n = await nextNumber(trx, tenantId, name);
  return { n, number: formatDocumentNumber(prefix, n, width) };
}
