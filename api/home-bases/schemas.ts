import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';

/** Fields of a home base (issue 8 item 3; document 2 leaves the body "not shown"). */
const fields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
  address: { type: 'string', minLength: 1, maxLength: 1000 },
  latitude: { type: 'number', minimum: -90, maximum: 90, description: 'Degrees (WGS 84), -90..90.' },
  longitude: { type: 'number', minimum: -180, maximum: 180, description: 'Degrees (WGS 84), -180..180.' },
  inventory_location_ids: {
    type: 'array',
    maxItems: 100,
    uniqueItems: true,
    items: { type: 'integer', minimum: 1, maximum: 2147483647 },
    description:
      'Issue 16 item 5: the warehouse or POP locations of this home base (replaces the mapping; [] removes it; left out: unchanged).',
  },
};

/** POST /api/home-bases/{id}/inventory-locations body (admin-api.md "home base mapping"). */
export const homeBaseLocationsBody: Schema = {
  type: 'object',
  required: ['inventory_location_ids'],
  additionalProperties: false,
  properties: { inventory_location_ids: fields.inventory_location_ids },
};

/** POST /api/home-bases body: name, address, latitude and longitude, all required. */
export const homeBaseCreateBody: Schema = {
  type: 'object',
  required: ['name', 'address', 'latitude', 'longitude'],
  additionalProperties: false,
  properties: fields,
};

/** PUT /api/home-bases/{id} body: any of the fields; a field left out keeps its value. */
export const homeBaseUpdateBody: Schema = { type: 'object', additionalProperties: false, properties: fields };

/** GET /api/home-bases query: page, per_page (20), search (name or address). */
export const homeBaseListQuery: Schema = pageQuery(20, {
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of the name or address.' },
});

/** A home base as the API answers it. */
export const homeBaseRead: Schema = {
  type: 'object',
  required: ['id', 'name', 'address', 'latitude', 'longitude'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    address: { type: 'string' },
    latitude: { type: 'number', description: 'Degrees (WGS 84).' },
    longitude: { type: 'number', description: 'Degrees (WGS 84).' },
    inventory_location_ids: {
      type: 'array',
      items: { type: 'integer' },
      description: 'The mapped warehouse or POP locations (issue 16 item 5), ascending.',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** `{data: home base}`. */
export const homeBaseOne: Schema = { type: 'object', required: ['data'], properties: { data: homeBaseRead } };

/** The list envelope of home bases. */
export const homeBaseList: Schema = listEnvelope(homeBaseRead);
