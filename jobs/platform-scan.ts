import type { JobsOptions, Queue } from 'bullmq';
import type { Knex } from 'knex';
import { forEachTenantDatabase } from '../db/tenant-routing.js';
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

/**
 * Makes sure the job `id` of `queue` runs (the sweeps of rows left queued): added by `add` when the
 * queue has no such job (or its state is unknown), retried with its attempts reset when it failed
 * or completed, left as it is while it waits, is delayed or runs.
 * @returns what was done: `enqueued`, `retried` or `queued` (already under way)
 * @throws the queue's error when Redis is unavailable
 */
export async function enqueueOrRetry(
  queue: Queue,
  id: string,
  add: () => Promise<unknown>,
): Promise<'enqueued' | 'retried' | 'queued'> {
  const existing = await queue.getJob(id);
  const state = existing ? await existing.getState() : 'unknown';
  if (!existing || state === 'unknown') {
    await add();
    return 'enqueued';
  }
  if (state === 'failed' || state === 'completed') {
    await existing.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
    return 'retried';
  }
  return 'queued';
}

/** What {@link sweepQueuedRows} returns (bull-board shows it as the sweep job's result). */
export interface SweepResult {
  kind: 'sweep';
  /** Stale queued rows looked at. */
  stale: number;
  /** Jobs added again (missing from Redis). */
  enqueued: number;
  /** Finished jobs (completed or failed) run again with their attempts reset. */
  retried: number;
  /** Jobs still in the queue (waiting, delayed, active): left alone. */
  queued: number;
  /** Per tenant id: stale rows found. */
  tenants: Record<string, number>;
}

/** What {@link sweepQueuedRows} needs to know of one outbox queue. */
export interface SweepSpec {
  /** The send queue. */
  queue: Queue;
  /**
   * The stale `queued` rows of one database, cross-tenant on purpose (a platform job): a fresh query
   * per call. Called with the shared database and with each cut-over tenant's (issue 15 item 4).
   */
  stale: (knex: Knex) => Knex.QueryBuilder;
  /** The shared database. */
  knex: Knex;
  /** APP_KEY, to reach the cut-over tenants' databases. */
  appKey?: Buffer;
  /** The row's fixed send job id. */
  jobIdOf: (rowId: number) => string;
  /** Adds the row's send job (with its fixed id). */
  add: (row: { id: number; tenant_id: number }) => Promise<unknown>;
  /** What a row is, for the log lines ("e-mail(s)", "chat message(s)"). */
  noun: string;
}

/**
 * The minute sweep of the queues that send one outbox row per job (email-send, wabot-send): a row
 * stays `queued` when Redis did not take its job (the enqueue is after the commit) or lost it.
 * For every stale row, in id order and batches of SCAN_BATCH_SIZE: a missing job is added again,
 * a finished one is run again, one still in the queue is left alone. Sending twice is prevented by
 * the send job itself (it claims the row). Logs and progress go to the sweep job.
 * @param signal stops the sweep between batches (AbortError from throwIfAborted)
 * @returns the counts (ids only; no message content)
 */
export async function sweepQueuedRows(
  job: JobLike<unknown>,
  spec: SweepSpec,
  signal?: AbortSignal,
): Promise<SweepResult> {
  const result: SweepResult = { kind: 'sweep', stale: 0, enqueued: 0, retried: 0, queued: 0, tenants: {} };
  // the shared database without the cut-over tenants, then each cut-over tenant's (issue 15 item 4)
  const each = (fn: (stale: () => Knex.QueryBuilder) => Promise<void>) =>
    forEachTenantDatabase(
      spec.knex,
      spec.appKey,
      (t) =>
        fn(() =>
          t.excludeTenantIds.length
            ? spec.stale(t.knex).whereNotIn('tenant_id', t.excludeTenantIds)
            : spec.stale(t.knex),
        ),
      (tenantId) => void job.log(`tenant ${tenantId}'s database could not be scanned`),
    );
  let total = 0;
  await each(async (stale) => {
    total += Number((await stale().count<{ n: string }[]>({ n: '*' }).first())?.n ?? 0);
  });
  await job.log(`${total} stale queued ${spec.noun}`);
  await each(async (stale) => {
    let lastId = 0;
    for (;;) {
      signal?.throwIfAborted();
      const rows: { id: string | number; tenant_id: number }[] = await stale()
        .where('id', '>', lastId)
        .orderBy('id')
        .limit(SCAN_BATCH_SIZE)
        .select('id', 'tenant_id');
      if (!rows.length) break;
      for (const r of rows) {
        const id = Number(r.id);
        result[await enqueueOrRetry(spec.queue, spec.jobIdOf(id), () => spec.add({ id, tenant_id: r.tenant_id }))] += 1;
        tally(result.tenants, r.tenant_id);
      }
      result.stale += rows.length;
      lastId = Number(rows[rows.length - 1].id);
      await reportProgress(job, result.stale, total);
      if (rows.length < SCAN_BATCH_SIZE) break;
    }
  });
  await job.log(
    `done: ${result.stale} stale queued ${spec.noun}, ${result.enqueued} job(s) added again, ` +
      `${result.retried} finished job(s) run again, ${result.queued} still in the queue`,
  );
  await job.updateProgress(100);
  return result;
}
