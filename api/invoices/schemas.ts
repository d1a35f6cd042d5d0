import { singleLine, type Schema } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { INVOICE_STATUSES, invoiceRead } from '../external/schemas.js';

/** Invoice types (issue 8 item 4): the billing cycle's, POST /api/invoices, and sales orders (later). */
export const INVOICE_TYPES = ['subscription', 'manual', 'sales'] as const;
/** Billing run statuses. */
export const BILLING_RUN_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
/** The earliest as_of a billing run takes. */
export const EARLIEST_AS_OF = '2000-01-01';

const ID = { type: 'integer', minimum: 1, maximum: 2147483647 };
const ts: Schema = { type: 'string', format: 'date-time' };
const tsOrNull: Schema = { type: ['string', 'null'], format: 'date-time' };
const DAY: Schema = { type: 'string', format: 'date' };

/** GET /api/invoices query: page, per_page (20), search, status, customer_id, type. */
export const invoiceListQuery: Schema = pageQuery(20, {
  search: {
    type: 'string',
    maxLength: 100,
    ...singleLine,
    description: "Substring of the invoice number or the customer's name or code (case-insensitive).",
  },
  status: { type: 'string', enum: [...INVOICE_STATUSES] },
  customer_id: ID,
  type: { type: 'string', enum: [...INVOICE_TYPES] },
});

/** POST /api/invoices body: a manual invoice. */
export const invoiceCreateBody: Schema = {
  type: 'object',
  required: ['customer_id', 'amount', 'description'],
  additionalProperties: false,
  properties: {
    customer_id: { ...ID, description: 'A customer of the tenant.' },
    amount: {
      type: ['number', 'string'],
      maxLength: 20,
      description: 'Greater than 0, at most 2 decimals: a JSON number or a decimal string ("150000.50").',
    },
    description: { type: 'string', minLength: 1, maxLength: 500, ...singleLine, description: 'What is charged.' },
    due_date: {
      ...DAY,
      description: "YYYY-MM-DD, not before today in the tenant's zone (default: today + invoice_due_days).",
    },
  },
};

/** POST /api/invoices/{id}/void body. */
export const invoiceVoidBody: Schema = {
  type: 'object',
  required: ['reason'],
  additionalProperties: false,
  properties: {
    reason: { type: 'string', minLength: 1, maxLength: 500, ...singleLine, description: 'Why it is voided (kept).' },
  },
};

/** POST /api/invoices/billing-runs body. */
export const billingRunBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    as_of: {
      ...DAY,
      description: `The day billed, YYYY-MM-DD in the tenant's zone, ${EARLIEST_AS_OF} .. today (default today).`,
    },
  },
};

/** The admin invoice read shape: document 1's + type, description, void_reason, voided_at. */
export const adminInvoiceRead: Schema = {
  ...invoiceRead,
  properties: {
    ...(invoiceRead.properties as Record<string, Schema>),
    type: { type: 'string', enum: [...INVOICE_TYPES] },
    description: { type: ['string', 'null'] },
    void_reason: { type: ['string', 'null'] },
    voided_at: tsOrNull,
  },
};

/** `{data: invoice}`. */
export const invoiceOne: Schema = { type: 'object', required: ['data'], properties: { data: adminInvoiceRead } };
/** The list envelope of invoices. */
export const invoiceList: Schema = listEnvelope(adminInvoiceRead);

/** A billing run as the API answers it. */
export const billingRunRead: Schema = {
  type: 'object',
  required: ['id', 'as_of', 'status', 'created', 'existing', 'skipped'],
  properties: {
    id: { type: 'integer' },
    as_of: DAY,
    trigger: { type: 'string', enum: ['manual', 'schedule'] },
    status: { type: 'string', enum: [...BILLING_RUN_STATUSES] },
    created: { type: 'integer', description: 'Invoices this run created.' },
    existing: { type: 'integer', description: 'Billable customers whose invoice for the period was already there.' },
    skipped: { type: 'integer', description: 'Active or suspended customers not billable (no priced package, ...).' },
    error: { type: ['string', 'null'] },
    job_id: { type: ['string', 'null'] },
    requested_by: { type: ['integer', 'null'] },
    started_at: tsOrNull,
    finished_at: tsOrNull,
    created_at: ts,
    updated_at: ts,
  },
};

/** `{data: run}`. */
export const billingRunOne: Schema = { type: 'object', required: ['data'], properties: { data: billingRunRead } };
