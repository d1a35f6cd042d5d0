import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { AppContext } from '../context.js';
import { receiveFile } from '../http/multipart.js';
import { jsonBody } from '../http/body.js';
import { QUEUE } from '../../jobs/supplier-import.js';
import type { Storage } from '../../lib/storage/index.js';
import {
  IMPORT_BODY_LIMIT,
  importBody,
  importDone,
  importParams,
  importPending,
  previewDone,
  previewParams,
  previewPending,
  previewUpload,
  supplierParams,
} from './schemas.js';
import {
  importAnswer,
  PREVIEW_MAX_BYTES,
  previewAnswer,
  startImport,
  startPreview,
  type Answer,
  type ImportDeps,
  type ImportItemInput,
} from './service.js';

/**
 * The supplier price-list import (issue 16 item 6; document 2 "Suppliers"): upload and preview,
 * then import the selected rows. Admin login, inventory.manage, module inventory.
 */
const base = {
  tag: 'suppliers',
  auth: 'login',
  tenant: true,
  module: 'inventory',
  permission: 'inventory.manage',
} as const;
const notFound = { 404: { description: 'Not a supplier (or a run) of the tenant, or the run expired (24 h)' } };
const unavailable = { 503: { description: 'QUEUE_UNAVAILABLE: the job queue (Redis) is down; nothing kept' } };

function deps(ctx: AppContext): Omit<ImportDeps, 'storage'> {
  const opts = ctx.deps.config.supplierImport ?? {};
  return {
    queue: ctx.deps.queues.get(QUEUE),
    userId: ctx.state.auth?.userId ?? null,
    waitMs: opts.waitMs,
    clock: opts.clock,
    enqueueTimeoutMs: ctx.deps.queues.enqueueTimeoutMs,
  };
}

/** The app's storage driver (uploads, preview rows). @throws Error when none is configured */
function storageOf(ctx: AppContext): Storage {
  if (!ctx.deps.storage) throw new Error('no storage driver configured (AppDeps.storage)');
  return ctx.deps.storage;
}

const answer = (ctx: AppContext, a: Answer) => {
  ctx.status = a.status;
  if (a.json === undefined) ctx.body = { data: a.data };
  else {
    ctx.type = 'application/json';
    ctx.body = a.json.stream;
    if (a.json.length !== undefined) ctx.length = a.json.length;
  }
};

/** Routes of the supplier import. */
export const supplierImportRoutes: AnyWebRoute[] = [
  webRoute<{ supplier: number }>({
    ...base,
    method: 'post',
    path: '/api/suppliers/:supplier/items/import-preview',
    params: supplierParams,
    upload: previewUpload,
    summary: 'Upload a price list (CSV, TXT, XLSX or PDF by content, at most 20 MB) and preview its rows',
    description:
      'The file is parsed by the `parse` job of queue `supplier-import` in a sandboxed child process (256 MB heap, 60 s). The request waits up to 20 s: 200 with counts and rows (each with valid, errors, action create/update/skip and matching_item: by sku case-insensitively, else by name), else 202 with the ids to poll at GET .../import-previews/{preview}. Kept 24 hours.',
    responses: {
      200: { description: 'The preview', schema: previewDone },
      202: { description: 'Still parsing: poll GET .../import-previews/{preview}', schema: previewPending },
      ...notFound,
      413: { description: 'PAYLOAD_TOO_LARGE: the file is larger than 20 MB; nothing kept' },
      422: {
        description:
          'VALIDATION_FAILED: `errors.file` names why the file was refused (type, empty, no name column, more than 50,000 rows, zip bomb, truncated XLSX, encrypted or more than 200 pages PDF, memory or time limit)',
      },
      ...unavailable,
    },
    async handler(ctx) {
      const d = { ...deps(ctx), storage: storageOf(ctx) };
      const a = await startPreview(ctx.state.scope!, d, ctx.state.params.supplier, (store, discard) =>
        receiveFile(
          ctx,
          { field: 'file', maxBytes: PREVIEW_MAX_BYTES },
          (file, info) => store(file, info.filename),
          discard,
        ),
      );
      answer(ctx, a);
    },
  }),
  webRoute<{ supplier: number; preview: number }>({
    ...base,
    method: 'get',
    path: '/api/suppliers/:supplier/items/import-previews/:preview',
    params: previewParams,
    summary: 'Poll a preview: 200 with counts and rows when parsed, 202 while parsing',
    responses: {
      200: { description: 'The preview', schema: previewDone },
      202: { description: 'Still parsing (progress: rows read so far)', schema: previewPending },
      ...notFound,
      422: { description: 'VALIDATION_FAILED: `errors.file`, the reason the file was refused' },
    },
    async handler(ctx) {
      const { supplier, preview } = ctx.state.params;
      answer(
        ctx,
        await previewAnswer(
          ctx.state.scope!,
          deps(ctx).queue,
          storageOf(ctx),
          supplier,
          preview,
          ctx.deps.config.supplierImport?.clock,
        ),
      );
    },
  }),
  webRoute<{ supplier: number }, Record<string, never>, { items: ImportItemInput[] }>({
    ...base,
    method: 'post',
    path: '/api/suppliers/:supplier/items/import',
    params: supplierParams,
    body: importBody,
    bodyParser: jsonBody({ limit: IMPORT_BODY_LIMIT }),
    summary: 'Import items (at most 50,000; body at most 25 MB): create or update master items and their buy price',
    description:
      'Items with selected=false are ignored; any invalid selected item answers 422 `items.N.field` and nothing is written. The `apply` job writes all rows in one transaction (matching by sku case-insensitively, else by name; unchanged and duplicate rows skipped; no stock is added). Waits up to 20 s: 200 {created, updated, skipped}, else 202 polled at GET .../imports/{import}. Importing the same rows twice: the second run skips them all.',
    responses: {
      200: { description: 'Applied', schema: importDone },
      202: { description: 'Still applying: poll GET .../imports/{import}', schema: importPending },
      ...notFound,
      413: { description: 'PAYLOAD_TOO_LARGE: the body is larger than 25 MB' },
      ...unavailable,
    },
    async handler(ctx) {
      answer(
        ctx,
        await startImport(
          ctx.state.scope!,
          { ...deps(ctx), storage: storageOf(ctx) },
          ctx.state.params.supplier,
          ctx.state.body.items,
        ),
      );
    },
  }),
  webRoute<{ supplier: number; import: number }>({
    ...base,
    method: 'get',
    path: '/api/suppliers/:supplier/items/imports/:import',
    params: importParams,
    summary: 'Poll an import: 200 with created, updated and skipped when done, 202 while it runs',
    responses: {
      200: { description: 'The finished import (status completed, or failed with error)', schema: importDone },
      202: { description: 'Still applying', schema: importPending },
      ...notFound,
    },
    async handler(ctx) {
      const { supplier, import: id } = ctx.state.params;
      answer(ctx, await importAnswer(ctx.state.scope!, supplier, id, ctx.deps.config.supplierImport?.clock));
    },
  }),
];
