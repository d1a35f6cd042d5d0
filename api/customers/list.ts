import type { TenantScope } from '../../db/tenant-scope.js';
import { Customer } from '../../db/models/index.js';
import { customerLister, type CustomerListFilters } from '../external/customer-list.js';
import { CUSTOMER_COLUMNS, CUSTOMER_ONU_JOIN, customerShape } from '../external/shapes.js';
import { iso } from '../shared/schemas.js';

/**
 * The admin customer list and read shape (issue 8 item 2): document 1's read shape + NAS, PPPoE
 * login (never the password), suspension and network sync state. The list runs the external list's
 * strategies and statements (api/external/customer-list.ts customerLister) with this select list,
 * so the search, the trigger-maintained totals and the deep pages behave (and perform) the same.
 */

/** The NAS of the customer, same tenant (alias `n`). */
export const CUSTOMER_NAS_JOIN = 'LEFT JOIN nas n ON n.id = c.nas_id AND n.tenant_id = c.tenant_id';

/** Select list of the admin shape: document 1's columns + the admin ones (SQL; no secret column). */
export const CUSTOMER_ADMIN_COLUMNS: readonly string[] = [
  ...CUSTOMER_COLUMNS,
  'c.nas_id',
  'n.name as n_name',
  'n.nas_key as n_key',
  'c.pppoe_username',
  '(c.pppoe_password_enc IS NOT NULL) as pppoe_password_set',
  'c.suspend_reason',
  'c.status_reason',
  'c.status_changed_at',
  'c.network_version',
  'c.network_sync_status',
  'c.network_state',
  'c.network_error',
  'c.network_nas_id',
  'c.network_requested_at',
  'c.network_synced_at',
];

/** Admin read shape (api/customers/schemas.ts customerAdminRead) of a row selected with CUSTOMER_ADMIN_COLUMNS. */
export function customerAdminShape(r: Record<string, any>) {
  // Object.assign onto the external shape, not `{...shape, ...}`: V8 builds that spread of ~30 keys
  // some 10x slower per row, which showed as a quarter of the admin list's CPU (benchmark admin-customers)
  return Object.assign(customerShape(r), {
    nas_id: r.nas_id,
    nas: r.nas_id && r.n_name != null ? { id: r.nas_id, name: r.n_name, nas_key: r.n_key } : null,
    pppoe_username: r.pppoe_username,
    pppoe_password_set: r.pppoe_password_set === true,
    suspend_reason: r.suspend_reason,
    status_reason: r.status_reason,
    status_changed_at: iso(r.status_changed_at),
    network: {
      sync_status: r.network_sync_status,
      state: r.network_state,
      error: r.network_error,
      nas_id: r.network_nas_id,
      version: Number(r.network_version),
      requested_at: iso(r.network_requested_at),
      synced_at: iso(r.network_synced_at),
    },
  });
}

/**
 * The admin customer select, confined to the scope's tenant: customers `c`, package `p`, ONU `o`,
 * NAS `n`. Callers add their WHERE.
 */
export function customerAdminSelect(scope: TenantScope) {
  return scope
    .query(Customer, { alias: 'c' })
    .leftJoin('packages as p', (j) => {
      j.on('p.id', 'c.package_id').andOn('p.tenant_id', 'c.tenant_id');
    })
    .joinRaw(CUSTOMER_ONU_JOIN)
    .joinRaw(CUSTOMER_NAS_JOIN)
    .select(CUSTOMER_ADMIN_COLUMNS.map((c) => scope.knex.raw(c)));
}

/** Validated query of GET /api/customers. */
export type CustomerAdminListQuery = CustomerListFilters;

const adminList = customerLister({
  name: 'adm',
  columns: CUSTOMER_ADMIN_COLUMNS,
  joins: CUSTOMER_NAS_JOIN,
  shape: customerAdminShape,
});

/**
 * GET /api/customers: newest first (id tie-breaker), exact total; filters search (document 1's
 * prefix search), status, package_id, service_type, billing_cycle, nas_id.
 * @returns the list envelope (DESIGN.md §4) of admin read shapes
 */
export function listAdminCustomers(scope: TenantScope, query: CustomerAdminListQuery) {
  return adminList(scope, query);
}
