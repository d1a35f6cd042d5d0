import type { Knex } from 'knex';
import { TenantScope } from '../tenant-scope.js';
import { Tenant } from '../models/index.js';
import { recordAudit } from '../../api/audit-logs/service.js';
import { runBilling } from '../../api/invoices/billing.js';
import { anchorDate, monthIndexOf } from '../../api/invoices/billing-period.js';
import { settingsOf } from '../../api/settings/service.js';
import { tenantJobId } from '../../jobs/billing-cycle.js';
import { dateIn, startOfDayIn } from '../../lib/clock.js';
import { DAY, HOUR } from './demo-data.js';

/**
 * Three months of billing for demo-isp (issue 8 item 4 and item 7): the billing cycle's own
 * function (api/invoices/billing.ts) run as of the same day two months ago, a month ago and today
 * (the day of the month clamped, as billing periods are), each recorded as the scheduled run of that
 * day (billing_runs, trigger schedule, the job id the worker's sweep uses, so its first sweep today
 * finds the run done). Every cycle is there: the demo customers are prepaid, prepaid_rolling and
 * postpaid with billing days 1..28.
 *
 * It replaces the calendar-month invoices the issue 2 seed wrote for the tenant (deleted first,
 * with the invoice counter reset, so numbers still start at INV-000001): those ignored the customers'
 * cycles and would overlap the cycle's periods. Then, by customer (deterministic):
 * - suspended customers: the oldest past-due invoice paid, the other past-due ones overdue;
 * - active customers: past-due invoices paid, except every fifth customer's latest (left unpaid past
 *   its due date: work for the invoice-overdue job) and every sixth's latest (overdue);
 *   invoices not yet due: every third customer's paid, the rest unpaid;
 * - every eighth customer's oldest invoice voided (cancelled, with a reason, audited as
 *   `invoices.voided` by the tenant's Super Admin).
 * Run inside the seed's transaction.
 */

const VOID_REASONS = [
  'Billed twice after a package change',
  'Service outage for most of the period (credited)',
  'Customer moved; service paused by agreement',
];

/** Options of seedDemoBilling. */
export interface DemoBillingOptions {
  /** The seed's moment: "today" in the tenant's zone comes from it. */
  now: Date;
  /** The user the voids are audited as (the tenant's Super Admin). */
  userId: number;
}

/**
 * Seeds the billing of one tenant (see the file comment).
 * @param trx the seed's transaction
 * @returns the tenant's invoices per status afterwards
 */
export async function seedDemoBilling(
  trx: Knex.Transaction,
  tenantId: number,
  opts: DemoBillingOptions,
): Promise<Record<string, number>> {
  const scope = new TenantScope(trx, tenantId);
  const tenant = (await Tenant.query(trx).findById(tenantId))!;
  const tz = settingsOf(tenant).timezone;
  const now = opts.now;
  const today = dateIn(tz, now);
  await scope.table('invoices').delete();
  await scope.table('tenant_counters').where({ name: 'invoice' }).update({ value: 0 });

  const day = Number(today.slice(8, 10));
  for (const back of [2, 1, 0]) {
    const asOf = anchorDate(monthIndexOf(today) - back, day);
    // the hourly sweep's run at 00:15 local time that day (never after the seed's moment)
    const at = new Date(Math.min(now.getTime(), startOfDayIn(tz, asOf).getTime() + 15 * 60_000));
    const run = await scope.insert('billing_runs', {
      as_of: asOf,
      trigger: 'schedule',
      status: 'running',
      job_id: tenantJobId(tenantId, asOf),
      started_at: at,
      created_at: at,
      updated_at: at,
    });
    const counts = await runBilling(trx, { tenantId, asOf, runId: run.id, now: at });
    const done = new Date(at.getTime() + 2000);
    await scope.table('billing_runs').where({ id: run.id }).update({ status: 'completed', finished_at: done });
    await recordAudit(scope, {
      userId: null,
      action: 'invoices.billing_run',
      subject: { type: 'billing_runs', id: run.id },
      after: {
        as_of: asOf,
        trigger: 'schedule',
        created: counts.created,
        existing: counts.existing,
        skipped: counts.skipped,
      },
    });
  }
  await settle(scope, { today, now, userId: opts.userId });

  const rows: { status: string; n: string }[] = await scope
    .table('invoices')
    .select('status')
    .count({ n: '*' })
    .groupBy('status');
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

interface SeededInvoice {
  id: number;
  invoice_number: string;
  customer_id: number;
  c_status: string;
  due_date: string;
  created_at: Date;
}

/** Pays, marks overdue and voids the fresh invoices (see the file comment). */
async function settle(scope: TenantScope, o: { today: string; now: Date; userId: number }) {
  const rows: SeededInvoice[] = await scope
    .table('invoices', 'i')
    .join('customers as c', (j) => j.on('c.id', 'i.customer_id').andOn('c.tenant_id', 'i.tenant_id'))
    .orderBy([{ column: 'i.customer_id' }, { column: 'i.period_start' }])
    .select('i.id', 'i.invoice_number', 'i.customer_id', 'c.status as c_status', 'i.due_date', 'i.created_at');
  const byCustomer = new Map<number, SeededInvoice[]>();
  for (const r of rows) byCustomer.set(r.customer_id, [...(byCustomer.get(r.customer_id) ?? []), r]);
  const cap = (t: number) => new Date(Math.min(o.now.getTime() - HOUR, t));
  // never before the invoice was made (a run minutes before the seed's moment)
  const after = (r: SeededInvoice, t: Date) => new Date(Math.max(r.created_at.getTime(), t.getTime()));
  let ci = 0;
  for (const list of byCustomer.values()) {
    ci += 1;
    const past = list.filter((r) => r.due_date < o.today);
    const coming = list.filter((r) => r.due_date >= o.today);
    const status = new Map<number, 'paid' | 'overdue' | 'unpaid'>();
    if (list[0].c_status === 'suspended') {
      past.forEach((r, i) => status.set(r.id, i === 0 ? 'paid' : 'overdue'));
    } else {
      for (const r of past) status.set(r.id, 'paid');
      const latest = past.at(-1);
      if (latest && ci % 5 === 2) status.set(latest.id, 'unpaid');
      if (latest && ci % 6 === 3) status.set(latest.id, 'overdue');
      for (const r of coming) status.set(r.id, ci % 3 === 0 ? 'paid' : 'unpaid');
    }
    const voided = ci % 8 === 5 ? list[0] : null;
    for (const r of list) {
      const s = status.get(r.id) ?? 'unpaid';
      if (s === 'unpaid' || r === voided) continue;
      const paidAt = s === 'paid' ? after(r, cap(r.created_at.getTime() + (1 + (ci % 6)) * DAY + 3 * HOUR)) : null;
      const updated = paidAt ?? after(r, cap(startOfDayIn('UTC', r.due_date).getTime() + DAY + HOUR));
      await scope.table('invoices').where({ id: r.id }).update({ status: s, paid_at: paidAt, updated_at: updated });
    }
    if (voided) {
      // voided two days after it was made: still unpaid then, or overdue when it was made after its due date
      const voidedAt = after(voided, cap(voided.created_at.getTime() + 2 * DAY));
      const before = voided.due_date < voidedAt.toISOString().slice(0, 10) ? 'overdue' : 'unpaid';
      const reason = VOID_REASONS[ci % VOID_REASONS.length];
      await scope.table('invoices').where({ id: voided.id }).update({
        status: 'cancelled',
        void_reason: reason,
        voided_at: voidedAt,
        updated_at: voidedAt,
      });
      await recordAudit(scope, {
        userId: o.userId,
        action: 'invoices.voided',
        subject: { type: 'invoices', id: voided.id },
        before: { status: before, invoice_number: voided.invoice_number },
        after: { status: 'cancelled', void_reason: reason },
      });
    }
  }
}

/**
 * Gives the issue 2 seed's monthly invoices of a tenant (they have a period and name no type, so
 * they are `manual` by the column default) the type `subscription` they stand for, where that breaks
 * no unique key. For tenants whose billing is not re-seeded (demo-sandbox, `demo:seed --tenant`).
 * @returns how many invoices changed
 */
export async function typeSeededSubscriptions(trx: Knex.Transaction, tenantId: number): Promise<number> {
  const r = await trx.raw(
    `UPDATE invoices i SET type = 'subscription'
     WHERE i.tenant_id = ? AND i.type = 'manual' AND i.period_start IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM invoices j WHERE j.tenant_id = i.tenant_id AND j.customer_id = i.customer_id
                       AND j.period_start = i.period_start AND j.id <> i.id)`,
    [tenantId],
  );
  return r.rowCount ?? 0;
}
