import type { JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import { safeJobId, type JobLike, type JobSchedulerDef, type QueueName, type Queues } from './queues.js';

/**
 * Helpers shared by the platform scans (invoice-overdue, ticket-sla, event-dispatch): jobs that
 * work across all tenants in batches, run on a scheduler and by hand (one manual run per tenant or
 * "all" per minute), report progress and per-tenant counts to bull-board, and stop between batches
 * when their AbortSignal fires.
 */

/** Rows changed per UPDATE statement: short locks, bounded memory, visible progress. */
export const SCAN_BATCH_SIZE = 500;

/** Thrown between batches when the processor's AbortSignal fired (worker shutdown or cancelJob). */
export class ScanAborted extends Error {
  constructor(readonly done: number) {
    super(`Cancelled after ${done} rows; the remaining rows are picked up by the retry or the next run.`);
    this.name = 'ScanAborted';
  }
}

/**
 * Throws ScanAborted when the signal fired. The job then fails and BullMQ retries it (attempts
 * with backoff); the scan is idempotent, so the retry only does what is left.
 * @param done rows changed so far (for the message)
 */
export function throwIfAborted(signal: AbortSignal | undefined, done: number): void {
  if (signal?.aborted) throw new ScanAborted(done);
}

/**
 * Reports progress as a whole percentage, capped at 99 until the scan ends (the total counted at
 * the start may grow while the scan runs).
 * @param done rows handled so far; total rows counted at the start
 */
export async function reportProgress(job: JobLike<unknown>, done: number, total: number): Promise<void> {
  const pct = total <= 0 ? 99 : Math.min(99, Math.floor((done / total) * 100));
  await job.updateProgress(pct);
}

/**
 * Slugs of the given tenants, for log lines (a platform job: reads across tenants by design).
 * @returns tenant id -> slug
 */
export async function tenantSlugs(knex: Knex, ids: Iterable<number>): Promise<Map<number, string>> {
  const list = [...new Set(ids)];
  if (!list.length) return new Map();
  const rows: { id: number; slug: string }[] = await knex('tenants').whereIn('id', list).select('id', 'slug');
  return new Map(rows.map((r) => [r.id, r.slug]));
}

/** Adds `n` to the counter of `key` in a plain-object tally. */
export function tally(counts: Record<string, number>, key: number | string, n = 1): void {
  counts[String(key)] = (counts[String(key)] ?? 0) + n;
}

/** What a scan's manual runs carry: one tenant, or all when absent. */
export interface ScanRunData {
  tenant_id?: number | null;
}

/**
 * A scan's scheduler: jobs named after the queue, empty data, the scan's attempts, backoff and
 * retention (upsertJobScheduler takes no jobId or delay in its template).
 * @param repeat cron `pattern` (with tz) or `every` ms
 */
export function scanScheduler(
  queue: string,
  id: string,
  repeat: JobSchedulerDef['repeat'],
  defaults: JobsOptions,
): JobSchedulerDef {
  const { attempts, backoff, removeOnComplete, removeOnFail } = defaults;
  const opts = Object.fromEntries(
    Object.entries({ attempts, backoff, removeOnComplete, removeOnFail }).filter(([, v]) => v !== undefined),
  );
  return { id, repeat, template: { name: queue, data: {}, opts } };
}

/**
 * Fixed id of a manual scan run: `<queue>-t<tenant id>|all-<YYYYMMDDHHmm>`, one per tenant (or
 * "all") per UTC minute, so repeated clicks or CLI calls within a minute enqueue one job.
 * @param at the enqueue time (default now)
 */
export function scanRunId(queue: string, data: ScanRunData, at: Date = new Date()): string {
  const minute = at.toISOString().slice(0, 16).replace(/[-T:]/g, '');
  return safeJobId(queue, data.tenant_id ? `t${data.tenant_id}` : 'all', minute);
}

/**
 * Enqueues a manual scan run (the scheduler enqueues the regular ones) with the scan's defaults.
 * @param jobId the run's id unless `opts.jobId` is given
 * @returns the job id (an existing job's id when deduplicated)
 * @throws the queue's error when Redis is unavailable (the API maps it to 503 QUEUE_UNAVAILABLE)
 */
export async function enqueueScanRun<D extends object>(
  queues: Queues,
  queue: QueueName,
  data: D,
  defaults: JobsOptions,
  jobId: string,
  opts: JobsOptions = {},
): Promise<string> {
  const job = await queues.get(queue).add(queue, data, { ...defaults, ...opts, jobId: opts.jobId ?? jobId });
  return job.id!;
}
