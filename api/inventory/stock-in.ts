import { systemClock } from '../../lib/clock.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { InventoryItem, Supplier } from '../../db/models/index.js';
import { money, mul, round, toDbString, type Money } from '../../lib/money.js';
import { NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { iso } from '../shared/schemas.js';
import { auditFor, locationsById, num, type Actor } from './common.js';
import { applyLedger, quantityOf, serialKey } from './ledger.js';

/**
 * POST /api/inventory/{id}/stock-in (issue 16 item 3; admin-api.md "finance_paid=true with
 * finance_account_id, unit_cost, quantity books the purchase as an expense"): puts received stock
 * into a location through the ledger and records the purchase (amount = quantity x unit_cost,
 * exact, rounded half-up to 2 decimals) with finance_status `pending`: the finance issue books it
 * (an expense from finance_account_id when finance_paid, else a supplier payable).
 */

/** Body of the stock-in after schema validation. */
export interface StockInInput {
  /** >= 0.01, 2 decimals; whole for serial items. */
  quantity: number;
  /** >= 0, 2 decimals (tenant currency). */
  unit_cost: number;
  location_id: number;
  supplier_id?: number | null;
  /** Default false. */
  finance_paid?: boolean;
  /** Required when finance_paid. */
  finance_account_id?: number | null;
  /** Serial items: one per unit, new to the tenant. */
  serials?: string[];
  note?: string | null;
}

/** True when a finance account id may be used by the tenant: its row when the finance tables exist. */
async function financeAccountOk(s: TenantScope, id: number): Promise<boolean> {
  const r = await s.knex.raw(`SELECT to_regclass('finance_accounts') IS NOT NULL AS present`);
  if (!r.rows[0].present) return true; // finance comes later: the intent is recorded (docs/decisions.md)
  const row = await s.knex('finance_accounts').where({ id, tenant_id: s.tenantId }).first('id');
  return !!row;
}

/** Checks the body against the item; @returns the exact quantity and unit cost. @throws ValidationFailed */
async function checkInput(s: TenantScope, item: InventoryItem, input: StockInInput) {
  const errors: FieldErrors = {};
  const serial = item.tracking === 'serial';
  const quantity = quantityOf(input.quantity, 'quantity', errors, serial);
  let unitCost: Money | null = null;
  try {
    unitCost = money(input.unit_cost);
  } catch {
    errors.unit_cost = ['At most 2 decimals.'];
  }
  const serials = (input.serials ?? []).map((x) => x.trim());
  if (serial) {
    if (!serials.length) errors.serials = ['A serial item needs one serial number per unit.'];
    else if (quantity && serials.length !== Number(quantity)) {
      errors.serials = [`${serials.length} serial numbers for a quantity of ${Number(quantity)}.`];
    }
    serials.forEach((x, i) => {
      if (!x) errors[`serials.${i}`] = ['A serial number cannot be blank.'];
      else if (serials.findIndex((y) => serialKey(y) === serialKey(x)) !== i)
        errors[`serials.${i}`] = ['This serial number is listed twice.'];
    });
  } else if (serials.length) errors.serials = ['Only serial items take serial numbers.'];
  if (input.finance_paid && input.finance_account_id == null)
    errors.finance_account_id = ['The finance account id field is required when finance paid is true.'];
  else if (input.finance_account_id != null && !(await financeAccountOk(s, input.finance_account_id)))
    errors.finance_account_id = ['The selected finance account id is invalid.'];
  await locationsById(s, [['location_id', input.location_id]], errors, { active: true });
  if (input.supplier_id != null) {
    const sup = await s.query(Supplier).findById(input.supplier_id).select('id', 'is_active');
    if (!sup) errors.supplier_id = ['The selected supplier id is invalid.'];
    else if (!sup.is_active) errors.supplier_id = ['The selected supplier is inactive.'];
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return { quantity: quantity!, unitCost: unitCost!, serials };
}

/**
 * Receives stock (see the file comment): one `stock_in` mutation, the serials created in_stock,
 * one `inventory_purchases` row and `inventory.stock_in` in the audit log, in one transaction.
 * @param itemId the item of the path
 * @returns the purchase read shape (with the mutation and the location's stock after it)
 * @throws NotFound for an item outside the tenant; ValidationFailed (422) for bad fields, foreign
 *   location, supplier or finance account ids; InsufficientStock (422) for known serial numbers
 */
export async function stockIn(scope: TenantScope, actor: Actor, itemId: number, input: StockInInput) {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const item = await s.query(InventoryItem).findById(itemId);
    if (!item) throw new NotFound('Inventory item');
    const { quantity, unitCost, serials } = await checkInput(s, item, input);
    const amount = round(mul(quantity, unitCost));
    const purchaseId = Number(
      (await trx.raw(`SELECT nextval(pg_get_serial_sequence('inventory_purchases', 'id')) AS id`)).rows[0].id,
    );
    const [mutation] = await applyLedger(s, trx, actor.userId, [
      {
        itemId,
        locationId: input.location_id,
        change: quantity,
        type: 'stock_in',
        errorPath: 'quantity',
        serials: serials.length ? serials : undefined,
        serialsPath: 'serials',
        newSerials: true,
        unitCost,
        referenceType: 'inventory_purchase',
        referenceId: purchaseId,
        note: input.note ?? null,
      },
    ]);
    const now = systemClock.now();
    const [p] = await trx('inventory_purchases')
      .insert({
        id: purchaseId,
        tenant_id: s.tenantId,
        item_id: itemId,
        location_id: input.location_id,
        supplier_id: input.supplier_id ?? null,
        quantity: toDbString(quantity),
        unit_cost: toDbString(unitCost),
        amount: toDbString(amount),
        finance_paid: !!input.finance_paid,
        finance_account_id: input.finance_account_id ?? null,
        finance_status: 'pending',
        mutation_id: mutation.id,
        created_by: actor.userId,
        created_at: now,
        updated_at: now,
      })
      .returning('*');
    await auditFor(s, actor, {
      action: 'inventory.stock_in',
      subject: { type: 'inventory_items', id: itemId },
      after: {
        purchase_id: purchaseId,
        location_id: input.location_id,
        quantity: num(p.quantity),
        unit_cost: num(p.unit_cost),
        amount: num(p.amount),
        finance_paid: p.finance_paid,
        serials: serials.length,
      },
    });
    return {
      id: p.id as number,
      item_id: itemId,
      location_id: p.location_id as number,
      supplier_id: p.supplier_id as number | null,
      quantity: num(p.quantity),
      unit_cost: num(p.unit_cost),
      amount: num(p.amount),
      finance_paid: p.finance_paid as boolean,
      finance_account_id: p.finance_account_id as number | null,
      finance_status: p.finance_status as string,
      mutation_id: mutation.id,
      serials,
      location_stock: num(mutation.balance_after),
      created_at: iso(p.created_at),
    };
  });
}
