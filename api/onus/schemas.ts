import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { onuRead, ONU_STATUSES } from '../external/schemas.js';

const id = (description: string): Schema => ({ type: 'integer', minimum: 1, maximum: 2147483647, description });
const nullableId = (description: string): Schema => ({ ...id(description), type: ['integer', 'null'] });

/** Fields of an ONU body (issue 8 item 3). The readings (status, powers, uptime) come from onu-poll. */
const fields: Record<string, Schema> = {
  serial_number: {
    type: 'string',
    minLength: 4,
    maxLength: 32,
    pattern: '^[A-Za-z0-9-]+$',
    description: 'GPON/EPON serial, e.g. ZTEG1A2B3C4D; stored upper-case; unique in the tenant (409).',
  },
  olt_id: nullableId('An OLT of the tenant.'),
  customer_id: nullableId('A customer of the tenant.'),
  pon_port: {
    type: ['string', 'null'],
    maxLength: 20,
    ...singleLine,
    description: 'e.g. 1/1/3 (frame/slot/port).',
  },
  is_active: { type: 'boolean', description: 'Inactive ONUs are not polled and not shown by the external API.' },
};

/** POST /api/onus body: serial_number required. */
export const onuCreateBody: Schema = {
  type: 'object',
  required: ['serial_number'],
  additionalProperties: false,
  properties: fields,
};

/**
 * PUT /api/onus/{id} body: any of the fields; a field left out keeps its value. `status` is not
 * accepted (it comes from the polls); it is declared only so that the refusal can say so.
 */
export const onuUpdateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...fields, status: { description: 'Not accepted: the status comes from the onu-poll job.' } },
};

/** GET /api/onus query: page, per_page (20), search (serial), status, olt_id, customer_id, is_active. */
export const onuAdminListQuery: Schema = pageQuery(20, {
  search: { type: 'string', maxLength: 100, ...singleLine, description: 'Substring of the serial number.' },
  status: { type: 'string', enum: [...ONU_STATUSES] },
  olt_id: id('Only ONUs of this OLT.'),
  customer_id: id('Only ONUs of this customer.'),
  is_active: { type: 'boolean' },
});

/** An ONU as the admin API answers it: the external read shape + olt_id and is_active. */
export const onuAdminRead: Schema = {
  type: 'object',
  properties: {
    ...(onuRead.properties as Record<string, Schema>),
    olt_id: { type: ['integer', 'null'] },
    is_active: { type: 'boolean' },
  },
};

/** `{data: ONU}`. */
export const onuOne: Schema = { type: 'object', required: ['data'], properties: { data: onuAdminRead } };

/** The list envelope of ONUs. */
export const onuAdminList: Schema = listEnvelope(onuAdminRead);
