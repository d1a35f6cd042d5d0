import type { Knex } from 'knex';
import { ValidationFailed } from '../../errors.js';
import { TenantScope } from '../../../db/tenant-scope.js';
import { tenantPools } from '../../../db/tenant-pools.js';
import { listUsers } from '../../users/service.js';
import { listAdminCustomers } from '../../customers/list.js';
import { listInvoices } from '../../invoices/service.js';
import { listTickets } from '../../tickets/service.js';
import { tenantConnection } from './admin.js';
import { appliedMigrations } from './schema.js';
import { isUnreachable } from './report-base.js';
import type { TenantDbRow } from './state.js';
import { ROUTED_MODULES, type RoutedModule } from './write-plan.js';

/**
 * Module reads of issue 14 item 8 (`tenant-db/users|customers|invoices|tickets` and
 * `tenant-db/module-read/{module}`): the first page of issue 6's admin list (same read shapes, no
 * password hash) from the tenant database when it may serve reads, else from the shared database
 * with the reason.
 */

/** Why a read came from the shared database. */
export type FallbackReason = 'not_migrated' | 'not_copied' | 'flag_off' | 'tenant_db_unreachable';

const FIRST_PAGE = { page: 1, per_page: 25 };

/** Issue 6's admin list of a module on a database (the scope's knex). */
function listOf(module: RoutedModule, scope: TenantScope) {
  switch (module) {
    case 'users':
      return listUsers(scope, { ...FIRST_PAGE });
    case 'customers':
      return listAdminCustomers(scope, { ...FIRST_PAGE });
    case 'invoices':
      return listInvoices(scope, { ...FIRST_PAGE });
    case 'tickets':
      return listTickets(scope, { ...FIRST_PAGE });
  }
}

/**
 * Checks a module name of `module-read/{module}`.
 * @throws ValidationFailed (422) `errors.module` for anything but users, customers, invoices, tickets
 */
export function moduleOf(name: string): RoutedModule {
  if (!(ROUTED_MODULES as readonly string[]).includes(name))
    throw new ValidationFailed({ module: [`The module must be one of ${ROUTED_MODULES.join(', ')}.`] });
  return name as RoutedModule;
}

/**
 * Where reads may come from: the tenant database only when it has the copy (`data_copied` or
 * `production`), use_tenant_db_read is on and it has every shared migration; else the reason.
 * @returns `{tk}` (the request pool) or `{reason, detail}`
 * @throws any error of the tenant database that is not a connection-class one (isUnreachable)
 */
export async function readSource(
  knex: Knex,
  row: TenantDbRow,
  appKey: Buffer,
): Promise<{ tk: Knex; reason?: undefined } | { tk?: undefined; reason: FallbackReason; detail: string }> {
  if (row.status === 'none' || row.status === 'pilot_created')
    return { reason: 'not_migrated', detail: `status ${row.status}` };
  if (row.status === 'schema_migrated') return { reason: 'not_copied', detail: 'status schema_migrated' };
  if (!row.use_tenant_db_read) return { reason: 'flag_off', detail: 'use_tenant_db_read is off' };
  try {
    const tk = tenantPools('request').get(row.tenant_id, tenantConnection(row, appKey));
    const [shared, tenant] = await Promise.all([appliedMigrations(knex), appliedMigrations(tk)]);
    const have = new Set(tenant);
    const pending = shared.filter((m) => !have.has(m));
    if (pending.length) return { reason: 'not_migrated', detail: `${pending.length} migrations pending` };
    return { tk };
  } catch (err) {
    if (!isUnreachable(err)) throw err;
    return { reason: 'tenant_db_unreachable', detail: String((err as Error).message).slice(0, 200) };
  }
}

/**
 * A module's first page with `source` (`tenant_db` or `shared`) and `fallback_reason` (null when
 * from the tenant database). A tenant database becoming unreachable during the read falls back too;
 * any other error propagates (a 500 with a request id).
 */
export async function moduleRead(knex: Knex, row: TenantDbRow, appKey: Buffer, module: RoutedModule) {
  const src = await readSource(knex, row, appKey);
  if (src.tk) {
    try {
      const page = await listOf(module, new TenantScope(src.tk, row.tenant_id));
      return { ...page, module, source: 'tenant_db' as const, fallback_reason: null, fallback_detail: null };
    } catch (err) {
      if (!isUnreachable(err)) throw err;
      const page = await listOf(module, new TenantScope(knex, row.tenant_id));
      return {
        ...page,
        module,
        source: 'shared' as const,
        fallback_reason: 'tenant_db_unreachable' as const,
        fallback_detail: String((err as Error).message).slice(0, 200),
      };
    }
  }
  const page = await listOf(module, new TenantScope(knex, row.tenant_id));
  return { ...page, module, source: 'shared' as const, fallback_reason: src.reason, fallback_detail: src.detail };
}
