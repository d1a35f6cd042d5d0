import { singleLine, type Schema } from '../../http/validation.js';
import { listEnvelope, pageQuery } from '../../shared/schemas.js';
import { ID, QUANTITY } from '../schemas.js';

/** JSON schemas of the inventory requests (issue 16 item 4). */

export const REQUEST_STATUSES = [
  'draft',
  'pending',
  'deferred',
  'approved',
  'rejected',
  'processing',
  'completed',
  'cancelled',
] as const;
export const REQUEST_TYPES = ['stock_out', 'transfer', 'return'] as const;
const nullableId = { type: ['integer', 'null'], minimum: 1, maximum: 2147483647 } as const;
const stamp = { type: 'string', format: 'date-time' } as const;
const nullableStamp = { type: ['string', 'null'], format: 'date-time' } as const;
const userRef = {
  type: ['object', 'null'],
  properties: { id: { type: 'integer' }, name: { type: 'string' } },
} as const;
const locationRef = {
  type: ['object', 'null'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, type: { type: 'string' } },
} as const;

/** One requested item. */
const requestItem: Schema = {
  type: 'object',
  required: ['item_id', 'quantity'],
  additionalProperties: false,
  properties: {
    item_id: ID,
    quantity: { ...QUANTITY, description: 'Min 0.01, 2 decimals; whole for serial items.' },
    note: { type: ['string', 'null'], maxLength: 500, description: 'The item note.' },
  },
};

/** Fields of a request body shared by POST and PUT. */
const fields: Record<string, Schema> = {
  type: {
    type: 'string',
    enum: [...REQUEST_TYPES],
    description:
      'stock_out: out of source_location_id; transfer: to destination_location_id; return: a technician location back to a warehouse or POP.',
  },
  source_location_id: { ...ID, description: 'The location the stock leaves (the warehouse of a stock_out).' },
  destination_location_id: { ...nullableId, description: 'transfer and return only.' },
  reference_type: {
    type: ['string', 'null'],
    enum: ['ticket', 'schedule', null],
    description: 'What the stock is for (sales_order is set by the sales module).',
  },
  reference_id: nullableId,
  note: { type: ['string', 'null'], maxLength: 1000 },
  items: { type: 'array', minItems: 1, maxItems: 100, items: requestItem, description: 'No item twice.' },
};

/** POST /api/inventory/requests body. */
export const requestCreateBody: Schema = {
  type: 'object',
  required: ['type', 'source_location_id', 'items'],
  additionalProperties: false,
  properties: {
    ...fields,
    draft: { type: 'boolean', default: false, description: 'true: saved as draft (submit later); else pending.' },
  },
};

/** PUT /api/inventory/requests/{id} body: any field; left out keeps its value; items replace all items. */
export const requestUpdateBody: Schema = { type: 'object', additionalProperties: false, properties: fields };

/** Body of reject and defer: the reason, required. */
export const reasonBody: Schema = {
  type: 'object',
  required: ['reason'],
  additionalProperties: false,
  properties: { reason: { type: 'string', minLength: 1, maxLength: 1000 } },
};

/** Body of cancel (optional): a reason. */
export const cancelBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { reason: { type: ['string', 'null'], maxLength: 1000 } },
};

/** Body of process (optional): the serial numbers of the serial items. */
export const processBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    items: {
      type: 'array',
      maxItems: 100,
      items: {
        type: 'object',
        required: ['item_id', 'serials'],
        additionalProperties: false,
        properties: {
          item_id: ID,
          serials: {
            type: 'array',
            maxItems: 1000,
            items: { type: 'string', minLength: 1, maxLength: 100, ...singleLine },
          },
        },
      },
      description: 'Every serial item of the request with as many serials as its quantity.',
    },
  },
};

/** GET /api/inventory/requests query. */
export const requestListQuery: Schema = pageQuery(20, {
  status: { type: 'string', enum: [...REQUEST_STATUSES] },
  type: { type: 'string', enum: [...REQUEST_TYPES] },
  reference_type: { type: 'string', enum: ['sales_order', 'ticket', 'schedule'] },
  reference_id: ID,
  mine: { type: 'boolean', description: "true: only the caller's own requests (non-managers always)." },
});

/** A request as the API answers it. */
export const requestRead: Schema = {
  type: 'object',
  required: ['id', 'number', 'type', 'status', 'items'],
  properties: {
    id: { type: 'integer' },
    number: { type: 'string', description: 'IR-000001' },
    type: { type: 'string', enum: [...REQUEST_TYPES] },
    status: { type: 'string', enum: [...REQUEST_STATUSES] },
    source_location_id: { type: 'integer' },
    source_location: locationRef,
    destination_location_id: { type: ['integer', 'null'] },
    destination_location: locationRef,
    reference_type: { type: ['string', 'null'] },
    reference_id: { type: ['integer', 'null'] },
    note: { type: ['string', 'null'] },
    reason: { type: ['string', 'null'], description: 'The reason of the last reject, defer or cancel.' },
    requested_by: userRef,
    decided_by: userRef,
    decided_at: nullableStamp,
    processed_by: userRef,
    processed_at: nullableStamp,
    completed_at: nullableStamp,
    cancelled_at: nullableStamp,
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          item_id: { type: 'integer' },
          item: {
            type: 'object',
            properties: {
              id: { type: 'integer' },
              name: { type: 'string' },
              sku: { type: ['string', 'null'] },
              unit: { type: 'string' },
              tracking: { type: 'string' },
            },
          },
          quantity: { type: 'number' },
          note: { type: ['string', 'null'] },
          serials: { type: 'array', items: { type: 'string' }, description: 'Serials moved when processed.' },
        },
      },
    },
    history: {
      type: 'array',
      description: 'Detail only: every change, oldest first.',
      items: {
        type: 'object',
        properties: {
          action: { type: 'string' },
          from_status: { type: ['string', 'null'] },
          to_status: { type: 'string' },
          reason: { type: ['string', 'null'] },
          user: userRef,
          at: stamp,
        },
      },
    },
    created_at: stamp,
    updated_at: stamp,
  },
};
export const requestOne: Schema = { type: 'object', required: ['data'], properties: { data: requestRead } };
export const requestList: Schema = listEnvelope(requestRead);
export const pendingCountOne: Schema = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } } },
};
