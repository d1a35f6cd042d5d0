import { webRoute, type AnyWebRoute } from '../../http/web-route.js';
import type { Input } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { idParams } from '../../shared/schemas.js';
import { inventoryBase } from '../routes.js';
import {
  cancelBody,
  pendingCountOne,
  processBody,
  reasonBody,
  requestCreateBody,
  requestList,
  requestListQuery,
  requestOne,
  requestUpdateBody,
} from './schemas.js';
import {
  createRequest,
  listRequests,
  pendingCount,
  requestById,
  updateRequest,
  type RequestInput,
  type RequestListQuery,
  type Requester,
} from './service.js';
import { transitionRequest, type ProcessInput, type RequestAction } from './transitions.js';

/** The caller as a requester: a manager holds inventory.manage. */
const who = (ctx: AppContext): Requester => ({
  userId: ctx.state.auth!.userId,
  manager: ctx.state.auth!.permissions.includes('inventory.manage'),
  ip: ctx.ip,
});
const notFound = {
  404: { description: "Not a request of the tenant (or, for a user without inventory.manage, not the caller's own)" },
};
const refused = {
  422: { description: 'VALIDATION_FAILED, or INVALID_TRANSITION (the request is in a state that does not allow it)' },
};

/** One POST /api/inventory/requests/{id}/<action> route. */
function action(
  name: RequestAction,
  permission: 'inventory.view' | 'inventory.manage',
  summary: string,
  body?: Record<string, unknown>,
  extra422 = '',
): AnyWebRoute {
  return webRoute<{ id: number }, Record<string, never>, { reason?: string | null } & ProcessInput>({
    ...inventoryBase,
    method: 'post',
    path: `/api/inventory/requests/:id/${name}`,
    permission,
    params: idParams,
    ...(body ? { body } : {}),
    summary,
    responses: {
      200: { description: 'The request in its new state', schema: requestOne },
      ...notFound,
      422: { description: `${refused[422].description}${extra422}` },
    },
    async handler(ctx) {
      const w = who(ctx);
      await transitionRequest(ctx.state.scope!, w, ctx.state.params.id, name, ctx.state.body ?? {});
      ctx.body = { data: await requestById(ctx.state.scope!, w, ctx.state.params.id) };
    },
  });
}

/**
 * Inventory requests (issue 16 item 4): inventory.view reads and works the caller's own requests
 * (create, edit, submit, complete, cancel); inventory.manage sees all and decides (approve, reject,
 * defer, resume, process).
 */
export const inventoryRequestRoutes: AnyWebRoute[] = [
  webRoute({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/requests/pending-count',
    permission: 'inventory.view',
    summary: 'Badge count: managers pending + approved requests of the tenant, others their own pending ones',
    responses: { 200: { description: '{data: {count}}', schema: pendingCountOne } },
    async handler(ctx) {
      ctx.body = { data: { count: await pendingCount(ctx.state.scope!, who(ctx)) } };
    },
  }),
  webRoute<Input, RequestListQuery>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/requests',
    permission: 'inventory.view',
    query: requestListQuery,
    summary:
      'List requests, newest first (non-managers: their own); filters status, type, reference_type, reference_id, mine',
    responses: { 200: { description: 'Page of requests', schema: requestList } },
    async handler(ctx) {
      ctx.body = await listRequests(ctx.state.scope!, who(ctx), ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, RequestInput>({
    ...inventoryBase,
    method: 'post',
    path: '/api/inventory/requests',
    permission: 'inventory.view',
    body: requestCreateBody,
    summary: 'Create a request (number IR-000001): pending, or draft with draft: true',
    responses: { 201: { description: 'The new request', schema: requestOne } },
    async handler(ctx) {
      const w = who(ctx);
      const id = await createRequest(ctx.state.scope!, w, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await requestById(ctx.state.scope!, w, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/requests/:id',
    permission: 'inventory.view',
    params: idParams,
    summary: 'Show a request with its items and history',
    responses: { 200: { description: 'The request', schema: requestOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await requestById(ctx.state.scope!, who(ctx), ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, RequestInput>({
    ...inventoryBase,
    method: 'put',
    path: '/api/inventory/requests/:id',
    permission: 'inventory.view',
    params: idParams,
    body: requestUpdateBody,
    summary: 'Edit a draft, pending or deferred request (requester or manager); items replace all items',
    responses: { 200: { description: 'The edited request', schema: requestOne }, ...notFound, ...refused },
    async handler(ctx) {
      const w = who(ctx);
      await updateRequest(ctx.state.scope!, w, ctx.state.params.id, ctx.state.body);
      ctx.body = { data: await requestById(ctx.state.scope!, w, ctx.state.params.id) };
    },
  }),
  action('submit', 'inventory.view', 'Submit a draft: draft -> pending (requester or manager)'),
  action(
    'approve',
    'inventory.manage',
    'Approve: pending or deferred -> approved (stock checked at the source, nothing reserved)',
    undefined,
    '; INSUFFICIENT_STOCK with errors["items.N.quantity"]',
  ),
  action('reject', 'inventory.manage', 'Reject: pending -> rejected; reason required', reasonBody),
  action('defer', 'inventory.manage', 'Defer: pending -> deferred; reason required', reasonBody),
  action('resume', 'inventory.manage', 'Resume: deferred -> pending'),
  action(
    'process',
    'inventory.manage',
    'Process: approved -> processing; the stock moves (one mutation per item and direction); serial items need their serials',
    processBody,
    '; INSUFFICIENT_STOCK (nothing moved) with errors["items.N.quantity"] or ["items.N.serials"]',
  ),
  action('complete', 'inventory.view', 'Complete: processing -> completed (requester or manager)'),
  action(
    'cancel',
    'inventory.view',
    'Cancel an open request: draft, pending, deferred, approved -> cancelled',
    cancelBody,
  ),
];
