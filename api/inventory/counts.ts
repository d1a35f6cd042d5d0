import type { TenantScope } from '../../db/tenant-scope.js';
import { InventoryCount } from '../../db/models/index.js';
import { compare, money, sub, toDbString, type Money } from '../../lib/money.js';
import { NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import type { PageParams } from '../shared/list.js';
import { envelope, iso } from '../shared/schemas.js';
import { auditFor, itemsById, locationsById, num, type Actor } from './common.js';
import { applyLedger, keyOf, lockStock, serialKey, type LedgerEntry } from './ledger.js';

/**
 * Stock counts (issue 16 item 2): POST /api/inventory/counts records what was found at one
 * location. Under the stock rows' locks, each line's difference to the stock becomes an
 * `adjustment` in the ledger; for a serial item the in-stock serials not listed are written off and
 * a listed serial that is not in stock there is refused (422). GET lists and shows counts.
 */

/** One counted line: a quantity item's counted_quantity, or a serial item's serials found. */
export interface CountLineInput {
  item_id: number;
  /** >= 0, 2 decimals (quantity items; for serial items it must match serials). */
  counted_quantity?: number;
  serials?: string[];
}

/** Body of POST /api/inventory/counts after schema validation. */
export interface CountInput {
  location_id: number;
  reason: string;
  lines: CountLineInput[];
}

/** Validated query of GET /api/inventory/counts. */
export interface CountListQuery extends PageParams {
  location_id?: number;
}

/** Checks the lines; @returns per line the counted quantity (quantity items) or serial keys. */
async function checkLines(s: TenantScope, input: CountInput) {
  const errors: FieldErrors = {};
  if (!input.reason.trim()) errors.reason = ['The reason field is required.'];
  await locationsById(s, [['location_id', input.location_id]], errors);
  const items = await itemsById(
    s,
    input.lines.map((l, i) => [`lines.${i}.item_id`, l.item_id]),
    errors,
  );
  const seen = new Set<number>();
  const counted: (Money | null)[] = [];
  input.lines.forEach((l, i) => {
    if (seen.has(l.item_id)) errors[`lines.${i}.item_id`] = ['This item is listed twice.'];
    seen.add(l.item_id);
    const item = items.get(l.item_id);
    counted.push(null);
    if (!item) return;
    if (item.tracking === 'serial') {
      if (!l.serials) errors[`lines.${i}.serials`] = ['A serial item is counted by its serial numbers.'];
      else if (l.counted_quantity !== undefined && l.counted_quantity !== l.serials.length)
        errors[`lines.${i}.counted_quantity`] = ['It must equal the number of serials.'];
    } else if (l.serials !== undefined) {
      errors[`lines.${i}.serials`] = ['Only serial items are counted by serial numbers.'];
    } else if (l.counted_quantity === undefined) {
      errors[`lines.${i}.counted_quantity`] = ['The counted quantity field is required.'];
    } else {
      try {
        counted[i] = money(l.counted_quantity);
      } catch {
        errors[`lines.${i}.counted_quantity`] = ['At most 2 decimals.'];
      }
    }
  });
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return { items, counted };
}

/**
 * POST /api/inventory/counts (see the file comment), audited as `inventory.count_created`.
 * @returns the new count's id
 * @throws ValidationFailed (422) for bad lines, duplicate or foreign items, a foreign location, a
 *   listed serial not in stock at the location
 */
export async function createCount(scope: TenantScope, actor: Actor, input: CountInput): Promise<number> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const { items, counted } = await checkLines(s, input);
    const loc = input.location_id;
    const keys = input.lines.map((l) => ({ itemId: l.item_id, locationId: loc }));
    const locked = await lockStock(trx, s.tenantId, keys);
    const have = new Map(locked.map((r) => [keyOf({ itemId: r.item_id, locationId: r.location_id }), r.quantity]));
    const now = new Date();
    const count = await s.create(
      InventoryCount,
      { location_id: loc, reason: input.reason.trim(), created_by: actor.userId, created_at: now, updated_at: now },
      trx,
    );
    const errors: FieldErrors = {};
    const lines: { item_id: number; expected: Money; counted: Money; written_off: string[]; entry?: number }[] = [];
    const entries: LedgerEntry[] = [];
    for (const [i, l] of input.lines.entries()) {
      const expected = money(have.get(keyOf({ itemId: l.item_id, locationId: loc })) ?? 0);
      const base = { itemId: l.item_id, locationId: loc, type: 'adjustment' as const, errorPath: `lines.${i}` };
      const ref = { referenceType: 'inventory_count' as const, referenceId: count.id, note: input.reason.trim() };
      if (items.get(l.item_id)!.tracking === 'serial') {
        const inStock: string[] = await s
          .table('inventory_serials')
          .where({ item_id: l.item_id, location_id: loc, status: 'in_stock' })
          .orderBy('id')
          .forUpdate()
          .pluck('serial_number');
        const found = new Set(l.serials!.map(serialKey));
        const known = new Set(inStock.map(serialKey));
        const unknown = l.serials!.filter((x) => !known.has(serialKey(x)));
        if (unknown.length) errors[`lines.${i}.serials`] = [`Not in stock at this location: ${unknown.join(', ')}.`];
        const missing = inStock.filter((x) => !found.has(serialKey(x)));
        lines.push({ item_id: l.item_id, expected, counted: money(found.size), written_off: missing });
        if (missing.length) {
          entries.push({
            ...base,
            ...ref,
            change: money(-missing.length),
            serials: missing,
            serialsAfter: 'written_off',
          });
          lines[i].entry = entries.length - 1;
        }
      } else {
        const diff = sub(counted[i]!, expected);
        lines.push({ item_id: l.item_id, expected, counted: counted[i]!, written_off: [] });
        if (compare(diff, 0) !== 0) {
          entries.push({ ...base, ...ref, change: diff });
          lines[i].entry = entries.length - 1;
        }
      }
    }
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const mutations = await applyLedger(s, trx, actor.userId, entries);
    await trx('inventory_count_lines').insert(
      lines.map((l) => ({
        tenant_id: s.tenantId,
        count_id: count.id,
        item_id: l.item_id,
        expected_quantity: toDbString(l.expected),
        counted_quantity: toDbString(l.counted),
        difference: toDbString(sub(l.counted, l.expected)),
        written_off_serials: JSON.stringify(l.written_off),
        mutation_id: l.entry === undefined ? null : mutations[l.entry].id,
      })),
    );
    await auditFor(s, actor, {
      action: 'inventory.count_created',
      subject: { type: 'inventory_counts', id: count.id },
      after: { location_id: loc, lines: lines.length, adjustments: entries.length },
    });
    return count.id;
  });
}

function countFrom(scope: TenantScope) {
  return scope
    .query(InventoryCount, { alias: 'c' })
    .leftJoin('inventory_locations as l', (j) => {
      j.on('l.id', 'c.location_id').andOn('l.tenant_id', 'c.tenant_id');
    })
    .leftJoin('users as u', (j) => {
      j.on('u.id', 'c.created_by').andOn('u.tenant_id', 'c.tenant_id');
    });
}
const COLUMNS = [
  'c.id',
  'c.location_id',
  'c.reason',
  'c.created_by',
  'c.created_at',
  'c.updated_at',
  'l.name as l_name',
  'l.type as l_type',
  'u.name as u_name',
];
const countShape = (r: Record<string, any>) => ({
  id: r.id,
  location_id: r.location_id,
  location: { id: r.location_id, name: r.l_name, type: r.l_type },
  reason: r.reason,
  created_by: r.created_by && r.u_name != null ? { id: r.created_by, name: r.u_name } : null,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** GET /api/inventory/counts: newest first; filter location_id. */
export async function listCounts(scope: TenantScope, query: CountListQuery) {
  const q = countFrom(scope);
  if (query.location_id) q.where('c.location_id', query.location_id);
  const [rows, total] = await Promise.all([
    q
      .clone()
      .select(COLUMNS)
      .orderBy([
        { column: 'c.created_at', order: 'desc' },
        { column: 'c.id', order: 'desc' },
      ])
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page),
    q.clone().resultSize(),
  ]);
  return envelope(rows.map(countShape), query.page, query.per_page, total);
}

/** GET /api/inventory/counts/{id}: the count with its lines. @throws NotFound outside the tenant */
export async function countById(scope: TenantScope, id: number) {
  const row = await countFrom(scope).select(COLUMNS).where('c.id', id).first();
  if (!row) throw new NotFound('Inventory count');
  const lines = await scope
    .table('inventory_count_lines', 'x')
    .join('inventory_items as i', (j) => j.on('i.id', 'x.item_id').andOn('i.tenant_id', 'x.tenant_id'))
    .where('x.count_id', id)
    .orderBy('x.id')
    .select('x.*', 'i.name as i_name', 'i.sku as i_sku', 'i.tracking as i_tracking');
  return {
    ...countShape(row),
    lines: lines.map((l: Record<string, any>) => ({
      item_id: l.item_id,
      item: { id: l.item_id, name: l.i_name, sku: l.i_sku, tracking: l.i_tracking },
      expected_quantity: num(l.expected_quantity),
      counted_quantity: num(l.counted_quantity),
      difference: num(l.difference),
      written_off_serials: l.written_off_serials,
      mutation_id: l.mutation_id == null ? null : Number(l.mutation_id),
    })),
  };
}
