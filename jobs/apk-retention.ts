import type { JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import { forEachTenantDatabase } from '../db/tenant-routing.js';
import { DEFAULT_JOB_OPTIONS, type JobLike, type JobSchedulerDef, type Queues } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import type { Storage } from '../lib/storage/index.js';
import type { Clock } from '../lib/clock.js';
import { enqueueScanRun, scanRunId, scanScheduler, tally, throwIfAborted } from './platform-scan.js';

/**
 * Job `apk-retention` (issue 12 item 9): every day it deletes the stored APK files beyond the
 * newest APK_RETENTION_COUNT successful builds per tenant and app type. The rows stay; a row whose
 * file went gets `file_deleted_at` (its download then answers 404).
 *
 * "Newest" is by `finished_at` (then id), counted over the successful builds only, whether or not
 * their file still exists. Each file is deleted from storage first and its row marked after, so a
 * run cut short leaves at most a row that the next run marks (deleting a missing file is no error),
 * never a file without a row. Platform job: it reads every tenant's builds (like invoice-overdue).
 *
 * The columns it needs of `apk_builds` (the build module's table, issue 12 items 5-7) are named in
 * APK_BUILD_COLUMNS and read only by retentionCandidates(), so a rename is one place.
 */
export const QUEUE = 'apk-retention' as const;

/** Successful builds kept per tenant and app type (issue 12 item 9). */
export const APK_RETENTION_COUNT = 10;

/** Rows handled per query: bounded memory, visible progress. */
export const RETENTION_BATCH_SIZE = 200;

/**
 * The columns of `apk_builds` this job reads and writes (docs/decisions.md, issue 12 items 8, 9):
 * `id`, `tenant_id`, `app_type`, `status` (`successful` counts), `file_key` (the APK file's key
 * in the storage driver, null when none was stored), `finished_at` (timestamptz), `file_deleted_at`
 * (timestamptz, null while the file is kept).
 */
export const APK_BUILD_COLUMNS = {
  table: 'apk_builds',
  storageKey: 'file_key',
  finishedAt: 'finished_at',
  fileDeletedAt: 'file_deleted_at',
} as const;

/** Job data: ids only. tenant_id limits a run to one tenant; keep overrides APK_RETENTION_COUNT (1..1000). */
export interface ApkRetentionData {
  tenant_id?: number | null;
  keep?: number | null;
}

/** What the processor returns (bull-board shows it). */
export interface ApkRetentionResult {
  /** files deleted (rows marked) by this run */
  deleted: number;
  /** deleted files per tenant id */
  tenants: Record<string, number>;
  /** files whose deletion failed (left for the next run) */
  failed: number;
  /** the count kept per tenant and app type */
  keep: number;
}

/** Default options: a daily scan retried a few times, failed runs kept a week. */
export const defaultOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 3 };

/** Daily at 03:30 UTC (upsertJobScheduler when a worker starts). */
export const scheduler: JobSchedulerDef = scanScheduler(
  QUEUE,
  'apk-retention-daily',
  { pattern: '30 3 * * *', tz: 'UTC' },
  defaultOptions,
);

/** Fixed id of a manual run: one per tenant (or "all") per UTC minute. */
export function jobId(data: ApkRetentionData = {}, at: Date = new Date()): string {
  return scanRunId(QUEUE, data, at);
}

/**
 * Enqueues a manual run (the scheduler enqueues the daily one).
 * @throws the queue's error when Redis is unavailable
 */
export function enqueue(queues: Queues, data: ApkRetentionData = {}, opts: JobsOptions = {}): Promise<string> {
  return enqueueScanRun(queues, QUEUE, data, defaultOptions, jobId(data), opts);
}

/** A build whose file is beyond the retention count and still stored. */
export interface RetentionCandidate {
  id: number;
  tenant_id: number;
  app_type: string;
  storage_key: string;
}

/**
 * The builds whose files go: successful builds ranked per (tenant, app type) by finished_at desc,
 * id desc; rank > keep, file still there. One page in id order after `afterId`.
 * @param tenantId one tenant, or null for all
 */
export async function retentionCandidates(
  knex: Knex,
  keep: number,
  tenantId: number | null,
  afterId: number,
  limit: number,
): Promise<RetentionCandidate[]> {
  const c = APK_BUILD_COLUMNS;
  const { rows } = await knex.raw(
    `SELECT id, tenant_id, app_type, storage_key FROM (
       SELECT b.id, b.tenant_id, b.app_type, b.?? AS storage_key, b.?? AS file_deleted_at,
              row_number() OVER (PARTITION BY b.tenant_id, b.app_type ORDER BY b.?? DESC NULLS LAST, b.id DESC) AS rank
         FROM ?? b
        WHERE b.status = 'successful' AND (?::int IS NULL OR b.tenant_id = ?::int)
     ) r
     WHERE r.rank > ? AND r.file_deleted_at IS NULL AND r.storage_key IS NOT NULL AND r.id > ?
     ORDER BY r.id LIMIT ?`,
    [c.storageKey, c.fileDeletedAt, c.finishedAt, c.table, tenantId, tenantId, keep, afterId, limit],
  );
  return rows.map((r: RetentionCandidate) => ({ ...r, id: Number(r.id) }));
}

/** Marks a build's file as deleted (once). */
async function markDeleted(knex: Knex, id: number, at: Date): Promise<void> {
  const c = APK_BUILD_COLUMNS;
  await knex(c.table)
    .where({ id })
    .whereNull(c.fileDeletedAt)
    .update({ [c.fileDeletedAt]: at });
}

/**
 * BullMQ processor (see the file comment).
 * @param signal checked between batches (ScanAborted: the retry does the rest)
 * @throws Error after the run when some files could not be deleted (the job retries; marked rows stay marked)
 */
export async function process(
  job: JobLike<ApkRetentionData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<ApkRetentionResult> {
  const deps = jobDeps();
  if (!deps.storage) throw new Error('apk-retention needs the storage driver (JobDeps.storage)');
  return applyRetention(deps.knex, deps.appKey, deps.storage, jobClock(), job, signal);
}

async function applyRetention(
  shared: Knex,
  appKey: Buffer | undefined,
  storage: Storage,
  clock: Clock,
  job: JobLike<ApkRetentionData>,
  signal?: AbortSignal,
): Promise<ApkRetentionResult> {
  const tenantId = job.data?.tenant_id ?? null;
  const keepIn = job.data?.keep;
  const keep = Number.isInteger(keepIn) && keepIn! >= 1 && keepIn! <= 1000 ? keepIn! : APK_RETENTION_COUNT;
  const tenants: Record<string, number> = {};
  let deleted = 0;
  let failed = 0;
  // the shared database without the cut-over tenants, then each cut-over tenant's database (issue
  // 15 item 4): a cut-over tenant's builds are ranked where they are written
  await forEachTenantDatabase(
    shared,
    appKey,
    async (target) => {
      const knex = target.knex;
      let after = 0;
      for (;;) {
        throwIfAborted(signal, deleted);
        const page = await retentionCandidates(knex, keep, tenantId, after, RETENTION_BATCH_SIZE);
        const batch = page.filter((b) => !target.excludeTenantIds.includes(Number(b.tenant_id)));
        if (page.length) after = page[page.length - 1].id;
        const last = page.length;
        for (const b of batch) {
          try {
            await storage.delete(b.storage_key);
            await markDeleted(knex, b.id, clock.now());
            tally(tenants, b.tenant_id);
            deleted++;
          } catch (e) {
            failed++;
            await job.log(
              `build ${b.id} (tenant ${b.tenant_id}, ${b.app_type}): file not deleted: ${(e as Error).name}`,
            );
          }
        }
        if (last < RETENTION_BATCH_SIZE) break;
      }
    },
    (id) => {
      failed += 1;
      void job.log(`tenant ${id}'s database could not be scanned`);
    },
    tenantId,
  );
  for (const [id, n] of Object.entries(tenants)) await job.log(`tenant ${id}: ${n} APK file(s) deleted`);
  await job.log(`done: kept the newest ${keep} successful builds per tenant and app type; ${deleted} file(s) deleted`);
  await job.updateProgress(100);
  if (failed) throw new Error(`${failed} APK file(s) could not be deleted; the next run retries them`);
  return { deleted, tenants, failed, keep };
}
