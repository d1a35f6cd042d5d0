import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { Supplier } from '../../db/models/index.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { ilikeContains, paginate, whereContains, type PageParams } from '../shared/list.js';
import { envelope, iso } from '../shared/schemas.js';
import { num, type Actor } from '../inventory/common.js';

/**
 * Suppliers (issue 16 item 1): CRUD; DELETE deactivates a supplier with buy prices or purchases.
 * Their buy prices (`supplier_items`) are written by the supplier import (item 6) and read here.
 */

/** Body of POST /api/suppliers and PUT /api/suppliers/{supplier} after schema validation. */
export interface SupplierInput {
  name?: string;
  contact?: string | null;
  phone?: string | null;
  email?: string | null;
  address?: string | null;
  is_active?: boolean;
}

/** Validated query of GET /api/suppliers. */
export interface SupplierListQuery extends PageParams {
  search?: string;
  is_active?: boolean;
}

/** Validated query of GET /api/suppliers/{supplier}/items. */
export interface SupplierItemQuery extends PageParams {
  search?: string;
}

function columns(scope: TenantScope) {
  return [
    'id',
    'name',
    'contact',
    'phone',
    'email',
    'address',
    'is_active',
    'created_at',
    'updated_at',
    scope.knex.raw(`(SELECT count(*)::int FROM supplier_items si
      WHERE si.tenant_id = suppliers.tenant_id AND si.supplier_id = suppliers.id) AS items_count`),
  ] as string[];
}

const supplierShape = (r: Supplier & { items_count?: number }) => ({
  id: r.id,
  name: r.name,
  contact: r.contact,
  phone: r.phone,
  email: r.email,
  address: r.address,
  is_active: r.is_active,
  items_count: r.items_count ?? 0,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** GET /api/suppliers: newest first; search (name, contact, phone, email), is_active. */
export async function listSuppliers(scope: TenantScope, query: SupplierListQuery) {
  const q = scope.query(Supplier);
  whereContains(q, ['name', 'contact', 'phone', 'email'], query.search);
  if (query.is_active !== undefined) q.where('is_active', query.is_active);
  return paginate(q, columns(scope), ['created_at', 'id'], query, supplierShape);
}

/** GET /api/suppliers/{supplier}. @throws NotFound for an id outside the tenant */
export async function supplierById(scope: TenantScope, id: number) {
  const row = await scope.query(Supplier).findById(id).select(columns(scope));
  if (!row) throw new NotFound('Supplier');
  return supplierShape(row);
}

function supplierColumns(input: SupplierInput): PartialModelObject<Supplier> {
  const out: PartialModelObject<Supplier> = {};
  const opt = (v: string | null | undefined) => (v == null || !v.trim() ? null : v.trim());
  if (input.name !== undefined) {
    out.name = input.name.trim();
    if (!out.name) throw new ValidationFailed({ name: ['The name field is required.'] });
  }
  if (input.contact !== undefined) out.contact = opt(input.contact);
  if (input.phone !== undefined) out.phone = opt(input.phone);
  if (input.email !== undefined) out.email = opt(input.email)?.toLowerCase() ?? null;
  if (input.address !== undefined) out.address = opt(input.address);
  if (input.is_active !== undefined) out.is_active = input.is_active;
  return out;
}

const summary = (r: PartialModelObject<Supplier>) => ({ name: r.name ?? null, is_active: r.is_active ?? null });

/** POST /api/suppliers (`inventory.supplier_created`). @returns the new id @throws ValidationFailed */
export async function createSupplier(scope: TenantScope, actor: Actor, input: SupplierInput): Promise<number> {
  const cols = supplierColumns(input);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const now = new Date();
    const row = await s.create(Supplier, { ...cols, created_at: now, updated_at: now }, trx);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'inventory.supplier_created',
      subject: { type: 'suppliers', id: row.id },
      after: summary(row),
      ip: actor.ip ?? null,
    });
    return row.id;
  });
}

/** PUT /api/suppliers/{supplier} (`inventory.supplier_updated`). @throws NotFound, ValidationFailed */
export async function updateSupplier(scope: TenantScope, actor: Actor, id: number, input: SupplierInput) {
  const cols = supplierColumns(input);
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Supplier).findById(id).forUpdate();
    if (!row) throw new NotFound('Supplier');
    await s
      .query(Supplier)
      .findById(id)
      .patch({ ...cols, updated_at: new Date() });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'inventory.supplier_updated',
      subject: { type: 'suppliers', id },
      before: summary(row),
      after: summary({ ...row, ...cols }),
      ip: actor.ip ?? null,
    });
  });
}

/**
 * DELETE /api/suppliers/{supplier}: deletes a supplier without buy prices or purchases; else
 * deactivates it. @returns {deleted: true} or {deleted: false, supplier} @throws NotFound
 */
export async function deleteSupplier(scope: TenantScope, actor: Actor, id: number) {
  const deleted = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Supplier).findById(id).forUpdate();
    if (!row) throw new NotFound('Supplier');
    const used =
      (await s.table('supplier_items').where('supplier_id', id).first('id')) ||
      (await s.table('inventory_purchases').where('supplier_id', id).first('id'));
    if (!used) await s.query(Supplier).deleteById(id);
    else if (row.is_active) await s.query(Supplier).findById(id).patch({ is_active: false, updated_at: new Date() });
    await recordAudit(s, {
      userId: actor.userId,
      action: used ? 'inventory.supplier_deactivated' : 'inventory.supplier_deleted',
      subject: { type: 'suppliers', id },
      before: summary(row),
      after: used ? { is_active: false } : null,
      ip: actor.ip ?? null,
    });
    return !used;
  });
  return deleted ? { deleted: true as const } : { deleted: false as const, supplier: await supplierById(scope, id) };
}

/**
 * GET /api/suppliers/{supplier}/items: the supplier's buy prices with their items, by item name.
 * @throws NotFound for a supplier outside the tenant
 */
export async function listSupplierItems(scope: TenantScope, supplierId: number, query: SupplierItemQuery) {
  if (!(await scope.query(Supplier).findById(supplierId).select('id'))) throw new NotFound('Supplier');
  const q = scope
    .table('supplier_items', 'si')
    .join('inventory_items as i', (j) => j.on('i.id', 'si.item_id').andOn('i.tenant_id', 'si.tenant_id'))
    .where('si.supplier_id', supplierId);
  if (query.search?.trim()) {
    const p = ilikeContains(query.search.trim());
    q.where((w) => w.where('i.name', 'ilike', p).orWhere('i.sku', 'ilike', p));
  }
  const [rows, [count]] = await Promise.all([
    q
      .clone()
      .select(
        'si.item_id',
        'si.cost_price',
        'si.updated_at',
        'i.name',
        'i.sku',
        'i.category',
        'i.unit',
        'i.sell_price',
        'i.is_active',
      )
      .orderBy([
        { column: 'i.name', order: 'asc' },
        { column: 'si.item_id', order: 'asc' },
      ])
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    q.clone().count('* as n'),
  ]);
  const data = rows.map((r: Record<string, any>) => ({
    item_id: r.item_id,
    item: {
      id: r.item_id,
      name: r.name,
      sku: r.sku,
      category: r.category,
      unit: r.unit,
      sell_price: num(r.sell_price),
      is_active: r.is_active,
    },
    cost_price: num(r.cost_price),
    updated_at: iso(r.updated_at),
  }));
  return envelope(data, query.page, query.per_page, Number((count as { n: string }).n));
}
