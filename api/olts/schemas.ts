import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { oltRead, OLT_STATUSES } from '../external/schemas.js';
import { OLT_DRIVERS } from '../../jobs/adapters/olt/index.js';

const id = (description: string): Schema => ({ type: 'integer', minimum: 1, maximum: 2147483647, description });
const nullableId = (description: string): Schema => ({ ...id(description), type: ['integer', 'null'] });
const lineOrNull = (max: number): Schema => ({ type: ['string', 'null'], maxLength: max, ...singleLine });

/**
 * Write-only device credentials (OLT, NAS): any of username, password, snmp_community. Sealed with
 * APP_KEY at rest, never returned (the read shape says only `has_credentials`); on PUT, left out
 * keeps the stored ones and null removes them.
 */
export const credentialsBody: Schema = {
  type: ['object', 'null'],
  additionalProperties: false,
  minProperties: 1,
  properties: {
    username: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
    password: { type: 'string', minLength: 1, maxLength: 1024 },
    snmp_community: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
  },
  description: 'Write-only: stored encrypted, never returned. PUT: left out keeps them, null removes them.',
};

/** Fields of an OLT body (DESIGN.md §6 OLT fields + issue 8: home_base_id, driver, credentials, is_active). */
const fields: Record<string, Schema> = {
  name: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
  vendor: lineOrNull(60),
  model: lineOrNull(60),
  ip_address: {
    type: 'string',
    anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }],
    maxLength: 45,
    description: 'Management address (IPv4 or IPv6).',
  },
  location: lineOrNull(190),
  pon_ports: { type: 'integer', minimum: 1, maximum: 256, description: 'PON ports (default 16).' },
  home_base_id: nullableId('A home base of the tenant.'),
  driver: {
    type: 'string',
    enum: [...OLT_DRIVERS],
    description: 'The driver that polls it (jobs/adapters/olt); `fake` for now (default).',
  },
  credentials: credentialsBody,
  is_active: { type: 'boolean', description: 'Inactive OLTs are not polled (default true).' },
};

/** POST /api/olts body: name and ip_address required. A new OLT is offline until its first poll. */
export const oltCreateBody: Schema = {
  type: 'object',
  required: ['name', 'ip_address'],
  additionalProperties: false,
  properties: fields,
};

/**
 * PUT /api/olts/{id} body: any of the fields; a field left out keeps its value. `status` is not
 * accepted (it comes from the polls); it is declared only so that the refusal can say so.
 */
export const oltUpdateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...fields, status: { description: 'Not accepted: the status comes from the onu-poll job.' } },
};

/** GET /api/olts query: page, per_page (20), search, status, home_base_id, is_active. */
export const oltAdminListQuery: Schema = pageQuery(20, {
  search: {
    type: 'string',
    maxLength: 100,
    ...singleLine,
    description: 'Substring of name, IP address, location, vendor or model.',
  },
  status: { type: 'string', enum: [...OLT_STATUSES] },
  home_base_id: id('Only OLTs of this home base.'),
  is_active: { type: 'boolean' },
});

/** An OLT as the admin API answers it: the external read shape + the admin fields (never credentials). */
export const oltAdminRead: Schema = {
  type: 'object',
  properties: {
    ...(oltRead.properties as Record<string, Schema>),
    home_base_id: { type: ['integer', 'null'] },
    home_base: {
      type: ['object', 'null'],
      properties: { id: { type: 'integer' }, name: { type: 'string' } },
    },
    driver: { type: 'string' },
    has_credentials: { type: 'boolean', description: 'Whether credentials are stored (they are never shown).' },
    is_active: { type: 'boolean' },
    last_polled_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'The last poll that got an answer or found the OLT unreachable.',
    },
    last_poll_error: {
      type: ['string', 'null'],
      description: 'unreachable, authentication failed or unknown driver; null after a good poll.',
    },
  },
};

/** `{data: OLT}`. */
export const oltOne: Schema = { type: 'object', required: ['data'], properties: { data: oltAdminRead } };

/** The list envelope of OLTs. */
export const oltAdminList: Schema = listEnvelope(oltAdminRead);

/** 202 answer of POST /api/olts/{id}/poll. */
export const oltPollAccepted: Schema = {
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'object',
      required: ['olt_id', 'job_id'],
      properties: {
        olt_id: { type: 'integer' },
        job_id: { type: 'string', description: 'The onu-poll job (bull-board); one per OLT per minute.' },
      },
    },
  },
};
