import { systemClock } from '../../../lib/clock.js';
import type { Knex } from 'knex';
import type { TenantScope } from '../../../db/tenant-scope.js';
import {
  InventoryRequest,
  Schedule,
  Ticket,
  type InventoryRequestStatus,
  type InventoryRequestType,
} from '../../../db/models/index.js';
import { nextDocumentNumber } from '../../../db/numbering.js';
import { toDbString, type Money } from '../../../lib/money.js';
import { InvalidTransition, NotFound, ValidationFailed, type FieldErrors } from '../../errors.js';
import type { PageParams } from '../../shared/list.js';
import { envelope, iso } from '../../shared/schemas.js';
import { itemsById, locationsById, num } from '../common.js';
import { quantityOf } from '../ledger.js';

/**
 * Inventory requests (issue 16 item 4): create (IR-000001, draft or pending), edit, list (a
 * non-manager sees only their own), show with history, the pending badge count. State changes are
 * in transitions.ts.
 */

/** Who asks: the user, whether they hold inventory.manage, and the IP. */
export interface Requester {
  userId: number | null;
  manager: boolean;
  ip?: string | null;
  /** false: no audit entries (the demo seed). */
  audit?: boolean;
}

/** One item of a request body. */
export interface RequestItemInput {
  item_id: number;
  quantity: number;
  note?: string | null;
}

/** Body of POST and PUT /api/inventory/requests after schema validation. */
export interface RequestInput {
  type?: InventoryRequestType;
  source_location_id?: number;
  destination_location_id?: number | null;
  reference_type?: 'ticket' | 'schedule' | null;
  reference_id?: number | null;
  note?: string | null;
  items?: RequestItemInput[];
  /** POST only: true saves a draft. */
  draft?: boolean;
}

/** Validated query of GET /api/inventory/requests. */
export interface RequestListQuery extends PageParams {
  status?: InventoryRequestStatus;
  type?: InventoryRequestType;
  reference_type?: string;
  reference_id?: number;
  mine?: boolean;
}

/**
 * Loads a request row locked FOR UPDATE (in the caller's transaction).
 * @throws NotFound for an id outside the tenant, or another user's request for a non-manager
 */
export async function lockRequest(s: TenantScope, id: number, who: Requester): Promise<InventoryRequest> {
  const row = await s.query(InventoryRequest).findById(id).forUpdate();
  if (!row || (!who.manager && row.requested_by !== who.userId)) throw new NotFound('Inventory request');
  return row;
}

/** Appends one history row (every change of a request). */
export async function addHistory(
  s: TenantScope,
  trx: Knex.Transaction,
  h: {
    requestId: number;
    action: string;
    from: string | null;
    to: string;
    reason?: string | null;
    userId: number | null;
  },
) {
  await trx('inventory_request_history').insert({
    tenant_id: s.tenantId,
    request_id: h.requestId,
    action: h.action,
    from_status: h.from,
    to_status: h.to,
    reason: h.reason ?? null,
    user_id: h.userId,
    created_at: systemClock.now(),
  });
}

/** The merged, checked fields of a request: locations by type, items, reference. @throws ValidationFailed */
async function checkRequest(s: TenantScope, input: RequestInput, current?: InventoryRequest) {
  const errors: FieldErrors = {};
  const type = input.type ?? current!.type;
  const source = input.source_location_id ?? current!.source_location_id;
  const destination =
    input.destination_location_id !== undefined
      ? input.destination_location_id
      : (current?.destination_location_id ?? null);
  const locs = await locationsById(
    s,
    [
      ['source_location_id', source],
      ['destination_location_id', destination],
    ],
    errors,
    { active: true },
  );
  if (type === 'stock_out' && destination != null)
    errors.destination_location_id = ['A stock_out has no destination location.'];
  if (type !== 'stock_out' && destination == null)
    errors.destination_location_id = [`The destination location id field is required for a ${type}.`];
  if (destination != null && destination === source)
    errors.destination_location_id = ['The destination must differ from the source.'];
  if (type === 'return' && !errors.source_location_id && locs.get(source)?.type !== 'technician')
    errors.source_location_id = ["A return starts at a technician's location."];
  const dType = destination == null ? null : locs.get(destination)?.type;
  if (type === 'return' && dType && dType === 'technician')
    errors.destination_location_id = ['A return goes back to a warehouse or POP.'];

  const refType = input.reference_type !== undefined ? input.reference_type : (current?.reference_type ?? null);
  const refId = input.reference_id !== undefined ? input.reference_id : (current?.reference_id ?? null);
  if ((refType == null) !== (refId == null))
    errors[refType == null ? 'reference_type' : 'reference_id'] = ['reference_type and reference_id go together.'];
  else if (refType === 'ticket' && !(await s.query(Ticket).findById(refId!).select('id')))
    errors.reference_id = ['The selected ticket is invalid.'];
  else if (refType === 'schedule' && !(await s.query(Schedule).findById(refId!).select('id')))
    errors.reference_id = ['The selected schedule is invalid.'];

  let items: { item_id: number; quantity: Money; note: string | null }[] | null = null;
  if (input.items) {
    const byId = await itemsById(
      s,
      input.items.map((it, i) => [`items.${i}.item_id`, it.item_id]),
      errors,
      { active: true },
    );
    const seen = new Set<number>();
    items = [];
    for (const [i, it] of input.items.entries()) {
      if (seen.has(it.item_id)) errors[`items.${i}.item_id`] = ['This item is listed twice.'];
      seen.add(it.item_id);
      const serial = byId.get(it.item_id)?.tracking === 'serial';
      const q = quantityOf(it.quantity, `items.${i}.quantity`, errors, serial);
      if (q) items.push({ item_id: it.item_id, quantity: q, note: it.note?.trim() || null });
    }
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return {
    cols: {
      type,
      source_location_id: source,
      destination_location_id: destination,
      reference_type: refType,
      reference_id: refId,
      ...(input.note !== undefined ? { note: input.note?.trim() || null } : {}),
    },
    items,
  };
}

async function writeItems(
  s: TenantScope,
  trx: Knex.Transaction,
  requestId: number,
  items: { item_id: number; quantity: Money; note: string | null }[],
) {
  await trx('inventory_request_items').where({ tenant_id: s.tenantId, request_id: requestId }).delete();
  await trx('inventory_request_items').insert(
    items.map((it) => ({
      tenant_id: s.tenantId,
      request_id: requestId,
      item_id: it.item_id,
      quantity: toDbString(it.quantity),
      note: it.note,
    })),
  );
}

/**
 * POST /api/inventory/requests: a request of the caller, numbered IR-000001 per tenant, status
 * draft (`draft: true`) or pending, with a `created` history row.
 * @returns the new id
 * @throws ValidationFailed (422) for bad or foreign locations, items, references, duplicates
 */
export async function createRequest(scope: TenantScope, who: Requester, input: RequestInput): Promise<number> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const { cols, items } = await checkRequest(s, input, undefined);
    const status = input.draft ? 'draft' : 'pending';
    const { number } = await nextDocumentNumber(trx, s.tenantId, 'inventory_request', 'IR');
    const now = systemClock.now();
    const row = await s.create(
      InventoryRequest,
      { ...cols, number, status, requested_by: who.userId, created_at: now, updated_at: now },
      trx,
    );
    await writeItems(s, trx, row.id, items!);
    await addHistory(s, trx, { requestId: row.id, action: 'created', from: null, to: status, userId: who.userId });
    return row.id;
  });
}

/**
 * PUT /api/inventory/requests/{id}: edits a draft, pending or deferred request (requester or
 * manager); items, when given, replace all items. An `edited` history row.
 * @throws NotFound; InvalidTransition (422) in another status; ValidationFailed as createRequest
 */
export async function updateRequest(scope: TenantScope, who: Requester, id: number, input: RequestInput) {
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await lockRequest(s, id, who);
    const editable: InventoryRequestStatus[] = ['draft', 'pending', 'deferred'];
    if (!editable.includes(row.status)) throw new InvalidTransition(row.status, 'edit', editable);
    const { cols, items } = await checkRequest(s, input, row);
    await s
      .query(InventoryRequest)
      .findById(id)
      .patch({ ...cols, updated_at: systemClock.now() });
    if (items) await writeItems(s, trx, id, items);
    await addHistory(s, trx, { requestId: id, action: 'edited', from: row.status, to: row.status, userId: who.userId });
  });
}

const COLUMNS = [
  'r.*',
  'sl.name as sl_name',
  'sl.type as sl_type',
  'dl.name as dl_name',
  'dl.type as dl_type',
  'ru.name as ru_name',
  'du.name as du_name',
  'pu.name as pu_name',
];

function requestFrom(scope: TenantScope) {
  const user = (alias: string, col: string) => (j: Knex.JoinClause) => {
    j.on(`${alias}.id`, col).andOn(`${alias}.tenant_id`, 'r.tenant_id');
  };
  return scope
    .query(InventoryRequest, { alias: 'r' })
    .leftJoin('inventory_locations as sl', (j) => {
      j.on('sl.id', 'r.source_location_id').andOn('sl.tenant_id', 'r.tenant_id');
    })
    .leftJoin('inventory_locations as dl', (j) => {
      j.on('dl.id', 'r.destination_location_id').andOn('dl.tenant_id', 'r.tenant_id');
    })
    .leftJoin('users as ru', user('ru', 'r.requested_by'))
    .leftJoin('users as du', user('du', 'r.decided_by'))
    .leftJoin('users as pu', user('pu', 'r.processed_by'));
}

const userOf = (id: number | null, name: string | null) => (id && name != null ? { id, name } : null);

/** Rows -> read shapes, with their items (one query for all). */
async function shapes(scope: TenantScope, rows: Record<string, any>[]) {
  const ids = rows.map((r) => r.id);
  const items = ids.length
    ? await scope
        .table('inventory_request_items', 'x')
        .join('inventory_items as i', (j) => j.on('i.id', 'x.item_id').andOn('i.tenant_id', 'x.tenant_id'))
        .whereIn('x.request_id', ids)
        .orderBy('x.id')
        .select('x.*', 'i.name as i_name', 'i.sku as i_sku', 'i.unit as i_unit', 'i.tracking as i_tracking')
    : [];
  return rows.map((r) => ({
    id: r.id,
    number: r.number,
    type: r.type,
    status: r.status,
    source_location_id: r.source_location_id,
    source_location: { id: r.source_location_id, name: r.sl_name, type: r.sl_type },
    destination_location_id: r.destination_location_id,
    destination_location: r.destination_location_id
      ? { id: r.destination_location_id, name: r.dl_name, type: r.dl_type }
      : null,
    reference_type: r.reference_type,
    reference_id: r.reference_id,
    note: r.note,
    reason: r.reason,
    requested_by: userOf(r.requested_by, r.ru_name),
    decided_by: userOf(r.decided_by, r.du_name),
    decided_at: iso(r.decided_at),
    processed_by: userOf(r.processed_by, r.pu_name),
    processed_at: iso(r.processed_at),
    completed_at: iso(r.completed_at),
    cancelled_at: iso(r.cancelled_at),
    items: items
      .filter((x: Record<string, any>) => x.request_id === r.id)
      .map((x: Record<string, any>) => ({
        id: x.id,
        item_id: x.item_id,
        item: { id: x.item_id, name: x.i_name, sku: x.i_sku, unit: x.i_unit, tracking: x.i_tracking },
        quantity: num(x.quantity),
        note: x.note,
        serials: x.serials,
      })),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  }));
}

/**
 * GET /api/inventory/requests: newest first; filters status, type, reference_type, reference_id,
 * mine. A non-manager sees only their own requests.
 */
export async function listRequests(scope: TenantScope, who: Requester, query: RequestListQuery) {
  const q = requestFrom(scope);
  if (!who.manager || query.mine) q.where('r.requested_by', who.userId ?? 0);
  if (query.status) q.where('r.status', query.status);
  if (query.type) q.where('r.type', query.type);
  if (query.reference_type) q.where('r.reference_type', query.reference_type);
  if (query.reference_id) q.where('r.reference_id', query.reference_id);
  const [rows, total] = await Promise.all([
    q
      .clone()
      .select(COLUMNS)
      .orderBy([
        { column: 'r.created_at', order: 'desc' },
        { column: 'r.id', order: 'desc' },
      ])
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    q.clone().resultSize(),
  ]);
  return envelope(await shapes(scope, rows), query.page, query.per_page, total);
}

/**
 * GET /api/inventory/requests/{id}: the request with items and history.
 * @throws NotFound for an id outside the tenant or another user's request for a non-manager
 */
export async function requestById(scope: TenantScope, who: Requester, id: number) {
  const q = requestFrom(scope).select(COLUMNS).where('r.id', id);
  if (!who.manager) q.where('r.requested_by', who.userId ?? 0);
  const row = await q.first();
  if (!row) throw new NotFound('Inventory request');
  const [shape] = await shapes(scope, [row]);
  const history = await scope
    .table('inventory_request_history', 'h')
    .leftJoin('users as u', (j) => j.on('u.id', 'h.user_id').andOn('u.tenant_id', 'h.tenant_id'))
    .where('h.request_id', id)
    .orderBy('h.id')
    .select('h.action', 'h.from_status', 'h.to_status', 'h.reason', 'h.user_id', 'h.created_at', 'u.name as u_name');
  return {
    ...shape,
    history: history.map((h: Record<string, any>) => ({
      action: h.action,
      from_status: h.from_status,
      to_status: h.to_status,
      reason: h.reason,
      user: userOf(h.user_id, h.u_name),
      at: iso(h.created_at),
    })),
  };
}

/**
 * GET /api/inventory/requests/pending-count: a manager counts the tenant's pending and approved
 * requests (waiting on the warehouse), anyone else their own pending ones.
 */
export async function pendingCount(scope: TenantScope, who: Requester): Promise<number> {
  const q = scope.query(InventoryRequest);
  if (who.manager) q.whereIn('status', ['pending', 'approved']);
  else q.where({ status: 'pending', requested_by: who.userId ?? 0 });
  return q.resultSize();
}
