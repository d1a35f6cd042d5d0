import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import {
  BILLING_CYCLES,
  CUSTOMER_STATUSES,
  SERVICE_TYPES,
  customerCreateBody,
  customerRead,
  invoiceRead,
} from '../external/schemas.js';

/**
 * JSON schemas of the admin customers (issue 8 item 2): document 1's customer fields +
 * mac_address (DESIGN.md §6), billing_day, nas_id, pppoe_username and the write-only pppoe_password;
 * the read shape adds the NAS, `pppoe_password_set`, the suspension and the network sync state.
 */

/** Default per_page of GET /api/customers (issue 8: admin lists 20). */
export const CUSTOMERS_PER_PAGE = 20;

const id: Schema = { type: 'integer', minimum: 1, maximum: 2147483647 };
const idOrNull: Schema = { ...id, type: ['integer', 'null'] };
const external = customerCreateBody.properties as Record<string, Schema>;

/** Fields of the admin customer body (both POST and PUT). */
const fields: Record<string, Schema> = {
  ...external,
  billing_day: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 28,
    description: 'Day of the month the billing period starts (1-28); null: the 1st.',
  },
  nas_id: { ...idOrNull, description: 'The NAS (router_id) the customer connects through: a NAS of the tenant.' },
  pppoe_username: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: 64,
    pattern: '^[A-Za-z0-9][A-Za-z0-9._@+-]*$',
    description:
      'PPPoE login on the NAS; unique in the tenant in any case (409). Required for pppoe and hotspot customers with a NAS.',
  },
  pppoe_password: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: 128,
    ...singleLine,
    writeOnly: true,
    description:
      'Write-only: sealed at rest, never answered (the read shape says pppoe_password_set). Null removes it.',
  },
};

/** POST /api/customers body: name, phone, address required; `status` as document 1 (default active). */
export const customerAdminCreateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'phone', 'address'],
  properties: fields,
};

/**
 * PUT /api/customers/{id} body: the fields it carries change, the others keep their value (null
 * clears a nullable one). `status` is declared only so that it is refused with 422 naming
 * POST /api/customers/{id}/status.
 */
export const customerAdminUpdateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...fields,
    status: { description: 'Not accepted: change the status with POST /api/customers/{id}/status.' },
  },
};

/** POST /api/customers/{id}/status body. */
export const customerStatusBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    status: {
      type: 'string',
      enum: [...CUSTOMER_STATUSES],
      description: 'active <-> suspended; active or suspended -> terminated (final).',
    },
    reason: { type: ['string', 'null'], maxLength: 500, ...singleLine, description: 'Why (kept and audited).' },
  },
};

/** GET /api/customers query: page, per_page (20), search, status, package_id, service_type, billing_cycle, nas_id. */
export const customerAdminListQuery: Schema = pageQuery(CUSTOMERS_PER_PAGE, {
  search: {
    type: 'string',
    maxLength: 100,
    ...singleLine,
    description: 'Prefix match of every word on name, code, phone and e-mail (as document 1).',
  },
  status: { type: 'string', enum: [...CUSTOMER_STATUSES] },
  package_id: id,
  service_type: { type: 'string', enum: [...SERVICE_TYPES] },
  billing_cycle: { type: 'string', enum: [...BILLING_CYCLES] },
  nas_id: id,
});

const tsOrNull: Schema = { type: ['string', 'null'], format: 'date-time' };

/** The network sync state of a customer (job customer-network). */
export const networkRead: Schema = {
  type: 'object',
  required: ['sync_status', 'state', 'error'],
  properties: {
    sync_status: {
      type: 'string',
      enum: ['none', 'pending', 'synced', 'failed'],
      description: 'none: nothing to push (no NAS); pending: a push is queued; synced; failed (see error).',
    },
    state: {
      type: ['string', 'null'],
      enum: ['active', 'isolated', 'removed', null],
      description: 'What the NAS holds after the last successful push (null: never pushed).',
    },
    error: { type: ['string', 'null'], description: 'Why the last push failed (a fixed text).' },
    nas_id: { type: ['integer', 'null'], description: 'The NAS holding the session after the last push.' },
    version: { type: 'integer', description: 'The version of the latest network-relevant change.' },
    requested_at: { ...tsOrNull, description: 'When the pending push was asked for.' },
    synced_at: { ...tsOrNull, description: 'When the last push succeeded.' },
  },
};

/** The admin customer read shape: document 1's + NAS, PPPoE login, suspension and network state. */
export const customerAdminRead: Schema = {
  ...customerRead,
  properties: {
    ...(customerRead.properties as Record<string, Schema>),
    nas_id: { type: ['integer', 'null'] },
    nas: {
      type: ['object', 'null'],
      properties: { id: { type: 'integer' }, name: { type: 'string' }, nas_key: { type: 'string' } },
    },
    pppoe_username: { type: ['string', 'null'] },
    pppoe_password_set: { type: 'boolean', description: 'Whether a PPPoE password is stored (it is never shown).' },
    suspend_reason: {
      type: ['string', 'null'],
      enum: ['manual', 'overdue', null],
      description: 'Why a suspended customer is suspended: manual (status endpoint) or overdue (billing).',
    },
    status_reason: { type: ['string', 'null'], description: 'The reason given with the last status change.' },
    status_changed_at: tsOrNull,
    network: networkRead,
  },
};

/** GET /api/customers/{id} (and the answers of POST and PUT): + latest_invoices and latest_tickets (5 each). */
export const customerAdminDetail: Schema = {
  ...customerAdminRead,
  properties: {
    ...(customerAdminRead.properties as Record<string, Schema>),
    latest_invoices: { type: 'array', items: invoiceRead, description: 'The 5 newest invoices.' },
    latest_tickets: { type: 'array', items: { type: 'object' }, description: 'The 5 newest tickets.' },
  },
};

/** `{data: customer detail}`. */
export const customerAdminOne: Schema = {
  type: 'object',
  required: ['data'],
  properties: { data: customerAdminDetail },
};

/** 202 of the status and network-sync endpoints: the customer and its push job (null: nothing to push). */
export const customerAccepted: Schema = {
  type: 'object',
  required: ['data', 'job_id'],
  properties: {
    data: customerAdminDetail,
    job_id: {
      type: ['string', 'null'],
      description:
        'The customer-network job (bull-board), customer-network-<tenant>-<customer>-v<version>; null when the customer has no NAS.',
    },
  },
};

/** The list envelope of admin customers. */
export const customerAdminList: Schema = listEnvelope(customerAdminRead);
