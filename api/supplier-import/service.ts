import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Queue } from 'bullmq';
import type { TenantScope } from '../../db/tenant-scope.js';
import { NotFound, ValidationFailed, type FieldErrors } from '../errors.js';
import { SINGLE_LINE_PATTERN } from '../http/validation.js';
import { putJson, type Storage } from '../../lib/storage/index.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { addOrUnavailable, safeJobId } from '../../jobs/queues.js';
import { APPLY_JOB, PARSE_JOB } from '../../jobs/supplier-import.js';
import type { ApplyJobData, ParseJobData } from '../../jobs/supplier-import/runs.js';
import { detectKind, FIELD_MAX, ImportFileError, MAX_PRICE, type ImportRow } from '../../jobs/supplier-import/rows.js';

/**
 * The supplier price-list import (issue 16 item 6): stores the upload, queues `parse` or `apply`
 * on `supplier-import`, waits up to 20 s for it and answers the finished run (200) or its ids to
 * poll (202). Runs are kept 24 hours.
 */

/** Largest upload, in bytes (413 beyond). */
export const PREVIEW_MAX_BYTES = 20 * 1024 * 1024;
/** How long a run is kept, in ms. */
export const KEEP_MS = 24 * 3600 * 1000;
/** How long a request waits for its job, in ms. */
export const DEFAULT_WAIT_MS = 20_000;
/**
 * The waiting request's poll of its run: every 25 ms for the first 3 s (most runs end by then: a
 * 50,000-row CSV in about 1 s), then every 100 ms; about 290 primary-key reads over the 20 s wait.
 */
const FAST_POLL_MS = 25;
const FAST_POLL_FOR_MS = 3_000;
const POLL_MS = 100;

/** What the service needs besides the scope. */
export interface ImportDeps {
  queue: Queue;
  storage: Storage;
  /** The caller (created_by). */
  userId: number | null;
  /** Wait for the job, in ms (default DEFAULT_WAIT_MS). */
  waitMs?: number;
  /** Bound of the enqueue, in ms (Queues.enqueueTimeoutMs). */
  enqueueTimeoutMs?: number;
  clock?: Clock;
}

/** The upload reader the route binds to the request (api/http/multipart.ts receiveFile). */
export type ReceiveUpload = <T>(
  store: (file: Readable, filename: string | null) => Promise<T>,
  discard: (stored: T) => Promise<void>,
) => Promise<T>;

/**
 * An answer: 200 with the finished run, or 202 with the ids to poll. The body is `{data}`, or
 * `json` when set: the whole body as UTF-8 JSON, streamed as it is with its length (a completed
 * preview: its stored rows are sent from their file, neither parsed and serialised again nor held
 * in the web process's memory; 13 MB for 50,000 rows).
 */
export interface Answer {
  status: 200 | 202;
  data: Record<string, unknown>;
  /** `length`: the body's size in bytes, when known (absent: the body is sent chunked) */
  json?: { stream: Readable; length?: number };
}

type RunRow = {
  id: number;
  status: string;
  error: string | null;
  counts?: unknown;
  rows?: unknown;
  result?: { created: number; updated: number; skipped: number } | null;
};

/** @throws NotFound unless the supplier belongs to the tenant */
async function assertSupplier(scope: TenantScope, supplierId: number): Promise<void> {
  if (!(await scope.table('suppliers').where('id', supplierId).first('id'))) throw new NotFound('Supplier');
}

/** Removes the tenant's expired runs and their files (uploads, preview rows, import items). */
async function purgeExpired(scope: TenantScope, storage: Storage, now: Date): Promise<void> {
  const gone = await scope
    .table('supplier_import_previews')
    .where('expires_at', '<', now)
    .delete()
    .returning<{ file_key: string | null; rows_key: string | null }[]>(['file_key', 'rows_key']);
  const imports = await scope
    .table('supplier_imports')
    .where('expires_at', '<', now)
    .delete()
    .returning<{ items_key: string | null }[]>(['items_key']);
  const keys = [...gone.flatMap((g) => [g.file_key, g.rows_key]), ...imports.map((g) => g.items_key)].filter(
    (k): k is string => k !== null,
  );
  await Promise.all(keys.map((k) => storage.delete(k).catch(() => undefined)));
}

/** The rows of a preview finished before its rows went to a file (the `rows` column's text). */
async function oldRows(scope: TenantScope, id: number): Promise<Buffer> {
  const r = await scope
    .table('supplier_import_previews')
    .where('id', id)
    .first<{ rows: string | null }>(scope.knex.raw('rows::text AS rows'));
  return Buffer.from(r?.rows ?? 'null');
}

/** A Buffer as the stream and size of a stored file. */
const wholeSource = (b: Buffer) => ({ stream: Readable.from([b], { objectMode: false }), size: b.length });

/** `head`, then the bytes of `body`, then `tail`, as one byte stream (destroying it destroys `body`). */
function framed(head: Buffer, body: Readable, tail: Buffer): Readable {
  return Readable.from(
    (async function* () {
      yield head;
      yield* body as AsyncIterable<Buffer>;
      yield tail;
    })(),
    { objectMode: false },
  );
}

/** The first bytes of a stored file (at most 512). */
async function headOf(storage: Storage, key: string): Promise<Buffer> {
  const { stream } = await storage.get(key);
  const parts: Buffer[] = [];
  let n = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      parts.push(chunk);
      n += chunk.length;
      if (n >= 512) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(parts).subarray(0, 512);
}

/** Polls a run until it finished or `ms` passed (FAST_POLL_MS, then POLL_MS). */
async function waitForRun(
  scope: TenantScope,
  table: 'supplier_import_previews' | 'supplier_imports',
  id: number,
  ms: number,
) {
  const start = Date.now();
  const end = start + ms;
  for (;;) {
    const row = await scope.table(table).where('id', id).first<RunRow | undefined>('id', 'status', 'error');
    if (!row || row.status === 'completed' || row.status === 'failed' || Date.now() >= end) return row;
    const every = Date.now() - start < FAST_POLL_FOR_MS ? FAST_POLL_MS : POLL_MS;
    await new Promise((r) => setTimeout(r, Math.min(every, Math.max(0, end - Date.now()))));
  }
}

/** Job ids of the runs. */
export const previewJobId = (id: number) => safeJobId('supplier-import-preview', id);
export const importJobId = (id: number) => safeJobId('supplier-import', id);

/**
 * POST /api/suppliers/{supplier}/items/import-preview.
 * @throws NotFound (before the body is read), ValidationFailed `file` (not multipart, type, empty,
 *   or the parse refused it), PayloadTooLarge / StorageLimitError (413), QueueUnavailableError (503;
 *   upload and run removed)
 */
export async function startPreview(
  scope: TenantScope,
  deps: ImportDeps,
  supplierId: number,
  receive: ReceiveUpload,
): Promise<Answer> {
  await assertSupplier(scope, supplierId);
  const now = (deps.clock ?? systemClock).now();
  await purgeExpired(scope, deps.storage, now);
  const key = `tenants/${scope.tenantId}/supplier-imports/${randomUUID()}`;
  const stored = await receive(
    async (file, filename) => ({ ...(await deps.storage.put(key, file, { maxBytes: PREVIEW_MAX_BYTES })), filename }),
    (put) => deps.storage.delete(put.key),
  );
  try {
    detectKind(await headOf(deps.storage, key));
  } catch (err) {
    await deps.storage.delete(key);
    if (err instanceof ImportFileError) throw new ValidationFailed({ file: [err.message] });
    throw err;
  }
  const [{ id }] = await scope
    .knex('supplier_import_previews')
    .insert({
      tenant_id: scope.tenantId,
      supplier_id: supplierId,
      file_key: key,
      file_name: stored.filename?.slice(0, 255) ?? null,
      file_size: stored.size,
      created_by: deps.userId,
      created_at: now,
      expires_at: new Date(now.getTime() + KEEP_MS),
    })
    .returning<{ id: number }[]>('id');
  const data: ParseJobData = { tenantId: scope.tenantId, supplierId, previewId: id };
  try {
    await addOrUnavailable(
      deps.queue,
      PARSE_JOB,
      data,
      { jobId: previewJobId(id), attempts: 1 },
      deps.enqueueTimeoutMs,
    );
  } catch (err) {
    await scope.table('supplier_import_previews').where('id', id).delete();
    await deps.storage.delete(key).catch(() => undefined);
    throw err;
  }
  await waitForRun(scope, 'supplier_import_previews', id, deps.waitMs ?? DEFAULT_WAIT_MS);
  return previewAnswer(scope, deps.queue, deps.storage, supplierId, id);
}

/**
 * The state of a preview: 200 with counts and rows, 202 while it runs (with the job's progress).
 * @throws NotFound (not the tenant's or the supplier's, or expired), ValidationFailed `file` when
 *   the file was refused
 */
export async function previewAnswer(
  scope: TenantScope,
  queue: Queue,
  storage: Storage,
  supplierId: number,
  id: number,
  clock: Clock = systemClock,
): Promise<Answer> {
  const row = await scope
    .table('supplier_import_previews')
    .where({ id, supplier_id: supplierId })
    .where('expires_at', '>', clock.now())
    .first<(RunRow & { rows_key: string | null }) | undefined>('id', 'status', 'error', 'counts', 'rows_key');
  if (!row) throw new NotFound('Import preview');
  if (row.status === 'failed') throw new ValidationFailed({ file: [row.error ?? 'the file could not be read'] });
  if (row.status === 'completed') {
    const data = { preview_id: id, status: row.status, counts: row.counts };
    const head = Buffer.from(`${JSON.stringify({ data }).slice(0, -2)},"rows":`);
    const tail = Buffer.from('}}');
    // the rows as stored: JSON.stringify's output of the job (a file of the storage driver; before
    // migration 20261208400000 the `rows` column's text), sent without parsing it again
    const rows = row.rows_key ? await storage.get(row.rows_key) : wholeSource(await oldRows(scope, id));
    // a rows file is never empty ("[]" at least): a size of 0 is a driver that did not know it
    // (S3 without ContentLength), and a Content-Length from it would cut the answer short
    const length = rows.size > 0 ? head.length + rows.size + tail.length : undefined;
    return { status: 200, data, json: { stream: framed(head, rows.stream, tail), length } };
  }
  const job = await queue.getJob(previewJobId(id)).catch(() => undefined);
  const progress = job && typeof job.progress === 'object' ? job.progress : null;
  return { status: 202, data: { preview_id: id, job_id: previewJobId(id), status: row.status, progress } };
}

/** An item of the import body. */
export interface ImportItemInput {
  name?: string;
  selected?: boolean;
  sku?: string | null;
  category?: string | null;
  unit?: string | null;
  cost_price?: number | null;
  sell_price?: number | null;
  notes?: string | null;
}

const SINGLE_LINE = new RegExp(SINGLE_LINE_PATTERN);

/** A text field of an import item: trimmed, null when blank; its error goes to `errors[items.N.f]`. */
function itemText(
  it: ImportItemInput,
  i: number,
  f: 'name' | 'sku' | 'category' | 'unit' | 'notes',
  errors: FieldErrors,
): string | null {
  const v = it[f];
  const s = typeof v === 'string' ? v.trim() : '';
  if (s.length > FIELD_MAX[f]) errors[`items.${i}.${f}`] = [`must be at most ${FIELD_MAX[f]} characters`];
  else if (f !== 'notes' && !SINGLE_LINE.test(s)) errors[`items.${i}.${f}`] = ['must be a single line'];
  return s === '' ? null : s;
}

/** A price of an import item as decimal text (null when absent); its error goes to `errors[items.N.f]`. */
function itemPrice(it: ImportItemInput, i: number, f: 'cost_price' | 'sell_price', errors: FieldErrors): string | null {
  const v = it[f];
  if (v === null || v === undefined) return null;
  if (v < 0) errors[`items.${i}.${f}`] = ['must be at least 0'];
  else if (v > MAX_PRICE) errors[`items.${i}.${f}`] = [`must be at most ${MAX_PRICE}`];
  else if (Math.round(v * 100) / 100 !== v) errors[`items.${i}.${f}`] = ['must have at most 2 decimals'];
  return String(v);
}

/**
 * Checks the selected items (admin-api.md "Supplier import item") and turns them into rows
 * (`row`: the item's index in the body + 1).
 * @throws ValidationFailed with `items.N.field` for every invalid selected item (N: index in the body)
 */
export function importRows(items: readonly ImportItemInput[]): ImportRow[] {
  const errors: FieldErrors = {};
  const rows: ImportRow[] = [];
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    if (it.selected === false) continue;
    const name = itemText(it, i, 'name', errors);
    if (name === null) errors[`items.${i}.name`] = ['is required'];
    rows.push({
      row: i + 1,
      name: name ?? '',
      sku: itemText(it, i, 'sku', errors),
      category: itemText(it, i, 'category', errors),
      unit: itemText(it, i, 'unit', errors),
      cost_price: itemPrice(it, i, 'cost_price', errors),
      sell_price: itemPrice(it, i, 'sell_price', errors),
      notes: itemText(it, i, 'notes', errors),
      valid: true,
      errors: {},
    });
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return rows;
}

/**
 * POST /api/suppliers/{supplier}/items/import: checks every selected item (nothing written when
 * one is invalid), stores them and runs `apply`.
 * @throws NotFound, ValidationFailed (`items.N.field`, or `items` when none is selected),
 *   QueueUnavailableError (503; the run removed)
 */
export async function startImport(
  scope: TenantScope,
  deps: ImportDeps,
  supplierId: number,
  items: readonly ImportItemInput[],
): Promise<Answer> {
  await assertSupplier(scope, supplierId);
  const rows = importRows(items);
  if (!rows.length) throw new ValidationFailed({ items: ['select at least one item'] });
  const now = (deps.clock ?? systemClock).now();
  await purgeExpired(scope, deps.storage, now);
  // the rows as one file of the storage driver (`apply` reads it), not a jsonb value of the run
  const itemsKey = `tenants/${scope.tenantId}/supplier-imports/${randomUUID()}-items.json`;
  await putJson(deps.storage, itemsKey, rows);
  let id: number | undefined;
  try {
    [{ id }] = await scope
      .knex('supplier_imports')
      .insert({
        tenant_id: scope.tenantId,
        supplier_id: supplierId,
        items_key: itemsKey,
        created_by: deps.userId,
        created_at: now,
        expires_at: new Date(now.getTime() + KEEP_MS),
      })
      .returning<{ id: number }[]>('id');
    const data: ApplyJobData = { tenantId: scope.tenantId, supplierId, importId: id };
    await addOrUnavailable(deps.queue, APPLY_JOB, data, { jobId: importJobId(id), attempts: 1 }, deps.enqueueTimeoutMs);
  } catch (err) {
    if (id !== undefined) await scope.table('supplier_imports').where('id', id).delete();
    await deps.storage.delete(itemsKey).catch(() => undefined);
    throw err;
  }
  await waitForRun(scope, 'supplier_imports', id, deps.waitMs ?? DEFAULT_WAIT_MS);
  return importAnswer(scope, supplierId, id);
}

/**
 * The state of an import: 200 `{created, updated, skipped}` when completed (or `status: failed`
 * with `error`), 202 while it runs.
 * @throws NotFound (not the tenant's or the supplier's, or expired)
 */
export async function importAnswer(
  scope: TenantScope,
  supplierId: number,
  id: number,
  clock: Clock = systemClock,
): Promise<Answer> {
  const row = await scope
    .table('supplier_imports')
    .where({ id, supplier_id: supplierId })
    .where('expires_at', '>', clock.now())
    .first<RunRow | undefined>('id', 'status', 'error', 'result');
  if (!row) throw new NotFound('Import');
  if (row.status === 'completed' || row.status === 'failed') {
    return { status: 200, data: { import_id: id, status: row.status, ...(row.result ?? {}), error: row.error } };
  }
  return { status: 202, data: { import_id: id, job_id: importJobId(id), status: row.status } };
}
