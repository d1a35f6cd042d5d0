import type { Schema } from '../http/validation.js';
import { FIELD_MAX, MAX_PRICE } from '../../jobs/supplier-import/rows.js';

/** Schemas of the supplier price-list import (issue 16 item 6; admin-api.md "Supplier import item"). */

/** Most rows of one import (and of one file). */
export const MAX_IMPORT_ITEMS = 50_000;
/** Largest POST .../items/import body. */
export const IMPORT_BODY_LIMIT = '25mb';
export { MAX_PRICE };

const id = { type: 'integer', minimum: 1, maximum: 2147483647 } as const;

/** Path `{supplier}`. */
export const supplierParams: Schema = {
  type: 'object',
  required: ['supplier'],
  additionalProperties: false,
  properties: { supplier: id },
};
/** Path `{supplier}/.../{preview}`. */
export const previewParams: Schema = {
  type: 'object',
  required: ['supplier', 'preview'],
  additionalProperties: false,
  properties: { supplier: id, preview: id },
};
/** Path `{supplier}/.../{import}`. */
export const importParams: Schema = {
  type: 'object',
  required: ['supplier', 'import'],
  additionalProperties: false,
  properties: { supplier: id, import: id },
};

/** The multipart form of import-preview. */
export const previewUpload: Schema = {
  type: 'object',
  required: ['file'],
  additionalProperties: false,
  properties: {
    file: {
      type: 'string',
      contentMediaType: 'application/octet-stream',
      description:
        'CSV or TXT (delimiter detected; UTF-8, else Windows-1252), XLSX (first sheet) or PDF (tables, else text lines; at most 200 pages), decided by content, not by name; at most 20 MB (20,971,520 bytes) and 50,000 rows.',
    },
  },
};

/**
 * One item of POST .../items/import (admin-api.md "Supplier import item"); the limits are checked
 * for selected items only (api/supplier-import/service.ts importRows).
 */
export const importItem: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', description: `required for a selected item, 1-${FIELD_MAX.name} characters` },
    selected: { type: 'boolean', description: 'false: the item is ignored (default true)' },
    sku: { type: ['string', 'null'], description: `at most ${FIELD_MAX.sku} characters` },
    category: { type: ['string', 'null'], description: `at most ${FIELD_MAX.category} characters` },
    unit: { type: ['string', 'null'], description: `at most ${FIELD_MAX.unit} characters` },
    cost_price: { type: ['number', 'null'], description: 'buy price at this supplier, >= 0, 2 decimals' },
    sell_price: { type: ['number', 'null'], description: '>= 0, 2 decimals' },
    notes: { type: ['string', 'null'], description: `at most ${FIELD_MAX.notes} characters` },
  },
};

/** POST .../items/import body. */
export const importBody: Schema = {
  type: 'object',
  required: ['items'],
  additionalProperties: false,
  properties: { items: { type: 'array', minItems: 1, maxItems: MAX_IMPORT_ITEMS, items: importItem } },
};

const nullableText = { type: ['string', 'null'] };
const counts: Schema = {
  type: 'object',
  properties: Object.fromEntries(
    ['total', 'valid', 'invalid', 'create', 'update', 'skip'].map((k) => [k, { type: 'integer' }]),
  ),
};
const matchingItem: Schema = {
  type: ['object', 'null'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    sku: nullableText,
    category: nullableText,
    unit: { type: 'string' },
    notes: nullableText,
    sell_price: { type: 'string' },
    cost_price: nullableText,
  },
};
const previewRow: Schema = {
  type: 'object',
  properties: {
    row: { type: 'integer', description: '1-based data row of the file' },
    name: { type: 'string' },
    sku: nullableText,
    category: nullableText,
    unit: nullableText,
    cost_price: { ...nullableText, description: 'decimal text' },
    sell_price: { ...nullableText, description: 'decimal text' },
    notes: nullableText,
    valid: { type: 'boolean' },
    errors: { type: 'object', additionalProperties: { type: 'string' } },
    action: { type: 'string', enum: ['create', 'update', 'skip'] },
    matching_item: matchingItem,
  },
};
const status = { type: 'string', enum: ['queued', 'running', 'completed', 'failed'] };

/** 200 of import-preview and of its poll. */
export const previewDone: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: { preview_id: { type: 'integer' }, status, counts, rows: { type: 'array', items: previewRow } },
    },
  },
};
/** 202 of import-preview and of its poll. */
export const previewPending: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        preview_id: { type: 'integer' },
        job_id: { type: 'string' },
        status,
        progress: { type: ['object', 'null'], properties: { rows_read: { type: 'integer' } } },
      },
    },
  },
};
/** 200 of import and of its poll. */
export const importDone: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        import_id: { type: 'integer' },
        status,
        created: { type: 'integer' },
        updated: { type: 'integer' },
        skipped: { type: 'integer' },
        error: { type: ['string', 'null'] },
      },
    },
  },
};
/** 202 of import and of its poll. */
export const importPending: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: { import_id: { type: 'integer' }, job_id: { type: 'string' }, status },
    },
  },
};
