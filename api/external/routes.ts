import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import type { AppContext } from '../context.js';
import { idParams, listEnvelope } from '../shared/schemas.js';
import { ticketRead } from '../tickets/schemas.js';
import type { TicketInput } from '../tickets/service.js';
import {
  customerCreateBody,
  customerDetailRead,
  customerListQuery,
  customerRead,
  dataOf,
  healthRead,
  invoiceListQuery,
  invoiceRead,
  meRead,
  oltListQuery,
  oltRead,
  onuListQuery,
  onuRead,
  packageListQuery,
  packageRead,
  ticketCreateBody,
  ticketListQuery,
} from './schemas.js';
import { createCustomer, customerById, type CustomerInput } from './customers.js';
import { listCustomers, type CustomerListQuery } from './customer-list.js';
import { invoiceById, listInvoices, type InvoiceListQuery } from './invoices.js';
import { createExternalTicket, listTickets, ticketById, type TicketListQuery } from './tickets.js';
import { listOlts, listOnus, type OltListQuery, type OnuListQuery } from './network.js';
import { listPackages, type PackageListQuery } from './packages.js';
import { health, me } from './meta.js';

const V1 = '/api/external/v1';

/** What every external route shares: integration token, per-token rate limit, OpenAPI tag. */
const base = { tag: 'external', auth: 'integration', rateLimited: true } as const;

const scope = (ctx: AppContext) => ctx.state.scope!;
const notFound = (what: string) => ({ 404: { description: `Not a ${what} of the token's tenant` } });

/**
 * External integration API v1 (document 1): thirteen endpoints, all confined to the tenant of the
 * integration token (TenantScope), rate limited per token; the two creating POSTs honour
 * Idempotency-Key and are blocked for demo-mode tenants. Logic lives in the sibling modules.
 */
export const externalRoutes: AnyWebRoute[] = [
  webRoute({
    ...base,
    method: 'get',
    path: `${V1}/health`,
    access: 'read',
    summary: 'Checks the token, its tenant and the API status',
    responses: { 200: { description: 'OK', schema: healthRead } },
    handler(ctx) {
      ctx.body = health(ctx);
    },
  }),
  webRoute({
    ...base,
    method: 'get',
    path: `${V1}/me`,
    access: 'read',
    summary: "The tenant, the owner user of the token and the token's abilities",
    responses: { 200: { description: 'Caller', schema: meRead } },
    async handler(ctx) {
      ctx.body = await me(ctx);
    },
  }),
  webRoute<Input, CustomerListQuery>({
    ...base,
    method: 'get',
    path: `${V1}/customers`,
    access: 'read',
    query: customerListQuery,
    summary: 'List customers; filters search, status, updated_since',
    responses: { 200: { description: 'Page of customers', schema: listEnvelope(customerRead) } },
    async handler(ctx) {
      ctx.body = await listCustomers(scope(ctx), ctx.state.query);
    },
  }),
  webRoute<Input, Input, CustomerInput>({
    ...base,
    method: 'post',
    path: `${V1}/customers`,
    access: 'write',
    body: customerCreateBody,
    idempotent: true,
    demoAction: 'external.customers.create',
    summary: 'Create a customer (MAC in mac_address, required for dhcp/static); honours Idempotency-Key',
    responses: {
      201: { description: 'Created', schema: dataOf(customerDetailRead) },
      409: { description: 'Idempotency-Key reused with a different body' },
    },
    async handler(ctx) {
      const id = await createCustomer(scope(ctx), ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await customerById(scope(ctx), id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: `${V1}/customers/:id`,
    access: 'read',
    params: idParams,
    summary: 'Customer detail with the latest invoices and tickets',
    responses: { 200: { description: 'Customer', schema: dataOf(customerDetailRead) }, ...notFound('customer') },
    async handler(ctx) {
      ctx.body = { data: await customerById(scope(ctx), ctx.state.params.id) };
    },
  }),
  webRoute<Input, PackageListQuery>({
    ...base,
    method: 'get',
    path: `${V1}/packages`,
    access: 'read',
    query: packageListQuery,
    summary: 'List service packages; filters search, is_active',
    responses: { 200: { description: 'Page of packages', schema: listEnvelope(packageRead) } },
    async handler(ctx) {
      ctx.body = await listPackages(scope(ctx), ctx.state.query);
    },
  }),
  webRoute<Input, InvoiceListQuery>({
    ...base,
    method: 'get',
    path: `${V1}/invoices`,
    access: 'read',
    query: invoiceListQuery,
    summary: 'List invoices; filters search, status, customer_id, updated_since',
    responses: { 200: { description: 'Page of invoices', schema: listEnvelope(invoiceRead) } },
    async handler(ctx) {
      ctx.body = await listInvoices(scope(ctx), ctx.state.query);
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: `${V1}/invoices/:id`,
    access: 'read',
    params: idParams,
    summary: 'Invoice detail',
    responses: { 200: { description: 'Invoice', schema: dataOf(invoiceRead) }, ...notFound('invoice') },
    async handler(ctx) {
      ctx.body = { data: await invoiceById(scope(ctx), ctx.state.params.id) };
    },
  }),
  webRoute<Input, TicketListQuery>({
    ...base,
    method: 'get',
    path: `${V1}/tickets`,
    access: 'read',
    query: ticketListQuery,
    summary: 'List tickets; filters search, status, priority, customer_id',
    responses: { 200: { description: 'Page of tickets', schema: listEnvelope(ticketRead) } },
    async handler(ctx) {
      ctx.body = await listTickets(scope(ctx), ctx.state.query);
    },
  }),
  webRoute<Input, Input, TicketInput>({
    ...base,
    method: 'post',
    path: `${V1}/tickets`,
    access: 'write',
    body: ticketCreateBody,
    idempotent: true,
    demoAction: 'external.tickets.create',
    summary: 'Create a ticket from an external system (source "external"); honours Idempotency-Key',
    responses: {
      201: { description: 'Created', schema: dataOf(ticketRead) },
      409: { description: 'Idempotency-Key reused with a different body' },
    },
    async handler(ctx) {
      const data = await createExternalTicket(scope(ctx), ctx.state.tenant!.settings ?? {}, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: `${V1}/tickets/:id`,
    access: 'read',
    params: idParams,
    summary: 'Ticket detail',
    responses: { 200: { description: 'Ticket', schema: dataOf(ticketRead) }, ...notFound('ticket') },
    async handler(ctx) {
      ctx.body = { data: await ticketById(scope(ctx), ctx.state.params.id) };
    },
  }),
  webRoute<Input, OltListQuery>({
    ...base,
    method: 'get',
    path: `${V1}/olts`,
    access: 'read',
    query: oltListQuery,
    summary: 'List OLTs; filters search, status',
    responses: { 200: { description: 'Page of OLTs', schema: listEnvelope(oltRead) } },
    async handler(ctx) {
      ctx.body = await listOlts(scope(ctx), ctx.state.query);
    },
  }),
  webRoute<Input, OnuListQuery>({
    ...base,
    method: 'get',
    path: `${V1}/onus`,
    access: 'read',
    query: onuListQuery,
    summary: 'List active ONUs; filters search, status, customer_id, olt_id',
    responses: { 200: { description: 'Page of ONUs', schema: listEnvelope(onuRead) } },
    async handler(ctx) {
      ctx.body = await listOnus(scope(ctx), ctx.state.query);
    },
  }),
];
