import type { Schema } from '../http/validation.js';

/** Shared JSON-schema pieces (they also feed the OpenAPI document). */

/** Path `{id}`: a positive int4 (larger values are 422, never a database error). */
export const idParams: Schema = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'integer', minimum: 1, maximum: 2147483647 } },
};

/** page >= 1, per_page 1..100 (DESIGN.md §4); `defaultPerPage` per endpoint family. */
export function pageQuery(defaultPerPage: number, extra: Record<string, Schema> = {}): Schema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      page: { type: 'integer', minimum: 1, maximum: 1000000, default: 1 },
      per_page: { type: 'integer', minimum: 1, maximum: 100, default: defaultPerPage },
      ...extra,
    },
  };
}

/** The error body of the main service (DESIGN.md §4): `{message, code, errors?, request_id?}`. */
export const errorBody: Schema = {
  type: 'object',
  required: ['message', 'code'],
  properties: {
    message: { type: 'string' },
    code: { type: 'string' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    request_id: { type: 'string' },
  },
};

/** The list envelope (DESIGN.md §4). */
export function listEnvelope(item: Schema): Schema {
  return {
    type: 'object',
    required: ['current_page', 'data', 'per_page', 'total'],
    properties: {
      current_page: { type: 'integer' },
      data: { type: 'array', items: item },
      per_page: { type: 'integer' },
      total: { type: 'integer' },
      last_page: { type: 'integer' },
      from: { type: ['integer', 'null'] },
      to: { type: ['integer', 'null'] },
    },
  };
}

/** Builds the list envelope from a page of rows and the exact total. */
export function envelope<T>(data: T[], page: number, perPage: number, total: number) {
  const from = data.length ? (page - 1) * perPage + 1 : null;
  return {
    current_page: page,
    data,
    per_page: perPage,
    total,
    last_page: Math.max(1, Math.ceil(total / perPage)),
    from,
    to: from === null ? null : from + data.length - 1,
  };
}

/** `YYYY-MM-DDTHH:MM:SS.mmmZ`: what toISOString() gives (and db/statement.ts's 'iso' timestamps). */
const ISO_UTC_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * ISO 8601 with offset (timestamptz columns come back as Date, or already as ISO strings from
 * db/statement.ts, which are returned unchanged).
 */
export function iso(v: Date | string | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string' && ISO_UTC_MS.test(v)) return v;
  return (v instanceof Date ? v : new Date(v)).toISOString();
}
