import type { Knex } from 'knex';
import type { TenantScope } from '../../db/tenant-scope.js';
import { ilikeContains, type PageParams } from '../shared/list.js';
import { envelope, iso } from '../shared/schemas.js';
import { num } from './common.js';

/**
 * Reads of the ledger (issue 16 item 2): GET /api/inventory/stock, /mutations and /serials, each
 * with its item and location, in the list envelope of DESIGN.md §4.
 */

/** Validated query of GET /api/inventory/stock. */
export interface StockQuery extends PageParams {
  item_id?: number;
  location_id?: number;
  location_type?: 'warehouse' | 'pop' | 'technician';
  search?: string;
  /** true: also rows at 0 (default: only rows with stock). */
  include_zero?: boolean;
}

/** Validated query of GET /api/inventory/mutations. */
export interface MutationQuery extends PageParams {
  item_id?: number;
  location_id?: number;
  type?: string;
  direction?: 'in' | 'out';
  reference_type?: string;
  reference_id?: number;
  request_id?: number;
}

/** Validated query of GET /api/inventory/serials. */
export interface SerialQuery extends PageParams {
  item_id?: number;
  location_id?: number;
  status?: 'in_stock' | 'issued' | 'written_off';
  search?: string;
}

/** Page + exact total of a knex query (two queries in parallel). */
async function page<T>(
  q: Knex.QueryBuilder,
  columns: (string | Knex.Raw)[],
  order: { column: string; order: 'asc' | 'desc' }[],
  p: PageParams,
  map: (r: Record<string, any>) => T,
) {
  const [rows, [count]] = await Promise.all([
    q
      .clone()
      .select(columns)
      .orderBy(order)
      .limit(p.per_page)
      .offset((p.page - 1) * p.per_page),
    q.clone().count('* as n'),
  ]);
  return envelope(rows.map(map), p.page, p.per_page, Number((count as { n: string }).n));
}

/** Joins item `i` and location `l` (same tenant) to a ledger table aliased `x`. */
function withItemLocation(q: Knex.QueryBuilder) {
  return q
    .join('inventory_items as i', (j) => j.on('i.id', 'x.item_id').andOn('i.tenant_id', 'x.tenant_id'))
    .leftJoin('inventory_locations as l', (j) => j.on('l.id', 'x.location_id').andOn('l.tenant_id', 'x.tenant_id'));
}

const ITEM_LOCATION = [
  'i.name as i_name',
  'i.sku as i_sku',
  'i.unit as i_unit',
  'i.tracking as i_tracking',
  'l.name as l_name',
  'l.type as l_type',
];

const itemOf = (r: Record<string, any>) => ({
  id: r.item_id,
  name: r.i_name,
  sku: r.i_sku,
  unit: r.i_unit,
  tracking: r.i_tracking,
});
const locationOf = (r: Record<string, any>) =>
  r.location_id == null ? null : { id: r.location_id, name: r.l_name, type: r.l_type };

/** GET /api/inventory/stock: stock per item and location, by item then location. */
export async function listStock(scope: TenantScope, query: StockQuery) {
  const q = withItemLocation(scope.table('inventory_stock', 'x'));
  if (query.item_id) q.where('x.item_id', query.item_id);
  if (query.location_id) q.where('x.location_id', query.location_id);
  if (query.location_type) q.where('l.type', query.location_type);
  if (!query.include_zero) q.where('x.quantity', '>', 0);
  if (query.search?.trim()) {
    const pattern = ilikeContains(query.search.trim());
    q.where((w) => w.where('i.name', 'ilike', pattern).orWhere('i.sku', 'ilike', pattern));
  }
  return page(
    q,
    ['x.item_id', 'x.location_id', 'x.quantity', 'x.updated_at', ...ITEM_LOCATION],
    [
      { column: 'x.item_id', order: 'asc' },
      { column: 'x.location_id', order: 'asc' },
    ],
    query,
    (r) => ({
      item_id: r.item_id,
      item: itemOf(r),
      location_id: r.location_id,
      location: locationOf(r),
      quantity: num(r.quantity),
      updated_at: iso(r.updated_at),
    }),
  );
}

/** GET /api/inventory/mutations: the ledger, newest first. */
export async function listMutations(scope: TenantScope, query: MutationQuery) {
  const q = withItemLocation(scope.table('inventory_mutations', 'x')).leftJoin('users as u', (j) =>
    j.on('u.id', 'x.created_by').andOn('u.tenant_id', 'x.tenant_id'),
  );
  if (query.item_id) q.where('x.item_id', query.item_id);
  if (query.location_id) q.where('x.location_id', query.location_id);
  if (query.type) q.where('x.type', query.type);
  if (query.direction) q.where('x.direction', query.direction);
  if (query.reference_type) q.where('x.reference_type', query.reference_type);
  if (query.reference_id) q.where('x.reference_id', query.reference_id);
  if (query.request_id) q.where({ 'x.reference_type': 'inventory_request', 'x.reference_id': query.request_id });
  return page(
    q,
    [
      'x.id',
      'x.item_id',
      'x.location_id',
      'x.type',
      'x.direction',
      'x.quantity',
      'x.balance_after',
      'x.serials',
      'x.unit_cost',
      'x.reference_type',
      'x.reference_id',
      'x.request_item_id',
      'x.note',
      'x.created_by',
      'x.created_at',
      'u.name as u_name',
      ...ITEM_LOCATION,
    ],
    [
      { column: 'x.created_at', order: 'desc' },
      { column: 'x.id', order: 'desc' },
    ],
    query,
    (r) => ({
      id: Number(r.id),
      item_id: r.item_id,
      item: itemOf(r),
      location_id: r.location_id,
      location: locationOf(r),
      type: r.type,
      direction: r.direction,
      quantity: num(r.quantity),
      balance_after: num(r.balance_after),
      serials: r.serials,
      unit_cost: r.unit_cost == null ? null : num(r.unit_cost),
      reference_type: r.reference_type,
      reference_id: r.reference_id,
      request_item_id: r.request_item_id,
      note: r.note,
      created_by: r.created_by && r.u_name != null ? { id: r.created_by, name: r.u_name } : null,
      created_at: iso(r.created_at),
    }),
  );
}

/** GET /api/inventory/serials: serial numbers, newest first. */
export async function listSerials(scope: TenantScope, query: SerialQuery) {
  const q = withItemLocation(scope.table('inventory_serials', 'x'));
  if (query.item_id) q.where('x.item_id', query.item_id);
  if (query.location_id) q.where('x.location_id', query.location_id);
  if (query.status) q.where('x.status', query.status);
  if (query.search?.trim()) q.where('x.serial_number', 'ilike', ilikeContains(query.search.trim()));
  return page(
    q,
    [
      'x.id',
      'x.serial_number',
      'x.item_id',
      'x.status',
      'x.location_id',
      'x.created_at',
      'x.updated_at',
      ...ITEM_LOCATION,
    ],
    [
      { column: 'x.created_at', order: 'desc' },
      { column: 'x.id', order: 'desc' },
    ],
    query,
    (r) => ({
      id: r.id,
      serial_number: r.serial_number,
      item_id: r.item_id,
      item: itemOf(r),
      status: r.status,
      location_id: r.location_id,
      location: locationOf(r),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
  );
}
