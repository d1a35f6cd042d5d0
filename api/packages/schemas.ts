import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { dataOf, packageRead, SERVICE_TYPES } from '../external/schemas.js';

/** Default per_page of GET /api/packages (DESIGN.md §4 via issue 8: 20). */
export const PACKAGES_PER_PAGE = 20;

/** Fields of a package body (DESIGN.md §6 "package fields"); POST requires name and price. */
const fields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
  description: { type: ['string', 'null'], maxLength: 5000 },
  price: {
    type: 'number',
    minimum: 0,
    maximum: 999999999999.99,
    description: "Monthly price in the tenant's currency, at most 2 decimals.",
  },
  speed_down_kbps: { type: 'integer', minimum: 0, maximum: 100000000, description: 'Download speed, kbit/s.' },
  speed_up_kbps: { type: 'integer', minimum: 0, maximum: 100000000, description: 'Upload speed, kbit/s.' },
  service_type: { type: 'string', enum: [...SERVICE_TYPES] },
  is_active: { type: 'boolean', description: 'Inactive packages cannot be given to new customers.' },
  is_partner_package: {
    type: 'boolean',
    description: 'Partner-only package (document 2 "partner customer create" requires one).',
  },
};

/** POST /api/packages body: name and price required; speeds 0, service_type pppoe, active, not partner by default. */
export const packageCreateBody: Schema = {
  type: 'object',
  required: ['name', 'price'],
  additionalProperties: false,
  properties: fields,
};

/** PUT /api/packages/{id} body: any of the fields; a field left out keeps its value. */
export const packageUpdateBody: Schema = { type: 'object', additionalProperties: false, properties: fields };

/** GET /api/packages query: page, per_page (20), search (name), is_active, is_partner_package, service_type. */
export const packageAdminListQuery: Schema = pageQuery(PACKAGES_PER_PAGE, {
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of the name or description.' },
  is_active: { type: 'boolean' },
  is_partner_package: { type: 'boolean' },
  service_type: { type: 'string', enum: [...SERVICE_TYPES] },
});

/** `{data: package}` (the read shape of DESIGN.md §6, as document 1 shows it). */
export const packageOne: Schema = dataOf(packageRead);

/** The list envelope of packages. */
export const packageAdminList: Schema = listEnvelope(packageRead);
