import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { AMOUNT, ID, QUANTITY } from './schemas.js';

/** JSON schemas of the ledger routes (issue 16 items 2, 3): stock-in, stock, mutations, serials, counts. */

const SERIAL = { type: 'string', minLength: 1, maxLength: 100, ...singleLine } as const;
const stamp = { type: 'string', format: 'date-time' } as const;
const ref = (extra: Record<string, Schema> = {}): Schema => ({
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string' }, ...extra },
});
const itemRef = ref({ sku: { type: ['string', 'null'] }, unit: { type: 'string' }, tracking: { type: 'string' } });
const locationRef: Schema = { ...ref({ type: { type: 'string' } }), type: ['object', 'null'] };

/** POST /api/inventory/{id}/stock-in body. */
export const stockInBody: Schema = {
  type: 'object',
  required: ['quantity', 'unit_cost', 'location_id'],
  additionalProperties: false,
  properties: {
    quantity: { ...QUANTITY, description: 'Min 0.01, 2 decimals; a whole number for serial items.' },
    unit_cost: { ...AMOUNT, description: 'Cost of one unit (>= 0, 2 decimals).' },
    location_id: { ...ID, description: 'A warehouse, POP or technician location of the tenant.' },
    supplier_id: { type: ['integer', 'null'], minimum: 1, maximum: 2147483647 },
    finance_paid: { type: 'boolean', default: false, description: 'Paid already: books an expense (finance).' },
    finance_account_id: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: 2147483647,
      description: 'Required when finance_paid is true.',
    },
    serials: {
      type: 'array',
      maxItems: 1000,
      items: SERIAL,
      description: 'Serial items: one new serial number per unit (count = quantity).',
    },
    note: { type: ['string', 'null'], maxLength: 500 },
  },
};

/** The stock-in's answer. */
export const stockInOne: Schema = {
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'object',
      required: ['id', 'amount', 'finance_status'],
      properties: {
        id: { type: 'integer', description: 'The purchase id.' },
        item_id: { type: 'integer' },
        location_id: { type: 'integer' },
        supplier_id: { type: ['integer', 'null'] },
        quantity: { type: 'number' },
        unit_cost: { type: 'number' },
        amount: { type: 'number', description: 'quantity x unit_cost, exact, 2 decimals.' },
        finance_paid: { type: 'boolean' },
        finance_account_id: { type: ['integer', 'null'] },
        finance_status: { type: 'string', enum: ['pending', 'booked'] },
        mutation_id: { type: 'integer' },
        serials: { type: 'array', items: { type: 'string' } },
        location_stock: { type: 'number', description: "The location's stock of the item after it." },
        created_at: stamp,
      },
    },
  },
};

/** GET /api/inventory/stock query. */
export const stockQuery: Schema = pageQuery(20, {
  item_id: ID,
  location_id: ID,
  location_type: { type: 'string', enum: ['warehouse', 'pop', 'technician'] },
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of the item name or sku.' },
  include_zero: { type: 'boolean', description: 'Also rows whose quantity is 0 (default false).' },
});
export const stockList: Schema = listEnvelope({
  type: 'object',
  properties: {
    item_id: { type: 'integer' },
    item: itemRef,
    location_id: { type: 'integer' },
    location: locationRef,
    quantity: { type: 'number' },
    updated_at: stamp,
  },
});

/** GET /api/inventory/mutations query. */
export const mutationQuery: Schema = pageQuery(20, {
  item_id: ID,
  location_id: ID,
  type: { type: 'string', enum: ['stock_in', 'stock_out', 'transfer', 'return', 'adjustment'] },
  direction: { type: 'string', enum: ['in', 'out'] },
  reference_type: { type: 'string', enum: ['inventory_request', 'inventory_count', 'inventory_purchase'] },
  reference_id: ID,
  request_id: { ...ID, description: 'The mutations of one inventory request.' },
});
export const mutationList: Schema = listEnvelope({
  type: 'object',
  properties: {
    id: { type: 'integer' },
    item_id: { type: 'integer' },
    item: itemRef,
    location_id: { type: 'integer' },
    location: locationRef,
    type: { type: 'string' },
    direction: { type: 'string', enum: ['in', 'out'] },
    quantity: { type: 'number', description: 'Signed: > 0 in, < 0 out.' },
    balance_after: { type: 'number' },
    serials: { type: 'array', items: { type: 'string' } },
    unit_cost: { type: ['number', 'null'] },
    reference_type: { type: ['string', 'null'] },
    reference_id: { type: ['integer', 'null'] },
    request_item_id: { type: ['integer', 'null'] },
    note: { type: ['string', 'null'] },
    created_by: { type: ['object', 'null'] },
    created_at: stamp,
  },
});

/** GET /api/inventory/serials query. */
export const serialQuery: Schema = pageQuery(20, {
  item_id: ID,
  location_id: ID,
  status: { type: 'string', enum: ['in_stock', 'issued', 'written_off'] },
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of the serial number.' },
});
export const serialList: Schema = listEnvelope({
  type: 'object',
  properties: {
    id: { type: 'integer' },
    serial_number: { type: 'string' },
    item_id: { type: 'integer' },
    item: itemRef,
    status: { type: 'string', enum: ['in_stock', 'issued', 'written_off'] },
    location_id: { type: ['integer', 'null'] },
    location: locationRef,
    created_at: stamp,
    updated_at: stamp,
  },
});

/** POST /api/inventory/counts body. */
export const countBody: Schema = {
  type: 'object',
  required: ['location_id', 'reason', 'lines'],
  additionalProperties: false,
  properties: {
    location_id: ID,
    reason: { type: 'string', minLength: 1, maxLength: 500 },
    lines: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      items: {
        type: 'object',
        required: ['item_id'],
        additionalProperties: false,
        properties: {
          item_id: ID,
          counted_quantity: { ...AMOUNT, description: 'Quantity items: what was found (>= 0, 2 decimals).' },
          serials: { type: 'array', maxItems: 1000, items: SERIAL, description: 'Serial items: the serials found.' },
        },
      },
    },
  },
};
/** GET /api/inventory/counts query. */
export const countQuery: Schema = pageQuery(20, { location_id: ID });
const countRead: Schema = {
  type: 'object',
  required: ['id', 'location_id', 'reason'],
  properties: {
    id: { type: 'integer' },
    location_id: { type: 'integer' },
    location: locationRef,
    reason: { type: 'string' },
    created_by: { type: ['object', 'null'] },
    created_at: stamp,
    updated_at: stamp,
    lines: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          item_id: { type: 'integer' },
          item: itemRef,
          expected_quantity: { type: 'number' },
          counted_quantity: { type: 'number' },
          difference: { type: 'number' },
          written_off_serials: { type: 'array', items: { type: 'string' } },
          mutation_id: { type: ['integer', 'null'] },
        },
      },
    },
  },
};
export const countOne: Schema = { type: 'object', required: ['data'], properties: { data: countRead } };
export const countList: Schema = listEnvelope(countRead);
