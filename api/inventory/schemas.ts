import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';

/** JSON schemas of the inventory catalogue (issue 16 item 1): items and locations. */

export const ID = { type: 'integer', minimum: 1, maximum: 2147483647 } as const;
/** A money amount or price: JSON number, 0..999999999999.99 (2 decimals checked by the service). */
export const AMOUNT = { type: 'number', minimum: 0, maximum: 999999999999.99 } as const;
/** A quantity: > 0 (min 0.01), 2 decimals (checked by the service), whole for serial items. */
export const QUANTITY = { type: 'number', minimum: 0.01, maximum: 999999999999.99 } as const;
const text = (max: number, nullable = true) => ({
  type: nullable ? ['string', 'null'] : 'string',
  maxLength: max,
  ...singleLine,
});
const BOOL = { type: 'boolean' } as const;
const nullableString = { type: ['string', 'null'] } as const;
const stamp = { type: 'string', format: 'date-time' } as const;

/** Fields of an item body (admin-api.md "Supplier import item" limits + issue 16 item 1). */
const itemFields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 150, ...singleLine },
  sku: { ...text(80), description: 'Unique per tenant, case-insensitively.' },
  category: text(100),
  unit: { type: 'string', minLength: 1, maxLength: 20, ...singleLine, description: 'Default pcs.' },
  notes: { type: ['string', 'null'], maxLength: 500 },
  item_type: { type: 'string', enum: ['goods', 'material', 'device'], description: 'Default goods.' },
  tracking: {
    type: 'string',
    enum: ['quantity', 'serial'],
    description: 'Default quantity; serial items move with one serial number per unit.',
  },
  sell_price: { ...AMOUNT, description: 'Default 0.' },
  min_stock: { ...AMOUNT, description: 'Below it the item is low on stock. Default 0.' },
  is_active: BOOL,
};

/** POST /api/inventory body: name required. */
export const itemCreateBody: Schema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: itemFields,
};
/** PUT /api/inventory/{id} body: any field; a field left out keeps its value. */
export const itemUpdateBody: Schema = { type: 'object', additionalProperties: false, properties: itemFields };

/** GET /api/inventory query. */
export const itemListQuery: Schema = pageQuery(20, {
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of name, sku or category.' },
  item_type: { type: 'string', enum: ['goods', 'material', 'device'] },
  tracking: { type: 'string', enum: ['quantity', 'serial'] },
  category: { type: 'string', maxLength: 100, ...singleLine },
  is_active: BOOL,
  low_stock: { type: 'boolean', description: 'true: items whose total stock is below min_stock.' },
});

/** An item as the API answers it. */
export const itemRead: Schema = {
  type: 'object',
  required: ['id', 'name', 'tracking', 'stock_quantity'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    sku: nullableString,
    category: nullableString,
    unit: { type: 'string' },
    notes: nullableString,
    item_type: { type: 'string' },
    tracking: { type: 'string' },
    sell_price: { type: 'number' },
    min_stock: { type: 'number' },
    stock_quantity: { type: 'number', description: 'Total stock over all locations.' },
    low_stock: { type: 'boolean' },
    is_active: { type: 'boolean' },
    created_at: stamp,
    updated_at: stamp,
  },
};
export const itemOne: Schema = { type: 'object', required: ['data'], properties: { data: itemRead } };
export const itemList: Schema = listEnvelope(itemRead);

/** Fields of a location body. */
const locationFields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 150, ...singleLine },
  type: { type: 'string', enum: ['warehouse', 'pop', 'technician'] },
  holder_user_id: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 2147483647,
    description: 'The user who holds a technician location (required for type technician, else null).',
  },
  address: { type: ['string', 'null'], maxLength: 500 },
  is_active: BOOL,
};
/** POST /api/inventory/locations body. */
export const locationCreateBody: Schema = {
  type: 'object',
  required: ['name', 'type'],
  additionalProperties: false,
  properties: locationFields,
};
/** PUT /api/inventory/locations/{id} body: any field; a field left out keeps its value. */
export const locationUpdateBody: Schema = { type: 'object', additionalProperties: false, properties: locationFields };
/** GET /api/inventory/locations query. */
export const locationListQuery: Schema = pageQuery(20, {
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of name or address.' },
  type: { type: 'string', enum: ['warehouse', 'pop', 'technician'] },
  holder_user_id: ID,
  is_active: BOOL,
});
/** A location as the API answers it. */
export const locationRead: Schema = {
  type: 'object',
  required: ['id', 'name', 'type'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    type: { type: 'string' },
    holder_user_id: { type: ['integer', 'null'] },
    holder: { type: ['object', 'null'], properties: { id: { type: 'integer' }, name: { type: 'string' } } },
    address: nullableString,
    is_active: { type: 'boolean' },
    created_at: stamp,
    updated_at: stamp,
  },
};
export const locationOne: Schema = { type: 'object', required: ['data'], properties: { data: locationRead } };
export const locationList: Schema = listEnvelope(locationRead);
