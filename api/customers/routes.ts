import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import type { AppContext } from '../context.js';
import { idParams } from '../shared/schemas.js';
import {
  customerAccepted,
  customerAdminCreateBody,
  customerAdminList,
  customerAdminListQuery,
  customerAdminOne,
  customerAdminUpdateBody,
  customerStatusBody,
} from './schemas.js';
import { listAdminCustomers, type CustomerAdminListQuery } from './list.js';
import {
  changeCustomerStatus,
  createAdminCustomer,
  customerAdminById,
  requestCustomerSync,
  updateAdminCustomer,
  type CustomerAdminInput,
} from './service.js';
import type { CustomerStatus } from './network-state.js';

/** Guards every customer route shares: a login token of a tenant user. */
const base = { tag: 'customers', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not a customer of the tenant' } };
const queueDown = {
  503: { description: 'QUEUE_UNAVAILABLE: the job queue (Redis) did not take the network push; nothing was changed' },
};
const actorOf = (ctx: AppContext) => ({ userId: ctx.state.auth!.userId, ip: ctx.ip });

/**
 * Admin customers (issue 8 item 2): reads need customers.view, writes customers.manage. The status
 * and the network sync have their own endpoints (202: the row changes at once, the customer-network
 * job pushes it to the NAS); both are demo-blocked (they reach a real NAS).
 */
export const customerRoutes: AnyWebRoute[] = [
  webRoute<Input, CustomerAdminListQuery>({
    ...base,
    method: 'get',
    path: '/api/customers',
    permission: 'customers.view',
    query: customerAdminListQuery,
    summary: 'List customers, newest first; filters search, status, package_id, service_type, billing_cycle, nas_id',
    responses: { 200: { description: 'Page of customers', schema: customerAdminList } },
    async handler(ctx) {
      ctx.body = await listAdminCustomers(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, CustomerAdminInput>({
    ...base,
    method: 'post',
    path: '/api/customers',
    permission: 'customers.manage',
    body: customerAdminCreateBody,
    summary: 'Create a customer (a customer on a NAS gets its first network push)',
    responses: {
      201: { description: 'The new customer', schema: customerAdminOne },
      409: { description: 'CONFLICT: the pppoe_username exists in the tenant' },
      ...queueDown,
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = await createAdminCustomer(
        scope,
        ctx.deps.queues,
        ctx.deps.config.appKey,
        actorOf(ctx),
        ctx.state.body,
      );
      ctx.status = 201;
      ctx.body = { data: await customerAdminById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/customers/:id',
    permission: 'customers.view',
    params: idParams,
    summary: 'Show a customer with its latest invoices and tickets',
    responses: { 200: { description: 'The customer', schema: customerAdminOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await customerAdminById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, CustomerAdminInput>({
    ...base,
    method: 'put',
    path: '/api/customers/:id',
    permission: 'customers.manage',
    params: idParams,
    body: customerAdminUpdateBody,
    summary: 'Update a customer (fields left out keep their value; not its status)',
    responses: {
      200: { description: 'The updated customer', schema: customerAdminOne },
      ...notFound,
      409: { description: 'CONFLICT: another customer has the pppoe_username' },
      ...queueDown,
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      await updateAdminCustomer(scope, ctx.deps.queues, ctx.deps.config.appKey, actorOf(ctx), id, ctx.state.body);
      ctx.body = { data: await customerAdminById(scope, id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, { status: CustomerStatus; reason?: string | null }>({
    ...base,
    method: 'post',
    path: '/api/customers/:id/status',
    permission: 'customers.manage',
    params: idParams,
    body: customerStatusBody,
    demoAction: 'customers.status.update',
    summary: 'Change the status (active <-> suspended, -> terminated): 202, the NAS follows through customer-network',
    responses: {
      202: { description: 'The customer in its new status and its network push job', schema: customerAccepted },
      ...notFound,
      ...queueDown,
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      const { status, reason } = ctx.state.body;
      const jobId = await changeCustomerStatus(scope, ctx.deps.queues, actorOf(ctx), id, status, reason);
      ctx.status = 202;
      ctx.body = { data: await customerAdminById(scope, id), job_id: jobId };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'post',
    path: '/api/customers/:id/network-sync',
    permission: 'customers.manage',
    params: idParams,
    demoAction: 'customers.network_sync',
    summary: "Push the customer's latest state to its NAS again (202; retries a failed sync)",
    responses: {
      202: { description: 'The customer and its new network push job', schema: customerAccepted },
      ...notFound,
      ...queueDown,
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      const jobId = await requestCustomerSync(scope, ctx.deps.queues, actorOf(ctx), id);
      ctx.status = 202;
      ctx.body = { data: await customerAdminById(scope, id), job_id: jobId };
    },
  }),
];
