import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { HomeBase } from '../../db/models/index.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { homeBaseLocationIds, setHomeBaseLocations } from './inventory-locations.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';

/**
 * Home bases (issue 8 item 3; document 2 "home base mapping", "assignment candidates"): where
 * technicians start from, with an address and a position. CRUD, every write audited in its
 * transaction. Issue 16 item 5 adds inventory_location_ids (./inventory-locations.ts).
 */

/** Body of POST /api/home-bases and PUT /api/home-bases/{id} after schema validation. */
export interface HomeBaseInput {
  name?: string;
  address?: string;
  /** Degrees, -90..90. */
  latitude?: number;
  /** Degrees, -180..180. */
  longitude?: number;
  /** Issue 16 item 5: replaces the mapping ([] removes it); undefined leaves it. */
  inventory_location_ids?: number[];
}

/** Validated query of GET /api/home-bases. */
export interface HomeBaseListQuery extends PageParams {
  search?: string;
}

/** Who acts: the user and the caller's IP, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

const COLUMNS = ['id', 'name', 'address', 'latitude', 'longitude', 'created_at', 'updated_at'];

/** Row -> read shape (api/home-bases/schemas.ts homeBaseRead). */
function homeBaseShape(r: HomeBase) {
  return {
    id: r.id,
    name: r.name,
    address: r.address,
    latitude: Number(r.latitude),
    longitude: Number(r.longitude),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/**
 * GET /api/home-bases: newest first (id tie-breaker); search is a substring of name or address.
 * @returns the list envelope (DESIGN.md §4)
 */
export async function listHomeBases(scope: TenantScope, query: HomeBaseListQuery) {
  const q = scope.query(HomeBase);
  whereContains(q, ['name', 'address'], query.search);
  const page = await paginate(q, COLUMNS, ['created_at', 'id'], query, homeBaseShape);
  const mapped = await homeBaseLocationIds(
    scope,
    page.data.map((h) => h.id),
  );
  return { ...page, data: page.data.map((h) => ({ ...h, inventory_location_ids: mapped.get(h.id) ?? [] })) };
}

/**
 * GET /api/home-bases/{id}: the read shape.
 * @throws NotFound when the id is not a home base of the scope's tenant
 */
export async function homeBaseById(scope: TenantScope, id: number) {
  const row = await scope.query(HomeBase).findById(id).select(COLUMNS);
  if (!row) throw new NotFound('Home base');
  const mapped = await homeBaseLocationIds(scope, [id]);
  return { ...homeBaseShape(row), inventory_location_ids: mapped.get(id) ?? [] };
}

/** The columns a body sets (only the fields it carries). */
function columns(input: HomeBaseInput): PartialModelObject<HomeBase> {
  const out: PartialModelObject<HomeBase> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.address !== undefined) out.address = input.address.trim();
  if (input.latitude !== undefined) out.latitude = input.latitude;
  if (input.longitude !== undefined) out.longitude = input.longitude;
  if (out.name === '') throw new ValidationFailed({ name: ['The name field is required.'] });
  if (out.address === '') throw new ValidationFailed({ address: ['The address field is required.'] });
  return out;
}

const summary = (r: PartialModelObject<HomeBase>) => ({
  name: r.name ?? null,
  address: r.address ?? null,
  latitude: r.latitude ?? null,
  longitude: r.longitude ?? null,
});

/**
 * POST /api/home-bases: creates a home base (`home_bases.created` audited in the same transaction).
 * @returns the new id
 * @throws ValidationFailed (422) for a blank name or address
 */
export async function createHomeBase(scope: TenantScope, actor: Actor, input: HomeBaseInput): Promise<number> {
  const cols = columns(input);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const now = new Date();
    const row = await s.create(HomeBase, { ...cols, created_at: now, updated_at: now }, trx);
    if (input.inventory_location_ids) await setHomeBaseLocations(s, trx, actor, row.id, input.inventory_location_ids);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'home_bases.created',
      subject: { type: 'home_bases', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/**
 * PUT /api/home-bases/{id}: sets the fields the body carries (`home_bases.updated`, before and after).
 * @throws NotFound for an id outside the tenant; ValidationFailed as createHomeBase
 */
export async function updateHomeBase(scope: TenantScope, actor: Actor, id: number, input: HomeBaseInput) {
  const cols = columns(input);
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(HomeBase).findById(id).forUpdate();
    if (!row) throw new NotFound('Home base');
    await s
      .query(HomeBase)
      .findById(id)
      .patch({ ...cols, updated_at: new Date() });
    if (input.inventory_location_ids) await setHomeBaseLocations(s, trx, actor, id, input.inventory_location_ids);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'home_bases.updated',
      subject: { type: 'home_bases', id },
      before: summary(row),
      after: summary({ ...row, ...cols }),
      ip: actor.ip ?? null,
    });
  });
}
