import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { E164 } from '../users/schemas.js';

/** JSON schemas of the suppliers (issue 16 item 1). */

const text = (max: number) => ({ type: ['string', 'null'], maxLength: max, ...singleLine });
const stamp = { type: 'string', format: 'date-time' } as const;

const fields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 150, ...singleLine },
  contact: { ...text(150), description: 'Contact person.' },
  phone: { type: ['string', 'null'], pattern: E164, description: 'E.164, e.g. +6281234567890.' },
  email: { type: ['string', 'null'], format: 'email', maxLength: 254 },
  address: { type: ['string', 'null'], maxLength: 500 },
  is_active: { type: 'boolean' },
};

/** POST /api/suppliers body: name required. */
export const supplierCreateBody: Schema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: fields,
};
/** PUT /api/suppliers/{supplier} body: any field; a field left out keeps its value. */
export const supplierUpdateBody: Schema = { type: 'object', additionalProperties: false, properties: fields };

/** Path `{supplier}`. */
export const supplierParams: Schema = {
  type: 'object',
  required: ['supplier'],
  additionalProperties: false,
  properties: { supplier: { type: 'integer', minimum: 1, maximum: 2147483647 } },
};

/** GET /api/suppliers query. */
export const supplierListQuery: Schema = pageQuery(20, {
  search: {
    type: 'string',
    maxLength: 100,
    ...singleLine,
    description: 'Substring of name, contact, phone or e-mail.',
  },
  is_active: { type: 'boolean' },
});

/** A supplier as the API answers it. */
export const supplierRead: Schema = {
  type: 'object',
  required: ['id', 'name'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    contact: { type: ['string', 'null'] },
    phone: { type: ['string', 'null'] },
    email: { type: ['string', 'null'] },
    address: { type: ['string', 'null'] },
    is_active: { type: 'boolean' },
    items_count: { type: 'integer', description: 'Items with a buy price at this supplier.' },
    created_at: stamp,
    updated_at: stamp,
  },
};
export const supplierOne: Schema = { type: 'object', required: ['data'], properties: { data: supplierRead } };
export const supplierList: Schema = listEnvelope(supplierRead);

/** GET /api/suppliers/{supplier}/items query. */
export const supplierItemQuery: Schema = pageQuery(20, {
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of the item name or sku.' },
});
/** The buy prices of a supplier. */
export const supplierItemList: Schema = listEnvelope({
  type: 'object',
  properties: {
    item_id: { type: 'integer' },
    item: {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        name: { type: 'string' },
        sku: { type: ['string', 'null'] },
        category: { type: ['string', 'null'] },
        unit: { type: 'string' },
        sell_price: { type: 'number' },
        is_active: { type: 'boolean' },
      },
    },
    cost_price: { type: 'number', description: 'The buy price at this supplier.' },
    updated_at: stamp,
  },
});
