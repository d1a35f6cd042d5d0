import { systemClock } from '../../lib/clock.js';
import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { InventoryItem, type InventoryItemType, type InventoryTracking } from '../../db/models/index.js';
import { money, toDbString } from '../../lib/money.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';
import { num, type Actor } from './common.js';

/**
 * The item catalogue (issue 16 item 1): CRUD of `inventory_items` with each item's total stock;
 * DELETE removes an unused item and deactivates a used one (stock, ledger, requests, buy prices).
 */

/** Body of POST /api/inventory and PUT /api/inventory/{id} after schema validation. */
export interface ItemInput {
  name?: string;
  sku?: string | null;
  category?: string | null;
  unit?: string;
  notes?: string | null;
  item_type?: InventoryItemType;
  tracking?: InventoryTracking;
  /** >= 0, 2 decimals. */
  sell_price?: number;
  /** >= 0, 2 decimals. */
  min_stock?: number;
  is_active?: boolean;
}

/** Validated query of GET /api/inventory. */
export interface ItemListQuery extends PageParams {
  search?: string;
  item_type?: InventoryItemType;
  tracking?: InventoryTracking;
  category?: string;
  is_active?: boolean;
  low_stock?: boolean;
}

const STOCK = `(SELECT coalesce(sum(st.quantity), 0) FROM inventory_stock st
  WHERE st.tenant_id = inventory_items.tenant_id AND st.item_id = inventory_items.id)`;

function columns(scope: TenantScope) {
  return [
    'id',
    'name',
    'sku',
    'category',
    'unit',
    'notes',
    'item_type',
    'tracking',
    'sell_price',
    'min_stock',
    'is_active',
    'created_at',
    'updated_at',
    scope.knex.raw(`${STOCK} AS stock_quantity`),
  ];
}

/** Row -> read shape (api/inventory/schemas.ts itemRead). */
export function itemShape(r: InventoryItem & { stock_quantity?: string }) {
  const stock = num(r.stock_quantity);
  return {
    id: r.id,
    name: r.name,
    sku: r.sku,
    category: r.category,
    unit: r.unit,
    notes: r.notes,
    item_type: r.item_type,
    tracking: r.tracking,
    sell_price: num(r.sell_price),
    min_stock: num(r.min_stock),
    stock_quantity: stock,
    low_stock: stock < num(r.min_stock),
    is_active: r.is_active,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/**
 * GET /api/inventory: newest first; search (name, sku, category), item_type, tracking, category,
 * is_active, low_stock (total stock below min_stock).
 */
export async function listItems(scope: TenantScope, query: ItemListQuery) {
  const q = scope.query(InventoryItem);
  whereContains(q, ['name', 'sku', 'category'], query.search);
  if (query.item_type) q.where('item_type', query.item_type);
  if (query.tracking) q.where('tracking', query.tracking);
  if (query.category) q.whereRaw('lower(category) = lower(?)', [query.category]);
  if (query.is_active !== undefined) q.where('is_active', query.is_active);
  if (query.low_stock !== undefined) q.whereRaw(`${STOCK} ${query.low_stock ? '<' : '>='} min_stock`);
  return paginate(q, columns(scope) as string[], ['created_at', 'id'], query, itemShape);
}

/** GET /api/inventory/{id}. @throws NotFound for an id outside the tenant */
export async function itemById(scope: TenantScope, id: number) {
  const row = await scope
    .query(InventoryItem)
    .findById(id)
    .select(columns(scope) as string[]);
  if (!row) throw new NotFound('Inventory item');
  return itemShape(row as InventoryItem & { stock_quantity: string });
}

/** The columns a body sets (only the fields it carries); 2-decimal amounts checked. */
function itemColumns(input: ItemInput): PartialModelObject<InventoryItem> {
  const out: PartialModelObject<InventoryItem> = {};
  const errors: FieldErrors = {};
  const blankToNull = (v: string | null | undefined) => (v == null || !v.trim() ? null : v.trim());
  if (input.name !== undefined) {
    out.name = input.name.trim();
    if (!out.name) errors.name = ['The name field is required.'];
  }
  if (input.sku !== undefined) out.sku = blankToNull(input.sku);
  if (input.category !== undefined) out.category = blankToNull(input.category);
  if (input.unit !== undefined) {
    out.unit = input.unit.trim();
    if (!out.unit) errors.unit = ['The unit field is required.'];
  }
  if (input.notes !== undefined) out.notes = input.notes;
  if (input.item_type !== undefined) out.item_type = input.item_type;
  if (input.tracking !== undefined) out.tracking = input.tracking;
  if (input.is_active !== undefined) out.is_active = input.is_active;
  for (const f of ['sell_price', 'min_stock'] as const) {
    if (input[f] === undefined) continue;
    try {
      out[f] = toDbString(money(input[f]));
    } catch {
      errors[f] = ['At most 2 decimals.'];
    }
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return out;
}

/** 422 when another item of the tenant has the sku (case-insensitive). */
async function assertSkuFree(s: TenantScope, sku: string | null | undefined, exceptId?: number) {
  if (!sku) return;
  const q = s.query(InventoryItem).whereRaw('lower(sku) = lower(?)', [sku]).select('id').first();
  if (exceptId) q.whereNot('id', exceptId);
  if (await q) throw new ValidationFailed({ sku: ['The sku has already been taken.'] });
}

const summary = (r: PartialModelObject<InventoryItem>) => ({
  name: r.name ?? null,
  sku: r.sku ?? null,
  tracking: r.tracking ?? null,
  sell_price: r.sell_price ?? null,
  is_active: r.is_active ?? null,
});

/**
 * POST /api/inventory: creates an item (`inventory.item_created` audited).
 * @returns the new id
 * @throws ValidationFailed (422) for a blank name or unit, a taken sku, more than 2 decimals
 */
export async function createItem(scope: TenantScope, actor: Actor, input: ItemInput): Promise<number> {
  const cols = itemColumns(input);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await assertSkuFree(s, cols.sku as string | null);
    const now = systemClock.now();
    const row = await s.create(InventoryItem, { ...cols, created_at: now, updated_at: now }, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'inventory.item_created',
      subject: { type: 'inventory_items', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/** True when the item has stock, ledger rows, serials, request lines or buy prices. */
async function itemUsed(s: TenantScope, id: number): Promise<string | null> {
  for (const table of [
    'inventory_mutations',
    'inventory_stock',
    'inventory_serials',
    'inventory_request_items',
    'supplier_items',
  ] as const) {
    if (await s.table(table).where('item_id', id).first('item_id')) return table;
  }
  return null;
}

/**
 * PUT /api/inventory/{id}: sets the fields the body carries (`inventory.item_updated`). The
 * tracking of an item with stock, ledger rows or serials cannot change (422 tracking).
 * @throws NotFound for an id outside the tenant; ValidationFailed as createItem
 */
export async function updateItem(scope: TenantScope, actor: Actor, id: number, input: ItemInput) {
  const cols = itemColumns(input);
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(InventoryItem).findById(id).forUpdate();
    if (!row) throw new NotFound('Inventory item');
    if (cols.sku !== undefined) await assertSkuFree(s, cols.sku as string | null, id);
    if (cols.tracking !== undefined && cols.tracking !== row.tracking) {
      const used = await s.table('inventory_mutations').where('item_id', id).first('id');
      if (used) throw new ValidationFailed({ tracking: ['The tracking of an item with stock history cannot change.'] });
    }
    await s
      .query(InventoryItem)
      .findById(id)
      .patch({ ...cols, updated_at: systemClock.now() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'inventory.item_updated',
      subject: { type: 'inventory_items', id },
      before: summary(row),
      after: summary({ ...row, ...cols }),
      ip: actor.ip ?? null,
    });
  });
}

/**
 * DELETE /api/inventory/{id}: deletes an unused item (`inventory.item_deleted`); a used one is
 * deactivated instead (is_active false, `inventory.item_deactivated`).
 * @returns {deleted: true} or {deleted: false, item} with the read shape
 * @throws NotFound for an id outside the tenant
 */
export async function deleteItem(scope: TenantScope, actor: Actor, id: number) {
  const deleted = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(InventoryItem).findById(id).forUpdate();
    if (!row) throw new NotFound('Inventory item');
    const used = await itemUsed(s, id);
    if (!used) await s.query(InventoryItem).deleteById(id);
    else if (row.is_active)
      await s.query(InventoryItem).findById(id).patch({ is_active: false, updated_at: systemClock.now() });
    await recordAudit(s, {
      userId: actor.userId,
      action: used ? 'inventory.item_deactivated' : 'inventory.item_deleted',
      subject: { type: 'inventory_items', id },
      before: summary(row),
      after: used ? { is_active: false, used_by: used } : null,
      ip: actor.ip ?? null,
    });
    return !used;
  });
  return deleted ? { deleted: true as const } : { deleted: false as const, item: await itemById(scope, id) };
}
