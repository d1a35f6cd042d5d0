import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import { QUEUE as BILLING_CYCLE } from '../../jobs/billing-cycle.js';
import {
  billingRunBody,
  billingRunOne,
  invoiceCreateBody,
  invoiceList,
  invoiceListQuery,
  invoiceOne,
  invoiceVoidBody,
} from './schemas.js';
import {
  createInvoice,
  invoiceById,
  listInvoices,
  voidInvoice,
  type InvoiceInput,
  type InvoiceListQuery,
} from './service.js';
import { billingRunById, requestBillingRun } from './billing-runs.js';

/** Guards every invoice route shares: a login token of a tenant user. */
const base = { tag: 'invoices', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not an invoice of the tenant' } };
const queueDown = { 503: { description: 'QUEUE_UNAVAILABLE: the job queue (Redis) is down; nothing was changed' } };

/**
 * Invoices and billing runs (issue 8 item 4): reads need invoices.view, writes invoices.manage.
 * The literal `/billing-runs` paths never collide with `/{id}` (digits only).
 */
export const invoiceRoutes: AnyWebRoute[] = [
  webRoute<Input, InvoiceListQuery>({
    ...base,
    method: 'get',
    path: '/api/invoices',
    permission: 'invoices.view',
    query: invoiceListQuery,
    summary: 'List invoices, newest first; filters search, status, customer_id, type',
    responses: { 200: { description: 'Page of invoices', schema: invoiceList } },
    async handler(ctx) {
      ctx.body = await listInvoices(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, InvoiceInput>({
    ...base,
    method: 'post',
    path: '/api/invoices',
    permission: 'invoices.manage',
    body: invoiceCreateBody,
    summary: 'Create a manual invoice (type manual, status unpaid, numbered like every invoice)',
    responses: { 201: { description: 'The new invoice', schema: invoiceOne } },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const id = await createInvoice(scope, actor, ctx.state.tenant!, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await invoiceById(scope, id) };
    },
  }),
  webRoute<Input, Record<string, never>, { as_of?: string }>({
    ...base,
    method: 'post',
    path: '/api/invoices/billing-runs',
    permission: 'invoices.manage',
    body: billingRunBody,
    summary: 'Bill the tenant as of a day: enqueues a billing-cycle run (202); a rerun creates only what is missing',
    responses: { 202: { description: 'The queued run', schema: billingRunOne }, ...queueDown },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const queue = ctx.deps.queues.get(BILLING_CYCLE);
      const run = await requestBillingRun(ctx.state.scope!, queue, actor, ctx.state.tenant!, ctx.state.body.as_of);
      ctx.status = 202;
      ctx.body = { data: run };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/invoices/billing-runs/:id',
    permission: 'invoices.view',
    params: idParams,
    summary: 'Show a billing run: status, created, existing, skipped',
    responses: {
      200: { description: 'The billing run', schema: billingRunOne },
      404: { description: 'Not a billing run of the tenant' },
    },
    async handler(ctx) {
      ctx.body = { data: await billingRunById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/invoices/:id',
    permission: 'invoices.view',
    params: idParams,
    summary: 'Show an invoice',
    responses: { 200: { description: 'The invoice', schema: invoiceOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await invoiceById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, { reason: string }>({
    ...base,
    method: 'post',
    path: '/api/invoices/:id/void',
    permission: 'invoices.manage',
    params: idParams,
    body: invoiceVoidBody,
    summary: 'Void an unpaid or overdue invoice: status cancelled, number kept, reason stored',
    responses: { 200: { description: 'The voided invoice', schema: invoiceOne }, ...notFound, ...queueDown },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      await voidInvoice(scope, ctx.deps.queues, actor, id, ctx.state.body.reason);
      ctx.body = { data: await invoiceById(scope, id) };
    },
  }),
];
