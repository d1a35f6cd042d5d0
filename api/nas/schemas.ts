import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { credentialsBody } from '../olts/schemas.js';
import { NETWORK_DRIVERS } from '../../jobs/adapters/network/index.js';

/** NAS drivers: the network adapters of jobs/adapters/network (issue 8 item 2, job customer-network). */
export const NAS_DRIVERS = NETWORK_DRIVERS;

/** Fields of a NAS body (issue 8 item 3). */
const fields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
  nas_key: {
    type: 'string',
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
    description: 'Key other systems name the NAS by (partner customer create); unique in the tenant, any case (409).',
  },
  driver: {
    type: 'string',
    enum: [...NAS_DRIVERS],
    description: 'The network adapter that talks to it (default fake).',
  },
  host: {
    type: 'string',
    maxLength: 253,
    anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }, { format: 'hostname' }],
    description: 'IP address or host name of its API.',
  },
  port: { type: 'integer', minimum: 1, maximum: 65535, description: 'TCP port of its API (default 8728).' },
  credentials: credentialsBody,
  isolation_profile: {
    type: ['string', 'null'],
    maxLength: 64,
    ...singleLine,
    description: 'The profile (or address list) isolated customers are put in.',
  },
  is_active: { type: 'boolean', description: 'Inactive NAS take no new customers (default true).' },
};

/** POST /api/nas body: name, nas_key and host required. */
export const nasCreateBody: Schema = {
  type: 'object',
  required: ['name', 'nas_key', 'host'],
  additionalProperties: false,
  properties: fields,
};

/** PUT /api/nas/{id} body: any of the fields; a field left out keeps its value. */
export const nasUpdateBody: Schema = { type: 'object', additionalProperties: false, properties: fields };

/** GET /api/nas query: page, per_page (20), search (name, nas_key, host), is_active. */
export const nasListQuery: Schema = pageQuery(20, {
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of name, nas_key or host.' },
  is_active: { type: 'boolean' },
});

/** A NAS as the API answers it (never its credentials). Its id is the `router_id` of other modules. */
export const nasRead: Schema = {
  type: 'object',
  required: ['id', 'name', 'nas_key'],
  properties: {
    id: { type: 'integer', description: 'Also the router_id other modules refer to (DHCP lease bind).' },
    name: { type: 'string' },
    nas_key: { type: 'string' },
    driver: { type: 'string' },
    host: { type: 'string' },
    port: { type: 'integer' },
    has_credentials: { type: 'boolean', description: 'Whether credentials are stored (they are never shown).' },
    isolation_profile: { type: ['string', 'null'] },
    is_active: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** `{data: NAS}`. */
export const nasOne: Schema = { type: 'object', required: ['data'], properties: { data: nasRead } };

/** The list envelope of NAS. */
export const nasList: Schema = listEnvelope(nasRead);
