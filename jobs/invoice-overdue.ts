import type { JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import { DEFAULT_JOB_OPTIONS, safeJobId, type JobLike, type JobSchedulerDef, type Queues } from './queues.js';
import { jobDeps } from './deps.js';
import { SCAN_BATCH_SIZE, reportProgress, tally, tenantSlugs, throwIfAborted } from './platform-scan.js';

/**
 * Job `invoice-overdue` (issue 2 §9): unpaid invoices whose due_date has passed become overdue.
 *
 * "Passed" is decided in UTC: an invoice is overdue when `due_date < today`, where today is the
 * database's current date in UTC. due_date is a calendar date without a zone and tenants carry no
 * time zone yet, so the platform uses one clock for everyone: an invoice due on D turns overdue at
 * the first run after 00:00 UTC of D+1 (the hourly scheduler runs at minute 5). A tenant east of
 * UTC sees it a few hours into its D+1, never before its due date has ended in UTC.
 *
 * Platform job: it scans every tenant's invoices. This (and ticket-sla) is the one allowed place for
 * a cross-tenant query (DESIGN.md §5); it touches no row through a tenant's request and reports its
 * counts per tenant.
 */
export const QUEUE = 'invoice-overdue' as const;

/** Job data: ids only (DESIGN.md §3). tenant_id limits a run to one tenant; absent = all tenants. */
export interface InvoiceOverdueData { tenant_id?: number | null }

/** What the processor returns (shown in bull-board as the job's return value). */
export interface InvoiceOverdueResult {
  /** Invoices changed from unpaid to overdue by this run. */
  changed: number;
  /** The UTC date the run compared due_date with (YYYY-MM-DD). */
  as_of: string;
  /** Changed invoices per tenant id. */
  tenants: Record<string, number>;
  /** UPDATE statements run. */
  batches: number;
}

/** Default options of this job: a scan retried a few times, failed runs kept a week, completed trimmed. */
export const defaultOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 3 };

/**
 * Hourly at minute 5 (UTC), registered by the worker with upsertJobScheduler, plus one catch-up run
 * as soon as a worker starts (`immediately`: BullMQ does not keep it, so later runs follow the
 * pattern): invoices that fell due while no worker ran are marked at once, not up to an hour later,
 * and bull-board shows a run right after `npm start`. The scan is idempotent, so the extra run
 * when several workers start is harmless.
 */
export const scheduler: JobSchedulerDef = {
  id: 'invoice-overdue-hourly',
  repeat: { pattern: '5 * * * *', tz: 'UTC', immediately: true },
  template: { name: QUEUE, data: {}, opts: { attempts: defaultOptions.attempts, backoff: defaultOptions.backoff, removeOnComplete: defaultOptions.removeOnComplete, removeOnFail: defaultOptions.removeOnFail } },
};

/**
 * Fixed id of a manual run: one per tenant (or "all") per UTC minute, so repeated clicks or CLI
 * calls within a minute enqueue one job.
 * @param at the enqueue time (default now)
 */
export function jobId(data: InvoiceOverdueData = {}, at: Date = new Date()): string {
  const minute = at.toISOString().slice(0, 16).replace(/[-T:]/g, '');
  return safeJobId(QUEUE, data.tenant_id ? `t${data.tenant_id}` : 'all', minute);
}

/**
 * Enqueues a manual run (the scheduler enqueues the regular ones).
 * @returns the job id (an existing job's id when deduplicated)
 * @throws the queue's error when Redis is unavailable (the API maps it to 503 QUEUE_UNAVAILABLE)
 */
export async function enqueue(queues: Queues, data: InvoiceOverdueData = {}, opts: JobsOptions = {}): Promise<string> {
  const job = await queues.get(QUEUE).add(QUEUE, data, { ...defaultOptions, ...opts, jobId: opts.jobId ?? jobId(data) });
  return job.id!;
}

/**
 * BullMQ processor: marks overdue invoices in batches of 500 (`UPDATE ... WHERE id IN (SELECT ...
 * FOR UPDATE SKIP LOCKED LIMIT 500)`), so a payment being written concurrently is skipped, not
 * waited for, and picked up by the next run. Idempotent: a second run changes nothing.
 * @param signal checked between batches; when aborted, throws ScanAborted (the job retries)
 * @returns the summary {changed, as_of, tenants, batches}
 */
export async function process(job: JobLike<InvoiceOverdueData>, _token?: string, signal?: AbortSignal): Promise<InvoiceOverdueResult> {
  return markOverdue(jobDeps().knex, job, signal);
}

async function markOverdue(knex: Knex, job: JobLike<InvoiceOverdueData>, signal?: AbortSignal): Promise<InvoiceOverdueResult> {
  const tenantId = job.data?.tenant_id ?? null;
  const { rows: [{ today }] } = await knex.raw(`SELECT to_char((now() AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS today`);
  // Cross-tenant on purpose (platform job, see the file comment).
  const { rows: [{ total }] } = await knex.raw(
    `SELECT count(*)::int AS total FROM invoices WHERE status = 'unpaid' AND due_date < ?::date AND (?::int IS NULL OR tenant_id = ?::int)`,
    [today, tenantId, tenantId],
  );
  await job.log(`as of ${today} (UTC): ${total} unpaid invoice(s) past due${tenantId ? ` in tenant ${tenantId}` : ''}`);
  const perTenant: Record<string, number> = {};
  let changed = 0;
  let batches = 0;
  for (;;) {
    throwIfAborted(signal, changed);
    const { rows } = await knex.raw(
      `UPDATE invoices AS i SET status = 'overdue', updated_at = now()
       WHERE i.status = 'unpaid' AND i.id IN (
         SELECT id FROM invoices
         WHERE status = 'unpaid' AND due_date < ?::date AND (?::int IS NULL OR tenant_id = ?::int)
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING i.id, i.tenant_id`,
      [today, tenantId, tenantId, SCAN_BATCH_SIZE],
    );
    batches += 1;
    for (const r of rows as { tenant_id: number }[]) tally(perTenant, r.tenant_id);
    changed += rows.length;
    await reportProgress(job, changed, total);
    if (rows.length < SCAN_BATCH_SIZE) break;
  }
  const slugs = await tenantSlugs(knex, Object.keys(perTenant).map(Number));
  for (const [id, n] of Object.entries(perTenant)) {
    await job.log(`tenant ${id} (${slugs.get(Number(id)) ?? '?'}): ${n} invoice(s) marked overdue`);
  }
  await job.log(`done: ${changed} invoice(s) marked overdue in ${batches} batch(es)`);
  await job.updateProgress(100);
  return { changed, as_of: today, tenants: perTenant, batches };
}
