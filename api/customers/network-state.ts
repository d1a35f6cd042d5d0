import type { Knex } from 'knex';
import type { PartialModelObject } from 'objection';
import { Customer, Invoice } from '../../db/models/index.js';
import { TenantScope } from '../../db/tenant-scope.js';
import type { Queues } from '../../jobs/queues.js';
import { QUEUE as CUSTOMER_NETWORK, enqueuePush } from '../../jobs/customer-network.js';
import { recordAudit } from '../audit-logs/service.js';
import { stateMachine } from '../shared/state-machine.js';

/**
 * Customer status and network state (issue 8 item 2), shared by the admin API and the billing work:
 * the status machine, the versioned request of a customer-network push, and the two billing hooks
 * suspendForOverdue (job invoice-overdue) and reactivateIfSettled (invoice void, later payments).
 * Every function here runs inside its caller's transaction: the row changes, its audit entry and the
 * job's enqueue (bounded by addOrUnavailable) commit together, and when Redis does not take the job
 * the QueueUnavailableError it throws rolls the whole change back (503 QUEUE_UNAVAILABLE over HTTP).
 */

/** Customer status values (document 1). */
export type CustomerStatus = Customer['status'];
/** What the status endpoint can do. */
export type StatusAction = 'activate' | 'suspend' | 'terminate';

/**
 * The customer's life: active <-> suspended (DESIGN decision: the spec's blocked / isolated), either
 * -> terminated, which is final. Anything else is 422 INVALID_TRANSITION.
 */
export const customerMachine = stateMachine<CustomerStatus, StatusAction>({
  activate: { from: ['suspended'], to: 'active' },
  suspend: { from: ['active'], to: 'suspended' },
  terminate: { from: ['active', 'suspended'], to: 'terminated' },
});

/** The action that leads to a requested status. */
export const ACTION_FOR: Record<CustomerStatus, StatusAction> = {
  active: 'activate',
  suspended: 'suspend',
  terminated: 'terminate',
};

/** Who acts: the user (null for the platform's jobs) and the caller's IP, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

/**
 * Takes a new network version for customers that have something to push (a NAS, a session a NAS
 * still holds, or a push on its way whose outcome must be superseded) and enqueues one
 * customer-network job per customer with the id `customer-network-<tenant>-<customer>-v<version>`. Versions
 * come from the sequence customer_network_version_seq: never reused, so a rolled-back change's job
 * id is never handed out again, and the job skips it (its version never appears on the row). Sync
 * status becomes pending.
 * Customers that never had a NAS are left as they are (sync status none).
 * @param trx the caller's transaction (the rows are changed in it, so the job waits for its commit)
 * @param queues the producer queues
 * @param customerIds customers of the tenant (others are not touched)
 * @returns customer id -> job id, for the customers that got a job
 * @throws QueueUnavailableError when Redis does not take a job in time (the caller's transaction must fail)
 */
export async function requestNetworkPush(
  trx: Knex.Transaction,
  queues: Queues,
  tenantId: number,
  customerIds: readonly number[],
): Promise<Map<number, string>> {
  const jobs = new Map<number, string>();
  if (!customerIds.length) return jobs;
  const s = new TenantScope(trx, tenantId);
  const rows: { id: number; network_version: string }[] = await s
    .table('customers')
    .whereIn('id', customerIds)
    .where((w) => {
      w.whereNotNull('nas_id').orWhereNotNull('network_nas_id').orWhereNot('network_sync_status', 'none');
    })
    .update({
      network_version: trx.raw(`nextval('customer_network_version_seq')`),
      network_sync_status: 'pending',
      network_error: null,
      network_requested_at: new Date(),
    })
    .returning(['id', 'network_version']);
  const queue = queues.get(CUSTOMER_NETWORK);
  const ids = await Promise.all(
    rows.map((r) =>
      enqueuePush(
        queue,
        { tenant_id: tenantId, customer_id: r.id, version: Number(r.network_version) },
        queues.enqueueTimeoutMs,
      ),
    ),
  );
  rows.forEach((r, i) => jobs.set(r.id, ids[i]));
  return jobs;
}

/** The columns a status change writes (suspend_reason only while suspended). */
function statusPatch(
  status: CustomerStatus,
  suspendReason: 'manual' | 'overdue' | null,
  reason: string | null,
): PartialModelObject<Customer> {
  const now = new Date();
  return {
    status,
    suspend_reason: status === 'suspended' ? suspendReason : null,
    status_reason: reason,
    status_changed_at: now,
    updated_at: now,
  };
}

/**
 * Changes one locked customer's status, audits it (`customers.status_changed`) and requests its
 * network push, in the caller's transaction.
 * @param row the customer, locked FOR UPDATE by the caller in `trx`
 * @throws InvalidTransition (422) when the machine refuses; QueueUnavailableError as requestNetworkPush
 * @returns the push's job id, or null when there is nothing to push
 */
export async function applyStatus(
  trx: Knex.Transaction,
  queues: Queues,
  row: Customer,
  target: CustomerStatus,
  opts: { suspendReason: 'manual' | 'overdue'; reason: string | null; actor: Actor | null },
): Promise<string | null> {
  const status = customerMachine.next(row.status, ACTION_FOR[target]);
  const s = new TenantScope(trx, row.tenant_id);
  const patch = statusPatch(status, opts.suspendReason, opts.reason);
  await s.query(Customer).findById(row.id).patch(patch);
  await recordAudit(s, {
    userId: opts.actor?.userId ?? null,
    action: 'customers.status_changed',
    subject: { type: 'customers', id: row.id },
    before: { status: row.status, suspend_reason: row.suspend_reason },
    after: { status, suspend_reason: patch.suspend_reason ?? null, reason: opts.reason },
    ip: opts.actor?.ip ?? null,
  });
  const jobs = await requestNetworkPush(trx, queues, row.tenant_id, [row.id]);
  return jobs.get(row.id) ?? null;
}

/**
 * Suspends, for overdue invoices, the given customers that are active (others are skipped): status
 * suspended, suspend_reason `overdue`, audited (user = actor, null for the invoice-overdue job),
 * network push requested (isolation on their NAS), all in the caller's transaction. Rows are locked
 * in id order (FOR UPDATE), so concurrent callers do not deadlock.
 * @param trx the caller's transaction
 * @param customerIds customers of the tenant (others are not touched)
 * @param actor who suspends; default the platform (no user)
 * @returns the ids of the customers suspended
 * @throws QueueUnavailableError when Redis does not take a job (the caller's transaction must fail)
 */
export async function suspendForOverdue(
  trx: Knex.Transaction,
  queues: Queues,
  tenantId: number,
  customerIds: readonly number[],
  actor: Actor | null = null,
): Promise<number[]> {
  if (!customerIds.length) return [];
  const s = new TenantScope(trx, tenantId);
  const rows = await s
    .query(Customer)
    .whereIn('id', [...new Set(customerIds)])
    .where('status', 'active')
    .orderBy('id')
    .forUpdate();
  const reason = 'Invoice overdue beyond the isolation grace period.';
  for (const row of rows) {
    const patch = statusPatch('suspended', 'overdue', reason);
    await s.query(Customer).findById(row.id).patch(patch);
    await recordAudit(s, {
      userId: actor?.userId ?? null,
      action: 'customers.status_changed',
      subject: { type: 'customers', id: row.id },
      before: { status: row.status, suspend_reason: row.suspend_reason },
      after: { status: 'suspended', suspend_reason: 'overdue', reason },
      ip: actor?.ip ?? null,
    });
  }
  const ids = rows.map((r) => r.id);
  await requestNetworkPush(trx, queues, tenantId, ids);
  return ids;
}

/**
 * Reactivates a customer suspended for overdue invoices once none of its invoices is overdue any
 * more (after a payment or a void): status active, suspend_reason null, audited, network push
 * requested, in the caller's transaction. A customer suspended by hand, active or terminated is
 * left alone.
 * @param trx the caller's transaction (which has already changed the invoice)
 * @returns true when the customer was reactivated
 * @throws QueueUnavailableError when Redis does not take the job (the caller's transaction must fail)
 */
export async function reactivateIfSettled(
  trx: Knex.Transaction,
  queues: Queues,
  tenantId: number,
  customerId: number,
): Promise<boolean> {
  const s = new TenantScope(trx, tenantId);
  const row = await s.query(Customer).findById(customerId).forUpdate();
  if (!row || row.status !== 'suspended' || row.suspend_reason !== 'overdue') return false;
  const overdue = await s.query(Invoice).where({ customer_id: customerId, status: 'overdue' }).first().select('id');
  if (overdue) return false;
  await applyStatus(trx, queues, row, 'active', {
    suspendReason: 'overdue',
    reason: 'No overdue invoice left.',
    actor: null,
  });
  return true;
}
