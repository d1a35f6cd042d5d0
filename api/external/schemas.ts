import { SINGLE_LINE_PATTERN, type Schema } from '../http/validation.js';
import { pageQuery } from '../shared/schemas.js';

/**
 * JSON schemas of the External v1 API (document 1): query strings, create payloads and read
 * shapes. They validate requests (api/http/route.ts) and feed the OpenAPI document.
 */

/** Default per_page of every external list (DESIGN.md §4). */
export const EXTERNAL_PER_PAGE = 15;

/** Customer status values (document 1 "States and transitions"). */
export const CUSTOMER_STATUSES = ['active', 'suspended', 'terminated'] as const;
/** Customer service types (document 1 customer create payload); dhcp and static need a MAC. */
export const SERVICE_TYPES = ['pppoe', 'hotspot', 'dhcp', 'static'] as const;
/** Customer billing cycles (document 1 customer create payload). */
export const BILLING_CYCLES = ['prepaid', 'prepaid_rolling', 'postpaid'] as const;
/** Invoice status values: document 1 names unpaid and overdue; paid and cancelled complete the life cycle. */
export const INVOICE_STATUSES = ['unpaid', 'paid', 'overdue', 'cancelled'] as const;
/** OLT status values (DESIGN.md §6). */
export const OLT_STATUSES = ['online', 'offline'] as const;
/** ONU status values (DESIGN.md §6). */
export const ONU_STATUSES = ['online', 'offline', 'los', 'power_fail'] as const;

const ts: Schema = { type: 'string', format: 'date-time' };
const tsOrNull: Schema = { type: ['string', 'null'], format: 'date-time' };
/** Strings never carry NUL (PostgreSQL refuses it in text) nor, in one-line fields, control characters. */
const NO_NUL = '^[^\\u0000]*$';
const ONE_LINE = SINGLE_LINE_PATTERN;
/** A one-line string of at most `max` characters (`min` 1 for required text). */
const line = (max: number, min = 0): Schema => ({
  type: 'string',
  maxLength: max,
  ...(min ? { minLength: min } : {}),
  pattern: ONE_LINE,
});
const lineOrNull = (max: number): Schema => ({ ...line(max), type: ['string', 'null'] });
const textOrNull = (max: number): Schema => ({ type: ['string', 'null'], maxLength: max, pattern: NO_NUL });
const search: Schema = { ...line(100), description: 'Text search (see the endpoint).' };
const updatedSince: Schema = {
  ...ts,
  description: 'ISO 8601 date-time with offset; records with updated_at >= value.',
};
const foreignId: Schema = { type: 'integer', minimum: 1, maximum: 2147483647 };

// ---- list queries ----------------------------------------------------------------------------

/** GET /customers query: page, per_page (1..100, default 15), search, status, updated_since. */
export const customerListQuery = pageQuery(EXTERNAL_PER_PAGE, {
  search: { ...search, description: 'Prefix match of every word on name, code, phone and e-mail.' },
  status: { type: 'string', enum: [...CUSTOMER_STATUSES] },
  updated_since: updatedSince,
});

/** GET /packages query: page, per_page, search, is_active (true, false, 1, 0). */
export const packageListQuery = pageQuery(EXTERNAL_PER_PAGE, {
  search: { ...search, description: 'Substring of the package name.' },
  is_active: { type: 'string', enum: ['true', 'false', '1', '0'] },
});

/** GET /invoices query: page, per_page, search, status, customer_id, updated_since. */
export const invoiceListQuery = pageQuery(EXTERNAL_PER_PAGE, {
  search: { ...search, description: "Substring of the invoice number or of the customer's name or code." },
  status: { type: 'string', enum: [...INVOICE_STATUSES] },
  customer_id: foreignId,
  updated_since: updatedSince,
});

/** GET /tickets query: page, per_page, search, status, priority, customer_id. */
export const ticketListQuery = pageQuery(EXTERNAL_PER_PAGE, {
  search: {
    ...search,
    description: 'Substring of the ticket number, type, external id, contact name or customer name.',
  },
  status: { type: 'string', enum: ['open', 'inprogress', 'resolved', 'closed'] },
  priority: { type: 'string', enum: ['high', 'medium', 'low'] },
  customer_id: foreignId,
});

/** GET /olts query: page, per_page, search, status. */
export const oltListQuery = pageQuery(EXTERNAL_PER_PAGE, {
  search: { ...search, description: 'Substring of the name, IP address, location, vendor or model.' },
  status: { type: 'string', enum: [...OLT_STATUSES] },
});

/** GET /onus query (active ONUs only): page, per_page, search, status, customer_id, olt_id. */
export const onuListQuery = pageQuery(EXTERNAL_PER_PAGE, {
  search: { ...search, description: 'Substring of the serial number.' },
  status: { type: 'string', enum: [...ONU_STATUSES] },
  customer_id: foreignId,
  olt_id: foreignId,
});

// ---- create payloads --------------------------------------------------------------------------

/** Customer create payload (document 1) plus `mac_address` (DESIGN.md §6). */
export const customerCreateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'phone', 'address'],
  properties: {
    name: line(190, 1),
    phone: line(40, 1),
    email: { type: ['string', 'null'], format: 'email', maxLength: 190 },
    address: { type: 'string', minLength: 1, maxLength: 1000, pattern: NO_NUL },
    latitude: { type: ['number', 'null'], minimum: -90, maximum: 90 },
    longitude: { type: ['number', 'null'], minimum: -180, maximum: 180 },
    package_id: { ...foreignId, type: ['integer', 'null'] },
    status: { type: ['string', 'null'], enum: [...CUSTOMER_STATUSES, null] },
    service_type: { type: ['string', 'null'], enum: [...SERVICE_TYPES, null] },
    billing_cycle: { type: ['string', 'null'], enum: [...BILLING_CYCLES, null] },
    mac_address: {
      type: ['string', 'null'],
      maxLength: 64,
      description:
        'Required for service_type dhcp and static. AA:BB:CC:DD:EE:FF, AABB.CCDD.EEFF or AABBCCDDEEFF; stored as AA:BB:CC:DD:EE:FF.',
    },
  },
};

/** Ticket create payload (document 1). */
export const ticketCreateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: line(190, 1),
    customer_id: { ...foreignId, type: ['integer', 'null'] },
    onu_id: { ...foreignId, type: ['integer', 'null'] },
    priority: { type: ['string', 'null'], enum: ['high', 'medium', 'low', null] },
    status: { type: ['string', 'null'], enum: ['open', 'inprogress', null] },
    description: textOrNull(10000),
    location_text: textOrNull(1000),
    contact_name: lineOrNull(190),
    contact_phone: lineOrNull(40),
    external_id: lineOrNull(190),
  },
};

// ---- read shapes ------------------------------------------------------------------------------

const ref = (props: Record<string, Schema>): Schema => ({ type: ['object', 'null'], properties: props });

/** The tenant in health and me answers: id, slug, name, demo_mode. */
export const tenantRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    slug: { type: 'string' },
    name: { type: 'string' },
    demo_mode: { type: 'boolean' },
  },
};

/** Customer read shape (document 1) + mac_address; package `{id, name}` and onu (rx/tx power in dBm) or null. */
export const customerRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    code: { type: 'string' },
    name: { type: 'string' },
    email: { type: ['string', 'null'] },
    phone: { type: 'string' },
    status: { type: 'string', enum: [...CUSTOMER_STATUSES] },
    service_type: { type: 'string', enum: [...SERVICE_TYPES] },
    customer_tier: { type: 'string' },
    address: { type: 'string' },
    latitude: { type: ['number', 'null'] },
    longitude: { type: ['number', 'null'] },
    billing_cycle: { type: 'string', enum: [...BILLING_CYCLES] },
    billing_day: { type: ['integer', 'null'] },
    mac_address: { type: ['string', 'null'] },
    package: ref({ id: { type: 'integer' }, name: { type: 'string' } }),
    onu: ref({
      id: { type: 'integer' },
      serial_number: { type: 'string' },
      status: { type: 'string', enum: [...ONU_STATUSES] },
      rx_power: { type: ['number', 'null'], description: 'dBm' },
      tx_power: { type: ['number', 'null'], description: 'dBm' },
      last_seen: tsOrNull,
    }),
    created_at: ts,
    updated_at: ts,
  },
};

/** Invoice read shape (document 1) + updated_at; amount a JSON number, dates YYYY-MM-DD. */
export const invoiceRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    invoice_number: { type: 'string' },
    customer_id: { type: 'integer' },
    customer: ref({ id: { type: 'integer' }, code: { type: 'string' }, name: { type: 'string' } }),
    package_id: { type: ['integer', 'null'] },
    amount: { type: 'number' },
    status: { type: 'string', enum: [...INVOICE_STATUSES] },
    due_date: { type: 'string', format: 'date' },
    paid_at: tsOrNull,
    period_start: { type: ['string', 'null'], format: 'date' },
    period_end: { type: ['string', 'null'], format: 'date' },
    created_at: ts,
    updated_at: ts,
  },
};

/** GET /customers/{id}: the read shape + latest_invoices and latest_tickets (5 each, newest first; DESIGN.md §6). */
export const customerDetailRead: Schema = {
  ...customerRead,
  properties: {
    ...(customerRead.properties as Record<string, Schema>),
    latest_invoices: { type: 'array', items: invoiceRead, description: 'The 5 newest invoices.' },
    latest_tickets: {
      type: 'array',
      items: { type: 'object' },
      description: 'The 5 newest tickets (ticket read shape).',
    },
  },
};

/** Package read shape (DESIGN.md §6): price a JSON number, speeds in kbit/s. */
export const packageRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    price: { type: 'number' },
    speed_down_kbps: { type: 'integer' },
    speed_up_kbps: { type: 'integer' },
    service_type: { type: 'string' },
    is_active: { type: 'boolean' },
    is_partner_package: { type: 'boolean' },
    created_at: ts,
    updated_at: ts,
  },
};

/** OLT read shape (DESIGN.md §6). */
export const oltRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    vendor: { type: ['string', 'null'] },
    model: { type: ['string', 'null'] },
    ip_address: { type: ['string', 'null'] },
    location: { type: ['string', 'null'] },
    status: { type: 'string', enum: [...OLT_STATUSES] },
    pon_ports: { type: 'integer' },
    created_at: ts,
    updated_at: ts,
  },
};

/** ONU read shape (document 1): rx/tx power in dBm, bandwidth_pct in percent, uptime in seconds. */
export const onuRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    customer_id: { type: ['integer', 'null'] },
    customer: ref({ id: { type: 'integer' }, code: { type: 'string' }, name: { type: 'string' } }),
    olt: ref({ id: { type: 'integer' }, name: { type: 'string' } }),
    serial_number: { type: 'string' },
    pon_port: { type: ['string', 'null'] },
    rx_power: { type: ['number', 'null'], description: 'dBm' },
    tx_power: { type: ['number', 'null'], description: 'dBm' },
    bandwidth_pct: { type: ['number', 'null'], description: 'percent' },
    status: { type: 'string', enum: [...ONU_STATUSES] },
    uptime: { type: ['integer', 'null'], description: 'seconds' },
    last_seen: tsOrNull,
    created_at: ts,
    updated_at: ts,
  },
};

/** GET /health answer (DESIGN.md §6): `{status: "ok", tenant, api_version: "v1", time}`. */
export const healthRead: Schema = {
  type: 'object',
  required: ['status', 'tenant', 'api_version', 'time'],
  properties: {
    status: { type: 'string', enum: ['ok'] },
    tenant: tenantRead,
    api_version: { type: 'string', enum: ['v1'] },
    time: ts,
  },
};

/** GET /me answer (DESIGN.md §6): tenant, the token's owner (null when deleted) and the token (never its secret). */
export const meRead: Schema = {
  type: 'object',
  required: ['tenant', 'user', 'token'],
  properties: {
    tenant: tenantRead,
    user: ref({ id: { type: 'integer' }, name: { type: 'string' }, email: { type: 'string' } }),
    token: {
      type: 'object',
      properties: {
        id: { type: 'integer' },
        name: { type: 'string' },
        access: { type: 'string', enum: ['read', 'read_write'] },
        abilities: { type: 'array', items: { type: 'string' } },
        expires_at: tsOrNull,
      },
    },
  },
};

/** `{data: <schema>}` (details and create responses). */
export function dataOf(schema: Schema): Schema {
  return { type: 'object', required: ['data'], properties: { data: schema } };
}
