import { systemClock } from '../../../lib/clock.js';
import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../../db/tenant-scope.js';
import { InventoryRequest, type InventoryRequestStatus } from '../../../db/models/index.js';
import { compare, money, type Money } from '../../../lib/money.js';
import { auditFor } from '../common.js';
import { InsufficientStock, ValidationFailed, type FieldErrors } from '../../errors.js';
import { stateMachine } from '../../shared/state-machine.js';
import { applyLedger, serialKey, type LedgerEntry, type MutationType } from '../ledger.js';
import { addHistory, lockRequest, type Requester } from './service.js';

/**
 * The life of an inventory request (admin-api.md "States and transitions", issue 16 item 4). Every
 * action locks the request row (FOR UPDATE), so of two racing decisions one wins and the other
 * meets the new state: 422 INVALID_TRANSITION. Each change writes a history row.
 * - submit: draft -> pending; approve: pending, deferred -> approved (stock checked, none reserved);
 * - reject, defer: pending -> rejected, deferred (reason required); resume: deferred -> pending;
 * - process: approved -> processing: the stock moves through the ledger, one mutation per item and
 *   direction (unique (request_item_id, direction)); complete: processing -> completed;
 * - cancel: draft, pending, deferred, approved ("open") -> cancelled.
 * PUT (edit, service.ts) is allowed in draft, pending and deferred.
 */

/** The actions of POST /api/inventory/requests/{id}/<action>. */
export type RequestAction = 'submit' | 'approve' | 'reject' | 'defer' | 'resume' | 'process' | 'complete' | 'cancel';

/** The transition table. */
export const requestMachine = stateMachine<InventoryRequestStatus, RequestAction>({
  submit: { from: ['draft'], to: 'pending' },
  approve: { from: ['pending', 'deferred'], to: 'approved' },
  reject: { from: ['pending'], to: 'rejected' },
  defer: { from: ['pending'], to: 'deferred' },
  resume: { from: ['deferred'], to: 'pending' },
  process: { from: ['approved'], to: 'processing' },
  complete: { from: ['processing'], to: 'completed' },
  cancel: { from: ['draft', 'pending', 'deferred', 'approved'], to: 'cancelled' },
});

/** The serials of the serial items, as POST .../process takes them. */
export interface ProcessInput {
  items?: { item_id: number; serials: string[] }[];
}

interface RequestItemRow {
  id: number;
  item_id: number;
  quantity: number;
  tracking: 'quantity' | 'serial';
}

async function requestItems(s: TenantScope, requestId: number): Promise<RequestItemRow[]> {
  return s
    .table('inventory_request_items', 'x')
    .join('inventory_items as i', (j) => j.on('i.id', 'x.item_id').andOn('i.tenant_id', 'x.tenant_id'))
    .where('x.request_id', requestId)
    .orderBy('x.id')
    .select('x.id', 'x.item_id', 'x.quantity', 'i.tracking');
}

/**
 * Approve's stock check: every item is available at the source now (nothing is reserved).
 * @throws InsufficientStock naming `items.N.quantity`
 */
async function checkAvailable(s: TenantScope, row: InventoryRequest, items: RequestItemRow[]) {
  const stock = await s
    .table('inventory_stock')
    .where('location_id', row.source_location_id)
    .whereIn(
      'item_id',
      items.map((i) => i.item_id),
    )
    .select('item_id', 'quantity');
  const have = new Map<number, number>(
    stock.map((r: { item_id: number; quantity: number }) => [r.item_id, r.quantity]),
  );
  const errors: FieldErrors = {};
  items.forEach((it, i) => {
    const h = have.get(it.item_id) ?? 0;
    if (compare(h, it.quantity) < 0) errors[`items.${i}.quantity`] = [`Only ${h} in stock at the source location.`];
  });
  if (Object.keys(errors).length) throw new InsufficientStock(errors);
}

/** The ledger entries of processing: out of the source, and into the destination for a transfer or return. */
function processEntries(row: InventoryRequest, items: RequestItemRow[], input: ProcessInput): LedgerEntry[] {
  const errors: FieldErrors = {};
  const given = new Map<number, string[]>();
  (input.items ?? []).forEach((x, i) => {
    const it = items.find((r) => r.item_id === x.item_id);
    if (!it) errors[`items.${i}.item_id`] = ['This item is not in the request.'];
    else if (it.tracking !== 'serial') errors[`items.${i}.serials`] = ['Only serial items take serial numbers.'];
    else if (given.has(x.item_id)) errors[`items.${i}.item_id`] = ['This item is listed twice.'];
    else given.set(x.item_id, x.serials);
  });
  const all = [...given.values()].flat().map(serialKey);
  if (new Set(all).size !== all.length) errors.items = ['A serial number is listed twice.'];
  items.forEach((it, i) => {
    if (it.tracking !== 'serial') return;
    const serials = given.get(it.item_id);
    if (!serials || serials.length !== Number(it.quantity))
      errors[`items.${i}.serials`] = [`Give ${Number(it.quantity)} serial numbers of item ${it.item_id}.`];
  });
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  const type: MutationType = row.type;
  const entries: LedgerEntry[] = [];
  items.forEach((it, i) => {
    const q: Money = money(it.quantity);
    const common = {
      itemId: it.item_id,
      type,
      serials: given.get(it.item_id),
      serialsPath: `items.${i}.serials`,
      errorPath: `items.${i}.quantity`,
      referenceType: 'inventory_request' as const,
      referenceId: row.id,
      requestItemId: it.id,
      note: row.number,
    };
    entries.push({ ...common, locationId: row.source_location_id, change: q.neg() });
    if (row.destination_location_id) entries.push({ ...common, locationId: row.destination_location_id, change: q });
  });
  return entries;
}

/**
 * POST /api/inventory/requests/{id}/{action}: one transition (see the file comment).
 * @param who the caller; a non-manager only reaches their own requests (routes restrict approve,
 *   reject, defer, resume and process to inventory.manage)
 * @param body.reason reject and defer (required by the schema), cancel (optional)
 * @param body.items process: the serials of the serial items
 * @throws NotFound; InvalidTransition (422) from another state; InsufficientStock (422) on approve
 *   or process when the source is short (nothing moves); ValidationFailed (422) for process serials
 */
export async function transitionRequest(
  scope: TenantScope,
  who: Requester,
  id: number,
  action: RequestAction,
  body: { reason?: string | null } & ProcessInput = {},
) {
  await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await lockRequest(s, id, who);
    const to = requestMachine.next(row.status, action);
    const now = systemClock.now();
    const patch: PartialModelObject<InventoryRequest> = { status: to, updated_at: now };
    const reason = body.reason?.trim() || null;
    if (action === 'reject' || action === 'defer') {
      if (!reason) throw new ValidationFailed({ reason: ['The reason field is required.'] });
      patch.reason = reason;
    }
    if (action === 'cancel') Object.assign(patch, { cancelled_at: now, ...(reason ? { reason } : {}) });
    if (['approve', 'reject', 'defer'].includes(action))
      Object.assign(patch, { decided_by: who.userId, decided_at: now });
    if (action === 'complete') patch.completed_at = now;
    if (action === 'approve') await checkAvailable(s, row, await requestItems(s, id));
    if (action === 'process') {
      const items = await requestItems(s, id);
      const entries = processEntries(row, items, body);
      const mutations = await applyLedger(s, trx, who.userId, entries);
      for (const it of items) {
        const e = entries.find((x) => x.requestItemId === it.id)!;
        if (e.serials?.length)
          await trx('inventory_request_items')
            .where({ id: it.id, tenant_id: s.tenantId })
            .update({ serials: JSON.stringify(e.serials.map((x) => x.trim())) });
      }
      Object.assign(patch, { processed_by: who.userId, processed_at: now });
      await auditFor(s, who, {
        action: 'inventory.request_processed',
        subject: { type: 'inventory_requests', id },
        after: { number: row.number, mutations: mutations.map((m) => m.id) },
      });
    }
    await s.query(InventoryRequest).findById(id).patch(patch);
    await addHistory(s, trx, { requestId: id, action, from: row.status, to, reason, userId: who.userId });
  });
}
