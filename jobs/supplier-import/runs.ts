import { performance } from 'node:perf_hooks';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Knex } from 'knex';
import { tenantScopeOf } from '../../db/tenant-routing.js';
import { putJson, readWhole, type Storage } from '../../lib/storage/index.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import type { JobLike } from '../queues.js';
import { parseFile } from './parse-file.js';
import { applyRows, countActions, decide, matchItems } from './catalogue.js';
import type { ImportKind, ImportRow } from './rows.js';
import { kindOfFile } from './readers.js';

/**
 * The two jobs of the `supplier-import` queue (issue 16 item 6), as functions of their
 * dependencies: the sandboxed child (workers/sandboxed/supplier-import.ts) calls them with its own
 * knex and storage driver; tests call them with a fake Job. Both are idempotent: a finished run is
 * not done again.
 */

/** Data of a `parse` job: ids only. */
export interface ParseJobData {
  tenantId: number;
  supplierId: number;
  previewId: number;
}

/** Data of an `apply` job: ids only (the rows wait in supplier_imports.items). */
export interface ApplyJobData {
  tenantId: number;
  supplierId: number;
  importId: number;
}

/** What the runs use. */
export interface RunDeps {
  /** The shared database; a cut-over tenant's runs use its database (issue 15 item 4). */
  knex: Knex;
  /** APP_KEY, to reach a cut-over tenant's database. */
  appKey?: Buffer;
  /** Where the upload is stored (the `parse` job reads and then removes it). */
  storage?: Storage;
  /** finished_at (default systemClock). */
  clock?: Clock;
  /**
   * Called once the upload is copied and its type known, before it is read (the sandboxed child
   * loads the PDF reader there and starts its time limit).
   */
  beforeRead?: (kind: ImportKind) => Promise<void>;
}

/** Largest stored rows file, in bytes (50,000 rows of the longest fields stay well below). */
export const ROWS_MAX_BYTES = 512 * 1024 * 1024;

/**
 * The storage key of a finished preview's rows (JSON array of DecidedRow), fixed per preview.
 * @param tenantId the preview's tenant
 * @param previewId supplier_import_previews.id
 */
export const previewRowsKey = (tenantId: number, previewId: number): string =>
  `tenants/${tenantId}/supplier-import-previews/${previewId}-rows.json`;

/** Counts of a preview. */
export type PreviewCounts = ReturnType<typeof countActions>;

/**
 * `parse`: reads the stored upload (copied to a temporary file), matches its rows in one query,
 * decides create/update/skip, stores the rows as a file of the storage driver (previewRowsKey) and
 * the counts on the preview, and removes the upload.
 * Progress: `{rows_read}` every 1,000 rows; job log lines at the start, after reading and at the end.
 * @returns the counts (null when the preview is gone or was already finished)
 * @throws ImportFileError (the file is refused; the worker's failure hook records the reason),
 *   storage or database errors
 */
export async function runParse(job: JobLike<ParseJobData>, deps: RunDeps): Promise<PreviewCounts | null> {
  const { storage } = deps;
  const { tenantId, supplierId, previewId } = job.data;
  const knex = (await tenantScopeOf(deps.knex, tenantId, deps.appKey, 'job')).knex as Knex;
  const preview = await knex('supplier_import_previews')
    .where({ tenant_id: tenantId, id: previewId })
    .first<{ status: string; file_key: string | null } | undefined>('status', 'file_key');
  if (!preview || preview.status === 'completed' || preview.status === 'failed') return null;
  if (!preview.file_key || !storage) throw new Error(`preview ${previewId} has no stored file`);
  await knex('supplier_import_previews').where({ id: previewId }).update({ status: 'running' });
  const dir = await mkdtemp(path.join(tmpdir(), 'supplier-import-'));
  let t = performance.now();
  /** ms since the last lap (the job log shows where a preview's time goes) */
  const lap = () => {
    const ms = Math.round(performance.now() - t);
    t = performance.now();
    return ms;
  };
  try {
    const file = path.join(dir, 'upload');
    const got = await storage.get(preview.file_key);
    await pipeline(got.stream, createWriteStream(file));
    await job.log(`reading ${got.size} bytes (copied in ${lap()} ms)`);
    await deps.beforeRead?.(await kindOfFile(file).catch(() => 'text' as const));
    const parsed = await parseFile(file, (n) => void job.updateProgress({ rows_read: n }).catch(() => undefined));
    await job.log(`read ${parsed.rows.length} rows in ${lap()} ms; matching`);
    const matches = await matchItems(knex, tenantId, supplierId, parsed.rows);
    const rows = parsed.rows.map((r, i) => decide(r, parsed.duplicates.has(r.row), matches.get(i)));
    const counts = countActions(rows);
    await job.log(`matched in ${lap()} ms; storing`);
    // the rows as one file of the storage driver (a fixed key: a rerun replaces it), then the row
    const rowsKey = previewRowsKey(tenantId, previewId);
    await putJson(storage, rowsKey, rows, ROWS_MAX_BYTES);
    await knex('supplier_import_previews')
      .where({ id: previewId })
      .update({
        status: 'completed',
        counts: JSON.stringify(counts),
        rows_key: rowsKey,
        file_key: null,
        finished_at: (deps.clock ?? systemClock).now(),
      });
    await storage.delete(preview.file_key).catch(() => undefined);
    await job.updateProgress({ rows_read: rows.length, done: true });
    await job.log(
      `done: ${counts.create} create, ${counts.update} update, ${counts.skip} skip (stored in ${lap()} ms)`,
    );
    await job.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
    return counts;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An import's rows from its file in the storage driver. @throws Error without a storage driver */
async function readItems(deps: RunDeps, key: string): Promise<ImportRow[]> {
  if (!deps.storage) throw new Error('no storage driver to read the import from');
  return JSON.parse((await readWhole(deps.storage, key)).toString('utf8')) as ImportRow[];
}

/**
 * `apply`: applies the stored rows in one set-based transaction (jobs/supplier-import/catalogue.ts
 * applyRows) that also stores the result on the import (status completed).
 * @returns {created, updated, skipped} (the stored result when the import already finished; null when it is gone)
 */
export async function runApply(
  job: JobLike<ApplyJobData>,
  deps: RunDeps,
): Promise<{ created: number; updated: number; skipped: number } | null> {
  const { tenantId, supplierId, importId } = job.data;
  const knex = (await tenantScopeOf(deps.knex, tenantId, deps.appKey, 'job')).knex as Knex;
  const run = await knex('supplier_imports').where({ tenant_id: tenantId, id: importId }).first<
    | {
        status: string;
        items: ImportRow[] | null;
        items_key: string | null;
        result: { created: number; updated: number; skipped: number } | null;
      }
    | undefined
  >('status', 'items', 'items_key', 'result');
  if (!run || run.status === 'failed') return null;
  if (run.status === 'completed') return run.result;
  await knex('supplier_imports').where({ id: importId }).update({ status: 'running' });
  const started = performance.now();
  // the rows' file (20261209000000), or the jsonb of an import started before it
  const items = run.items_key ? await readItems(deps, run.items_key) : (run.items ?? []);
  await job.log(`applying ${items.length} rows`);
  // the result is stored in the transaction that writes the items: both or neither
  const result = await applyRows(knex, tenantId, supplierId, items, async (trx, r) => {
    await trx('supplier_imports')
      .where({ id: importId })
      .update({ status: 'completed', result: JSON.stringify(r), finished_at: (deps.clock ?? systemClock).now() });
  });
  // applied: the rows are not needed again (a rerun answers the stored result); an expired run's
  // purge removes a file left by a crash right here
  if (run.items_key) await deps.storage?.delete(run.items_key).catch(() => undefined);
  await job.log(
    `done: ${result.created} created, ${result.updated} updated, ${result.skipped} skipped (in ${Math.round(performance.now() - started)} ms)`,
  );
  return result;
}
