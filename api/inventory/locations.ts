import { systemClock } from '../../lib/clock.js';
import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { InventoryLocation, User, type InventoryLocationType } from '../../db/models/index.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';
import type { Actor } from './common.js';

/**
 * Stock locations (issue 16 item 1): warehouses, POPs and technicians' own stock (held by a user).
 * DELETE removes an unused location and deactivates a used one.
 */

/** Body of POST and PUT /api/inventory/locations after schema validation. */
export interface LocationInput {
  name?: string;
  type?: InventoryLocationType;
  holder_user_id?: number | null;
  address?: string | null;
  is_active?: boolean;
}

/** Validated query of GET /api/inventory/locations. */
export interface LocationListQuery extends PageParams {
  search?: string;
  type?: InventoryLocationType;
  holder_user_id?: number;
  is_active?: boolean;
}

const COLUMNS = [
  'l.id',
  'l.name',
  'l.type',
  'l.holder_user_id',
  'l.address',
  'l.is_active',
  'l.created_at',
  'l.updated_at',
  'u.name as u_name',
];

function locationFrom(scope: TenantScope) {
  return scope.query(InventoryLocation, { alias: 'l' }).leftJoin('users as u', (j) => {
    j.on('u.id', 'l.holder_user_id').andOn('u.tenant_id', 'l.tenant_id');
  });
}

/** Row -> read shape (api/inventory/schemas.ts locationRead). */
function locationShape(r: InventoryLocation & { u_name?: string | null }) {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    holder_user_id: r.holder_user_id,
    holder: r.holder_user_id && r.u_name != null ? { id: r.holder_user_id, name: r.u_name } : null,
    address: r.address,
    is_active: r.is_active,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** GET /api/inventory/locations: newest first; search (name, address), type, holder_user_id, is_active. */
export async function listLocations(scope: TenantScope, query: LocationListQuery) {
  const q = locationFrom(scope);
  whereContains(q, ['l.name', 'l.address'], query.search);
  if (query.type) q.where('l.type', query.type);
  if (query.holder_user_id) q.where('l.holder_user_id', query.holder_user_id);
  if (query.is_active !== undefined) q.where('l.is_active', query.is_active);
  return paginate(q, COLUMNS, ['l.created_at', 'l.id'], query, locationShape);
}

/** GET /api/inventory/locations/{id}. @throws NotFound for an id outside the tenant */
export async function locationById(scope: TenantScope, id: number) {
  const row = await locationFrom(scope).select(COLUMNS).where('l.id', id).first();
  if (!row) throw new NotFound('Inventory location');
  return locationShape(row);
}

/**
 * The columns of a body merged over the current row, checked: a technician location needs a
 * holder who is a user of the tenant; other types have none.
 */
async function locationColumns(
  s: TenantScope,
  input: LocationInput,
  current?: InventoryLocation,
): Promise<PartialModelObject<InventoryLocation>> {
  const out: PartialModelObject<InventoryLocation> = {};
  const errors: FieldErrors = {};
  if (input.name !== undefined) {
    out.name = input.name.trim();
    if (!out.name) errors.name = ['The name field is required.'];
  }
  if (input.address !== undefined) out.address = input.address?.trim() || null;
  if (input.is_active !== undefined) out.is_active = input.is_active;
  const type = input.type ?? current?.type;
  if (input.type !== undefined) out.type = input.type;
  const holder = input.holder_user_id !== undefined ? input.holder_user_id : current?.holder_user_id;
  if (type === 'technician') {
    if (holder == null) errors.holder_user_id = ['A technician location needs holder_user_id.'];
    else if (!(await User.query(s.knex).findById(holder).where('tenant_id', s.tenantId).select('id')))
      errors.holder_user_id = ['The selected holder user id is invalid.'];
    else out.holder_user_id = holder;
  } else if (input.holder_user_id != null) {
    errors.holder_user_id = ['Only a technician location has a holder.'];
  } else out.holder_user_id = null;
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return out;
}

const summary = (r: PartialModelObject<InventoryLocation>) => ({
  name: r.name ?? null,
  type: r.type ?? null,
  holder_user_id: r.holder_user_id ?? null,
  is_active: r.is_active ?? null,
});

/**
 * POST /api/inventory/locations (`inventory.location_created`).
 * @returns the new id
 * @throws ValidationFailed (422) for a blank name or a missing or foreign holder
 */
export async function createLocation(scope: TenantScope, actor: Actor, input: LocationInput): Promise<number> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const cols = await locationColumns(s, input);
    const now = systemClock.now();
    const row = await s.create(InventoryLocation, { ...cols, created_at: now, updated_at: now }, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'inventory.location_created',
      subject: { type: 'inventory_locations', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/** The first table that refers to the location, or null. */
async function locationUsed(s: TenantScope, id: number): Promise<string | null> {
  if (await s.table('inventory_mutations').where('location_id', id).first('id')) return 'inventory_mutations';
  if (await s.table('inventory_stock').where('location_id', id).first('id')) return 'inventory_stock';
  const req = await s
    .table('inventory_requests')
    .where((w) => w.where('source_location_id', id).orWhere('destination_location_id', id))
    .first('id');
  if (req) return 'inventory_requests';
  if (await s.table('inventory_counts').where('location_id', id).first('id')) return 'inventory_counts';
  return null;
}

/**
 * PUT /api/inventory/locations/{id} (`inventory.location_updated`). The type of a location with
 * stock history cannot change (422 type).
 * @throws NotFound for an id outside the tenant; ValidationFailed as createLocation
 */
export async function updateLocation(scope: TenantScope, actor: Actor, id: number, input: LocationInput) {
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(InventoryLocation).findById(id).forUpdate();
    if (!row) throw new NotFound('Inventory location');
    const cols = await locationColumns(s, input, row);
    if (cols.type !== undefined && cols.type !== row.type && (await locationUsed(s, id)))
      throw new ValidationFailed({ type: ['The type of a location with stock history cannot change.'] });
    await s
      .query(InventoryLocation)
      .findById(id)
      .patch({ ...cols, updated_at: systemClock.now() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'inventory.location_updated',
      subject: { type: 'inventory_locations', id },
      before: summary(row),
      after: summary({ ...row, ...cols }),
      ip: actor.ip ?? null,
    });
  });
}

/**
 * DELETE /api/inventory/locations/{id}: deletes an unused location; one with stock, ledger rows,
 * requests or counts is deactivated instead.
 * @returns {deleted: true} or {deleted: false, location}
 * @throws NotFound for an id outside the tenant
 */
export async function deleteLocation(scope: TenantScope, actor: Actor, id: number) {
  const deleted = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(InventoryLocation).findById(id).forUpdate();
    if (!row) throw new NotFound('Inventory location');
    const used = await locationUsed(s, id);
    if (!used) await s.query(InventoryLocation).deleteById(id);
    else if (row.is_active)
      await s.query(InventoryLocation).findById(id).patch({ is_active: false, updated_at: systemClock.now() });
    await recordAudit(s, {
      userId: actor.userId,
      action: used ? 'inventory.location_deactivated' : 'inventory.location_deleted',
      subject: { type: 'inventory_locations', id },
      before: summary(row),
      after: used ? { is_active: false, used_by: used } : null,
      ip: actor.ip ?? null,
    });
    return !used;
  });
  return deleted ? { deleted: true as const } : { deleted: false as const, location: await locationById(scope, id) };
}
