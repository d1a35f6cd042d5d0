import type { Knex } from 'knex';
import type { TenantScope } from '../../db/tenant-scope.js';
import { add, compare, money, toDbString, toNumber, type Money } from '../../lib/money.js';
import { InsufficientStock, type FieldErrors } from '../errors.js';

/**
 * The one way stock changes (issue 16 item 2): a set of ledger entries applied in the caller's
 * transaction. It locks the stock rows it touches in (item_id, location_id) order (so two changes
 * never deadlock), checks every row stays >= 0, decrements `WHERE quantity >= n`, moves the serial
 * numbers and appends one `inventory_mutations` row per entry. When anything is short nothing
 * moves: it throws InsufficientStock (422) naming each short entry's field, and the caller's
 * transaction rolls back.
 */

/** Kinds of ledger row (inventory_mutations.type). */
export type MutationType = 'stock_in' | 'stock_out' | 'transfer' | 'return' | 'adjustment';

/** One change of one stock row. */
export interface LedgerEntry {
  itemId: number;
  locationId: number;
  /** Signed quantity: > 0 into the location, < 0 out of it (numeric(14,2)). */
  change: Money;
  type: MutationType;
  /** Field path named when this entry is short, e.g. `items.0.quantity`. */
  errorPath: string;
  /**
   * Serial numbers that move with the entry (as many as |change|). Out of the location: each must be
   * in_stock there, and becomes `serialsAfter` (default issued; `in_transit` is not a state: an out
   * entry followed by an in entry of the same call moves them). Into it: with `newSerials` they are
   * created, else they must have left in an out entry of the same call.
   */
  serials?: string[];
  /** Field path of a serial that is not in stock, e.g. `items.0.serials`. */
  serialsPath?: string;
  /** Status of serials leaving (out entries): issued (default) or written_off. */
  serialsAfter?: 'issued' | 'written_off';
  /** In entries of a stock-in: the serials are new. */
  newSerials?: boolean;
  unitCost?: Money | null;
  referenceType?: 'inventory_request' | 'inventory_count' | 'inventory_purchase' | null;
  referenceId?: number | null;
  requestItemId?: number | null;
  note?: string | null;
}

/** A mutation row as written (quantities as strings of numeric(14,2)). */
export interface MutationRow {
  id: number;
  item_id: number;
  location_id: number;
  type: MutationType;
  direction: 'in' | 'out';
  quantity: string;
  balance_after: string;
}

/** Normalises a serial number for storage and comparison: trimmed; compared case-insensitively. */
export const serialKey = (s: string) => s.trim().toUpperCase();

/**
 * Parses a quantity from a body (a JSON number, schema-checked > 0): at most 2 decimals.
 * @param path the field path for the error
 * @param errors collects `path: [reason]` instead of throwing
 * @param whole serial items: a whole number
 * @returns the exact quantity, or null when it was refused
 */
export function quantityOf(v: number, path: string, errors: FieldErrors, whole = false): Money | null {
  let q: Money;
  try {
    q = money(v, whole ? 0 : 2);
  } catch {
    errors[path] = [whole ? 'The quantity of a serial item must be a whole number.' : 'At most 2 decimals.'];
    return null;
  }
  if (compare(q, 0) <= 0) {
    errors[path] = ['The quantity must be greater than 0.'];
    return null;
  }
  return q;
}

/** A stock row key. */
export interface StockKey {
  itemId: number;
  locationId: number;
}

/** `${item}:${location}` key of a stock row. */
export const keyOf = (e: StockKey) => `${e.itemId}:${e.locationId}`;

/** A locked stock row (quantity as the numeric(14,2) string). */
export interface LockedStock {
  id: number;
  item_id: number;
  location_id: number;
  quantity: string;
}

/**
 * Locks the stock rows of `keys` in (item_id, location_id) order (one statement), first creating
 * the rows of `create` (quantity 0) in that order, so concurrent changes queue and never deadlock.
 * @param trx the caller's transaction (the locks last until it ends)
 * @returns the rows that exist (a key without a row has no stock)
 */
export async function lockStock(
  trx: Knex.Transaction,
  tenantId: number,
  keys: StockKey[],
  create: StockKey[] = [],
): Promise<LockedStock[]> {
  const sorted = (ks: StockKey[]) => [...ks].sort((a, b) => a.itemId - b.itemId || a.locationId - b.locationId);
  if (create.length) {
    await trx('inventory_stock')
      .insert(sorted(create).map((k) => ({ tenant_id: tenantId, item_id: k.itemId, location_id: k.locationId })))
      .onConflict(['tenant_id', 'item_id', 'location_id'])
      .ignore();
  }
  if (!keys.length) return [];
  const ordered = sorted(keys);
  const r = await trx.raw(
    `SELECT id, item_id, location_id, quantity FROM inventory_stock
      WHERE tenant_id = ? AND (item_id, location_id) IN (${ordered.map(() => '(?, ?)').join(', ')})
      ORDER BY item_id, location_id FOR UPDATE`,
    [tenantId, ...ordered.flatMap((k) => [k.itemId, k.locationId])],
  );
  return r.rows;
}

/**
 * Applies ledger entries in the caller's transaction (see the file comment).
 * @param scope the tenant, bound to the transaction (scope.withTransaction(trx))
 * @param trx that transaction
 * @param userId who acts (inventory_mutations.created_by)
 * @param entries the changes; out entries are applied before in entries
 * @returns the mutation rows, in the order of `entries`
 * @throws InsufficientStock (422 INSUFFICIENT_STOCK) when a row would go below 0 or a serial is not
 *   in stock at the entry's location; nothing is written then
 */
export async function applyLedger(
  scope: TenantScope,
  trx: Knex.Transaction,
  userId: number | null,
  entries: LedgerEntry[],
): Promise<MutationRow[]> {
  const tenantId = scope.tenantId;
  const keys = [...new Map(entries.map((e) => [keyOf(e), { itemId: e.itemId, locationId: e.locationId }])).values()];
  const incoming = keys.filter((k) => entries.some((e) => keyOf(e) === keyOf(k) && compare(e.change, 0) > 0));
  const locked = await lockStock(trx, tenantId, keys, incoming);
  const stock = new Map(locked.map((r) => [keyOf({ itemId: r.item_id, locationId: r.location_id }), r]));

  const errors: FieldErrors = {};
  const after = new Map<string, Money>();
  for (const k of keys) {
    const total = entries.filter((e) => keyOf(e) === keyOf(k)).reduce((s, e) => add(s, e.change), money(0));
    const have = money(stock.get(keyOf(k))?.quantity ?? 0);
    const end = add(have, total);
    after.set(keyOf(k), end);
    if (compare(end, 0) < 0) {
      for (const e of entries.filter((x) => keyOf(x) === keyOf(k) && compare(x.change, 0) < 0)) {
        errors[e.errorPath] = [`Only ${toNumber(have)} in stock at this location; ${toNumber(e.change.neg())} asked.`];
      }
    }
  }
  const outSerials = entries.filter((e) => compare(e.change, 0) < 0 && e.serials?.length);
  const serialRows = new Map<string, { id: number; item_id: number; location_id: number | null; status: string }>();
  const wanted = outSerials.flatMap((e) => e.serials!.map(serialKey));
  if (wanted.length) {
    const rows = await scope
      .table('inventory_serials')
      .whereRaw('upper(serial_number) = ANY(?::text[])', [wanted])
      .orderBy('id')
      .forUpdate()
      .select('id', 'item_id', 'location_id', 'status', 'serial_number');
    for (const r of rows) serialRows.set(serialKey(r.serial_number), r);
    for (const e of outSerials) {
      const bad = e.serials!.filter((s) => {
        const r = serialRows.get(serialKey(s));
        return !r || r.item_id !== e.itemId || r.location_id !== e.locationId || r.status !== 'in_stock';
      });
      if (bad.length) errors[e.serialsPath ?? e.errorPath] = [`Not in stock at this location: ${bad.join(', ')}.`];
    }
  }
  const newSerials = entries.filter((e) => e.newSerials && e.serials?.length).flatMap((e) => e.serials!);
  if (newSerials.length) {
    const taken = await scope
      .table('inventory_serials')
      .whereRaw('upper(serial_number) = ANY(?::text[])', [newSerials.map(serialKey)])
      .pluck('serial_number');
    if (taken.length) {
      const e = entries.find((x) => x.newSerials)!;
      throw new InsufficientStock({
        [e.serialsPath ?? e.errorPath]: [`Serial numbers already known: ${taken.join(', ')}.`],
      });
    }
  }
  if (Object.keys(errors).length) throw new InsufficientStock(errors);

  const order = [...entries.keys()].sort(
    (a, b) => Number(compare(entries[a].change, 0) > 0) - Number(compare(entries[b].change, 0) > 0),
  );
  const out: MutationRow[] = new Array(entries.length);
  const now = new Date();
  for (const i of order) {
    const e = entries[i];
    const row = stock.get(keyOf(e)) ?? (await lockedRow(trx, tenantId, e));
    const n = toDbString(e.change.abs());
    const upd =
      compare(e.change, 0) < 0
        ? await trx.raw(
            `UPDATE inventory_stock SET quantity = quantity - ?, updated_at = ? WHERE id = ? AND quantity >= ? RETURNING quantity`,
            [n, now, row.id, n],
          )
        : await trx.raw(
            `UPDATE inventory_stock SET quantity = quantity + ?, updated_at = ? WHERE id = ? RETURNING quantity`,
            [n, now, row.id],
          );
    if (!upd.rows.length) throw new InsufficientStock({ [e.errorPath]: ['Not enough stock at this location.'] });
    await moveSerials(scope, trx, e, now);
    const [m] = await trx('inventory_mutations')
      .insert({
        tenant_id: tenantId,
        item_id: e.itemId,
        location_id: e.locationId,
        type: e.type,
        direction: compare(e.change, 0) > 0 ? 'in' : 'out',
        quantity: toDbString(e.change),
        balance_after: upd.rows[0].quantity,
        serials: JSON.stringify((e.serials ?? []).map((s) => s.trim())),
        unit_cost: e.unitCost == null ? null : toDbString(e.unitCost),
        reference_type: e.referenceType ?? null,
        reference_id: e.referenceId ?? null,
        request_item_id: e.requestItemId ?? null,
        note: e.note ?? null,
        created_by: userId,
        created_at: now,
      })
      .returning(['id', 'item_id', 'location_id', 'type', 'direction', 'quantity', 'balance_after']);
    out[i] = { ...m, id: Number(m.id) };
  }
  return out;
}

/** The stock row of an entry inserted by this call (not seen by the lock query: never happens in practice). */
async function lockedRow(trx: Knex.Transaction, tenantId: number, e: LedgerEntry) {
  const r = await trx('inventory_stock')
    .where({ tenant_id: tenantId, item_id: e.itemId, location_id: e.locationId })
    .forUpdate()
    .first('id');
  if (!r) throw new InsufficientStock({ [e.errorPath]: ['Nothing in stock at this location.'] });
  return r as { id: number };
}

/** Moves, creates or retires the serial numbers of one entry. */
async function moveSerials(scope: TenantScope, trx: Knex.Transaction, e: LedgerEntry, now: Date) {
  if (!e.serials?.length) return;
  const keys = e.serials.map(serialKey);
  if (compare(e.change, 0) < 0) {
    await scope
      .table('inventory_serials')
      .whereRaw('upper(serial_number) = ANY(?::text[])', [keys])
      .update({ status: e.serialsAfter ?? 'issued', location_id: null, updated_at: now });
  } else if (e.newSerials) {
    await trx('inventory_serials').insert(
      e.serials.map((s) => ({
        tenant_id: scope.tenantId,
        item_id: e.itemId,
        serial_number: s.trim(),
        status: 'in_stock',
        location_id: e.locationId,
        created_at: now,
        updated_at: now,
      })),
    );
  } else {
    await scope
      .table('inventory_serials')
      .whereRaw('upper(serial_number) = ANY(?::text[])', [keys])
      .update({ status: 'in_stock', location_id: e.locationId, updated_at: now });
  }
}
