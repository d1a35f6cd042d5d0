import type { Knex } from 'knex';
import { Tenant } from '../../db/models/index.js';
import { TenantScope, tenantStatement } from '../../db/tenant-scope.js';
import { settingsOf } from '../settings/service.js';
import { monthIndexOf } from './billing-period.js';

/**
 * The billing cycle's work (issue 8 item 4): subscription invoices for one tenant as of one day,
 * used by the billing-cycle job, the demo seed and the benchmark. No HTTP here (jobs/ imports it).
 *
 * Who is billed: active and suspended customers whose package has a price > 0, at the package's full
 * price (no proration), for the period of their cycle (api/invoices/billing-period.ts has the rules
 * and the TypeScript reference; here they are computed in SQL for a whole batch at once). One
 * subscription invoice per customer and period start, voided ones included (unique index
 * invoices_subscription_period_unique).
 *
 * Numbering without gaps or duplicates under concurrent runs and manual invoices: each batch is one
 * transaction that (1) locks the tenant's `invoice` counter row (tenant_counters, the row
 * db/numbering.ts nextNumber locks too) and reads its value v, (2) inserts the batch's new invoices
 * with one INSERT ... SELECT numbered v + row_number(), skipping customers whose invoice for the
 * period exists (NOT EXISTS, read after the lock, so a concurrent run's committed rows are seen;
 * ON CONFLICT DO NOTHING as the last guard), and (3) adds the inserted count to the counter. Should
 * the unique index still skip a row (a number would be lost), the batch is rolled back and the
 * error thrown (the job retries); it cannot happen while every writer of the tenant's invoices
 * takes the counter lock first.
 */

/** Customers per batch transaction: the counter lock is held for one batch (a few tens of ms). */
export const BILLING_BATCH_SIZE = 1000;

/** Counts of a run, as billing_runs stores them. */
export interface BillingCounts {
  /** Invoices this run created (also those of an earlier attempt of the same run). */
  created: number;
  /** Billable customers whose invoice for the period was already there (another run, or voided). */
  existing: number;
  /** Active or suspended customers not billable: no package, a price of 0, service not started. */
  skipped: number;
  /** Active and suspended customers looked at (created + existing + skipped). */
  considered: number;
}

/** Options of runBilling. */
export interface RunBillingOptions {
  tenantId: number;
  /**
   * The shared database, where the tenants row (time zone, due days) is read when `knex` is a
   * cut-over tenant's routed knex (issue 15 item 4: its database keeps only a copy of that row
   * from the cutover). Default `knex`.
   */
  sharedKnex?: Knex;
  /** The day billed, 'YYYY-MM-DD' in the tenant's time zone (2000-01-01 .. 9999-10-31). */
  asOf: string;
  /** billing_runs.id: stored on the invoices; its counts are updated after every batch. */
  runId: number;
  /** created_at / updated_at of the new invoices (the job clock's now). */
  now: Date;
  /** Customers per batch (default BILLING_BATCH_SIZE). */
  batchSize?: number;
  /** Checked between batches: when it fired, `onAbort` is thrown. */
  signal?: AbortSignal;
  /** Called after each committed batch with the counts so far. */
  onBatch?: (counts: BillingCounts) => Promise<void> | void;
}

/** A batch whose INSERT skipped a numbered row (it would leave a gap); the batch was rolled back. */
export class BillingNumberingConflict extends Error {
  constructor(
    readonly numbered: number,
    readonly inserted: number,
  ) {
    super(
      `A billing batch numbered ${numbered} invoice(s) but inserted ${inserted}; rolled back to keep numbers gap-free.`,
    );
    this.name = 'BillingNumberingConflict';
  }
}

/** Thrown between batches when RunBillingOptions.signal fired. */
export class BillingAborted extends Error {
  constructor(readonly done: number) {
    super(`Billing stopped after ${done} customer(s); the retry continues (invoices already made count as created).`);
    this.name = 'BillingAborted';
  }
}

const BATCH = tenantStatement(
  'billing_cycle_batch',
  `WITH batch AS (
    SELECT c.id, c.billing_cycle, c.billing_day, c.package_id, (c.created_at AT TIME ZONE $6::text)::date AS start_day
    FROM customers c
    WHERE c.tenant_id = $1 AND c.id > $2::int AND c.status IN ('active', 'suspended')
    ORDER BY c.id
    LIMIT $3::int
  ), anchored AS (
    SELECT b.*, CASE WHEN b.billing_cycle = 'prepaid_rolling' THEN extract(day FROM b.start_day)::int
                     ELSE coalesce(b.billing_day::int, 1) END AS anchor_day
    FROM batch b
  ), dated AS (
    SELECT a.*, $5::int
        - CASE WHEN $4::date >= billing_anchor_date($5::int, a.anchor_day) THEN 0 ELSE 1 END
        - CASE WHEN a.billing_cycle = 'postpaid' THEN 1 ELSE 0 END AS k
    FROM anchored a
  ), cand AS (
    SELECT d.id AS customer_id, d.billing_cycle, d.start_day, pk.id AS package_id, pk.price, pk.name AS package_name,
           billing_anchor_date(d.k, d.anchor_day) AS period_start,
           billing_anchor_date(d.k + 1, d.anchor_day) - 1 AS period_end
    FROM dated d
    JOIN packages pk ON pk.id = d.package_id AND pk.tenant_id = $1
    WHERE pk.price > 0
  ), billable AS (
    SELECT x.* FROM cand x
    WHERE x.start_day <= CASE WHEN x.billing_cycle = 'postpaid' THEN x.period_end ELSE $4::date END
  ), checked AS (
    SELECT b.*, i.id AS invoice_id, i.billing_run_id AS invoice_run
    FROM billable b
    LEFT JOIN invoices i ON i.tenant_id = $1 AND i.customer_id = b.customer_id
      AND i.period_start = b.period_start AND i.type = 'subscription'
  ), fresh AS (
    SELECT f.*, row_number() OVER (ORDER BY f.customer_id) AS rn
    FROM checked f
    WHERE f.invoice_id IS NULL
  ), ins AS (
    INSERT INTO invoices (tenant_id, invoice_number, customer_id, package_id, amount, status, due_date,
      period_start, period_end, type, description, billing_run_id, created_at, updated_at)
    SELECT $1,
      'INV-' || CASE WHEN $9::bigint + n.rn < 1000000 THEN lpad(($9::bigint + n.rn)::text, 6, '0')
                     ELSE ($9::bigint + n.rn)::text END,
      n.customer_id, n.package_id, n.price, 'unpaid',
      CASE WHEN n.billing_cycle = 'postpaid' THEN n.period_end + 1 ELSE n.period_start END + $7::int,
      n.period_start, n.period_end, 'subscription',
      n.package_name || ', ' || to_char(n.period_start, 'YYYY-MM-DD') || ' to ' || to_char(n.period_end, 'YYYY-MM-DD'),
      $8::int, $10::timestamptz, $10::timestamptz
    FROM fresh n
    ORDER BY n.rn
    ON CONFLICT (tenant_id, customer_id, period_start) WHERE type = 'subscription' DO NOTHING
    RETURNING id
  )
  SELECT (SELECT max(id) FROM batch) AS last_id,
    (SELECT count(*) FROM batch)::int AS considered,
    (SELECT count(*) FROM checked)::int AS billable,
    (SELECT count(*) FROM checked WHERE invoice_id IS NOT NULL AND invoice_run = $8::int)::int AS mine,
    (SELECT count(*) FROM fresh)::int AS numbered,
    (SELECT count(*) FROM ins)::int AS inserted`,
);

interface BatchRow {
  last_id: number | null;
  considered: number;
  billable: number;
  mine: number;
  numbered: number;
  inserted: number;
}

/**
 * Locks the tenant's invoice counter row until the transaction ends (creating it at 0 if missing).
 * @returns the counter's current value (the last number handed out)
 */
export async function lockInvoiceCounter(trx: Knex.Transaction, tenantId: number): Promise<number> {
  const r = await trx.raw(
    `INSERT INTO tenant_counters (tenant_id, name, value) VALUES (?, 'invoice', 0)
     ON CONFLICT (tenant_id, name) DO UPDATE SET value = tenant_counters.value RETURNING value`,
    [tenantId],
  );
  return Number(r.rows[0].value);
}

/**
 * Active and suspended customers of a tenant: what a run looks at (the total of its progress).
 * @param knex the process knex or a transaction
 */
export async function customersToConsider(knex: Knex | Knex.Transaction, tenantId: number): Promise<number> {
  const { n } = (await new TenantScope(knex, tenantId)
    .table('customers')
    .whereIn('status', ['active', 'suspended'])
    .count<{ n: string }[]>({ n: '*' })
    .first())!;
  return Number(n);
}

/**
 * Bills one tenant as of one day, batch by batch (see the file comment). Idempotent: a rerun (or a
 * retry after a crash) creates only what is missing; invoices an earlier attempt of the same run
 * made count as created, others as existing.
 * @param knex the process knex, or a transaction (batches then run in savepoints)
 * @returns the counts
 * @throws BillingAborted when the signal fired between batches; BillingNumberingConflict (batch
 *   rolled back); Error when the tenant does not exist; database errors
 */
export async function runBilling(knex: Knex | Knex.Transaction, opts: RunBillingOptions): Promise<BillingCounts> {
  const tenant = await Tenant.query((opts.sharedKnex ?? knex) as Knex).findById(opts.tenantId);
  if (!tenant) throw new Error(`tenant ${opts.tenantId} does not exist`);
  const { timezone, invoice_due_days: dueDays } = settingsOf(tenant);
  const size = opts.batchSize ?? BILLING_BATCH_SIZE;
  const counts: BillingCounts = { created: 0, existing: 0, skipped: 0, considered: 0 };
  let after = 0;
  for (;;) {
    if (opts.signal?.aborted) throw new BillingAborted(counts.considered);
    const row = await knex.transaction(async (trx) => {
      const s = new TenantScope(trx, opts.tenantId);
      const v = await lockInvoiceCounter(trx, opts.tenantId);
      const [r] = await s.run<BatchRow>(BATCH, [
        after,
        size,
        opts.asOf,
        monthIndexOf(opts.asOf),
        timezone,
        dueDays,
        opts.runId,
        v,
        opts.now,
      ]);
      if (r.inserted !== r.numbered) throw new BillingNumberingConflict(r.numbered, r.inserted);
      if (r.inserted > 0) {
        await s.table('tenant_counters').where({ name: 'invoice' }).increment('value', r.inserted);
      }
      counts.created += r.inserted + r.mine;
      counts.existing += r.billable - r.numbered - r.mine;
      counts.skipped += r.considered - r.billable;
      counts.considered += r.considered;
      await s.table('billing_runs').where({ id: opts.runId }).update({
        created: counts.created,
        existing: counts.existing,
        skipped: counts.skipped,
        updated_at: opts.now,
      });
      return r;
    });
    if (row.last_id === null) break;
    after = row.last_id;
    await opts.onBatch?.({ ...counts });
    if (row.considered < size) break;
  }
  return counts;
}
