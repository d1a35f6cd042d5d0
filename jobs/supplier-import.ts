import type { Job } from 'bullmq';
import type { Knex } from 'knex';
import { tenantScopeOf } from '../db/tenant-routing.js';
import type { Storage } from '../lib/storage/index.js';
import { systemClock, type Clock } from '../lib/clock.js';
import { inheritedEnv } from '../lib/config.js';
import type { ApplyJobData, ParseJobData } from './supplier-import/runs.js';

/**
 * The `supplier-import` queue (issue 16 item 6): job `parse` reads an uploaded price list and
 * stores a preview, job `apply` writes the selected rows to the catalogue. Both run in the
 * sandboxed child workers/sandboxed/supplier-import.ts (BullMQ sandboxed processor: a child
 * process with a 256 MB heap; `parse` is limited to 60 s). Jobs are added with attempts 1: a
 * refused file, a child killed by its heap cap or its time limit, fail the job without retry, and
 * the failure hook below records the reason on the run (422 errors.file for a preview).
 */
export const QUEUE = 'supplier-import' as const;
/** Job names. */
export const PARSE_JOB = 'parse';
export const APPLY_JOB = 'apply';

/** Heap of the sandboxed child, in MB (SUPPLIER_IMPORT_HEAP_MB overrides it; tests). */
export const PARSE_HEAP_MB = 256;
/** Longest `parse`, in ms (SUPPLIER_IMPORT_TIME_LIMIT_MS overrides it; tests). */
export const PARSE_TIME_LIMIT_MS = 60_000;
/** Exit code of the child when its time limit struck (the watchdog thread uses SIGKILL as backstop). */
export const EXIT_TIME_LIMIT = 124;

/** Heap cap of the child, in MB (env SUPPLIER_IMPORT_HEAP_MB, else 256). */
export function parseHeapMb(env: NodeJS.ProcessEnv = inheritedEnv()): number {
  const n = Number(env.SUPPLIER_IMPORT_HEAP_MB);
  return Number.isInteger(n) && n >= 16 ? n : PARSE_HEAP_MB;
}

/** Node flags of the sandboxed child (BullMQ fork options): the old-space cap of {@link parseHeapMb}. */
export function parseExecArgv(env: NodeJS.ProcessEnv = inheritedEnv()): string[] {
  return [`--max-old-space-size=${parseHeapMb(env)}`];
}

/** Time limit of `parse`, in ms (env SUPPLIER_IMPORT_TIME_LIMIT_MS, else 60000). */
export function parseTimeLimitMs(env: NodeJS.ProcessEnv = inheritedEnv()): number {
  const n = Number(env.SUPPLIER_IMPORT_TIME_LIMIT_MS);
  return Number.isInteger(n) && n >= 100 ? n : PARSE_TIME_LIMIT_MS;
}

/**
 * The reason recorded for a failed job: an ImportFileError's own message (the file's fault), the
 * child's death mapped to words (heap cap: SIGABRT / exit 134 / "heap"; time limit: exit 124 or
 * SIGKILL), anything else "the file could not be read" with no internal detail.
 * @param err the error the worker reported
 */
export function failureReason(err: Pick<Error, 'name' | 'message'>): string {
  const msg = err.message ?? '';
  if (err.name === 'ImportFileError') return msg;
  if (/heap|SIGABRT|exit code: 134\b|out of memory/i.test(msg)) {
    return `reading the file needs more than the ${parseHeapMb()} MB of memory allowed`;
  }
  if (new RegExp(`exit code: ${EXIT_TIME_LIMIT}\\b|SIGKILL|time limit`).test(msg)) {
    return `reading the file took longer than ${Math.round(parseTimeLimitMs() / 1000)} s`;
  }
  return 'the file could not be read';
}

/**
 * The queue's failure hook (workers/registry.ts onFailed): marks the run failed with
 * failureReason(err) unless it already finished, and removes a preview's upload.
 * @param deps.knex the worker's knex; deps.storage its storage driver
 */
export async function recordFailure(
  deps: { knex: Knex; appKey?: Buffer; storage?: Storage; clock?: Clock },
  job: Pick<Job<Partial<ParseJobData & ApplyJobData>>, 'name' | 'data'>,
  err: Pick<Error, 'name' | 'message'>,
): Promise<void> {
  const { tenantId, previewId, importId } = job.data ?? {};
  if (!tenantId) return;
  const table = job.name === PARSE_JOB ? 'supplier_import_previews' : 'supplier_imports';
  const id = job.name === PARSE_JOB ? previewId : importId;
  if (!id) return;
  const reason = job.name === PARSE_JOB ? failureReason(err) : 'the import could not be applied';
  // the tenant's database after its cutover (issue 15 item 4)
  const knex = (await tenantScopeOf(deps.knex, tenantId, deps.appKey, 'job')).knex as Knex;
  const open = () => knex(table).where({ tenant_id: tenantId, id }).whereIn('status', ['queued', 'running']);
  // the upload (preview) or the rows' file (import) goes first: once the run shows `failed`,
  // nothing of it is left
  const fileColumn = job.name === PARSE_JOB ? 'file_key' : 'items_key';
  if (deps.storage) {
    const row = await open().first<Record<string, string | null> | undefined>(fileColumn);
    if (row?.[fileColumn]) await deps.storage.delete(row[fileColumn]).catch(() => undefined);
  }
  await open().update({
    status: 'failed',
    error: reason,
    finished_at: (deps.clock ?? systemClock).now(),
    [fileColumn]: null,
  });
}
