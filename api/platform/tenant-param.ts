import type { Knex } from 'knex';
import { NotFound } from '../errors.js';
import type { Schema } from '../http/validation.js';

/** A tenants row as the platform routes read it (issue 13 item 2). */
export interface PlatformTenantRow {
  id: number;
  slug: string;
  name: string;
  demo_mode: boolean;
  is_master: boolean;
  modules: string[];
  timezone: string;
  primary_domain: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Path parameters of `/api/platform/tenants/{tenant}...` (issue 13 item 1): `tenant` is a slug or
 * an id. Anything that is neither answers 404 through resolvePlatformTenant; only absurd lengths
 * are refused by validation (422).
 */
export const tenantParams: Schema = {
  type: 'object',
  required: ['tenant'],
  additionalProperties: false,
  properties: {
    tenant: { type: 'string', minLength: 1, maxLength: 63, description: 'Tenant slug or id.' },
  },
};

/**
 * Resolves `{tenant}` of a platform route (issue 13 item 1, decision): digits are an id, anything
 * else a slug (exact, as stored: lower case). Shared by both halves of issue 13.
 * @param knex the database (or a transaction; pass `forUpdate` to lock the row)
 * @param ref the raw path segment
 * @returns the tenant row
 * @throws NotFound (404) when no tenant has that id or slug
 */
export async function resolvePlatformTenant(
  knex: Knex | Knex.Transaction,
  ref: string | number,
  opts: { forUpdate?: boolean } = {},
): Promise<PlatformTenantRow> {
  const s = String(ref);
  const q = knex('tenants');
  if (/^[0-9]{1,10}$/.test(s) && Number(s) <= 2147483647) q.where({ id: Number(s) });
  else if (/^[a-z0-9][a-z0-9-]{0,62}$/.test(s)) q.where({ slug: s });
  else throw new NotFound(`Tenant ${s.slice(0, 63)}`);
  if (opts.forUpdate) q.forUpdate();
  const row = (await q.first()) as PlatformTenantRow | undefined;
  if (!row) throw new NotFound(`Tenant ${s}`);
  return row;
}
