import type { Knex } from 'knex';
import type { JobLike } from './queues.js';

/**
 * Helpers shared by the platform scans (invoice-overdue, ticket-sla): jobs that work across all
 * tenants in batches, report progress and per-tenant counts to bull-board, and stop between
 * batches when their AbortSignal fires.
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
