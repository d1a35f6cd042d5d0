import type { Knex } from 'knex';
import type { TenantScope } from '../../db/tenant-scope.js';
import { HomeBase, InventoryLocation } from '../../db/models/index.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed, type FieldErrors } from '../errors.js';

/**
 * The official mapping of a home base to its warehouse or POP stock locations (issue 16 item 5;
 * admin-api.md "home base mapping"): `home_base_inventory_locations`. The technician portal offers
 * the mapped locations as the sources of a stock request.
 */

/** Who acts, for the audit log. */
interface Actor {
  userId: number | null;
  ip?: string | null;
}

/**
 * The mapped location ids of home bases (ascending per home base).
 * @returns home base id -> location ids (home bases without mapping are absent)
 */
export async function homeBaseLocationIds(scope: TenantScope, homeBaseIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  if (!homeBaseIds.length) return out;
  const rows: { home_base_id: number; location_id: number }[] = await scope
    .table('home_base_inventory_locations')
    .whereIn('home_base_id', homeBaseIds)
    .orderBy(['home_base_id', 'location_id'])
    .select('home_base_id', 'location_id');
  for (const r of rows) out.set(r.home_base_id, [...(out.get(r.home_base_id) ?? []), r.location_id]);
  return out;
}

/**
 * Replaces the mapping of a home base in the caller's transaction (`home_bases.inventory_locations_set`).
 * @param ids the tenant's warehouse or POP locations; [] removes the mapping
 * @throws ValidationFailed (422 `inventory_location_ids.N`) for a location of another tenant, a
 *   missing one or a technician location; nothing changes then
 */
export async function setHomeBaseLocations(
  s: TenantScope,
  trx: Knex.Transaction,
  actor: Actor,
  homeBaseId: number,
  ids: number[],
) {
  const found = ids.length ? await s.query(InventoryLocation, { trx }).whereIn('id', ids).select('id', 'type') : [];
  const byId = new Map(found.map((l) => [l.id, l]));
  const errors: FieldErrors = {};
  ids.forEach((id, i) => {
    const l = byId.get(id);
    if (!l) errors[`inventory_location_ids.${i}`] = ['The selected inventory location is invalid.'];
    else if (l.type === 'technician')
      errors[`inventory_location_ids.${i}`] = ['Only warehouse or POP locations can be mapped to a home base.'];
  });
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  const before = (await homeBaseLocationIds(s, [homeBaseId])).get(homeBaseId) ?? [];
  await trx('home_base_inventory_locations').where({ tenant_id: s.tenantId, home_base_id: homeBaseId }).delete();
  if (ids.length)
    await trx('home_base_inventory_locations').insert(
      ids.map((id) => ({ tenant_id: s.tenantId, home_base_id: homeBaseId, location_id: id })),
    );
  await recordAudit(s, {
    userId: actor.userId,
    action: 'home_bases.inventory_locations_set',
    subject: { type: 'home_bases', id: homeBaseId },
    before: { inventory_location_ids: before },
    after: { inventory_location_ids: [...ids].sort((a, b) => a - b) },
    ip: actor.ip ?? null,
  });
}

/**
 * POST /api/home-bases/{id}/inventory-locations: replaces the mapping (one transaction, the home
 * base row locked; its updated_at moves).
 * @throws NotFound for a home base outside the tenant; ValidationFailed as setHomeBaseLocations
 */
export async function mapHomeBaseLocations(scope: TenantScope, actor: Actor, homeBaseId: number, ids: number[]) {
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(HomeBase).findById(homeBaseId).forUpdate().select('id');
    if (!row) throw new NotFound('Home base');
    await setHomeBaseLocations(s, trx, actor, homeBaseId, ids);
    await s.query(HomeBase).findById(homeBaseId).patch({ updated_at: new Date() });
  });
}
