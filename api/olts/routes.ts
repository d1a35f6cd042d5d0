import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import { QUEUE as ONU_POLL } from '../../jobs/onu-poll.js';
import { oltAdminList, oltAdminListQuery, oltCreateBody, oltOne, oltPollAccepted, oltUpdateBody } from './schemas.js';
import {
  createOlt,
  listAdminOlts,
  oltById,
  requestOltPoll,
  updateOlt,
  type OltAdminListQuery,
  type OltInput,
} from './service.js';

/** Guards every OLT route shares: a login token of a tenant user. */
const base = { tag: 'network', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not an OLT of the tenant' } };

/**
 * OLTs (issue 8 item 3): reads need customers.view, writes and polls network.manage. Credentials
 * are write-only.
 */
export const oltRoutes: AnyWebRoute[] = [
  webRoute<Input, OltAdminListQuery>({
    ...base,
    method: 'get',
    path: '/api/olts',
    permission: 'customers.view',
    query: oltAdminListQuery,
    summary: 'List OLTs, newest first; filters search, status, home_base_id, is_active',
    responses: { 200: { description: 'Page of OLTs', schema: oltAdminList } },
    async handler(ctx) {
      ctx.body = await listAdminOlts(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, OltInput>({
    ...base,
    method: 'post',
    path: '/api/olts',
    permission: 'network.manage',
    body: oltCreateBody,
    summary: 'Create an OLT (offline until its first poll)',
    responses: { 201: { description: 'The new OLT', schema: oltOne } },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const id = await createOlt(scope, ctx.deps.config.appKey, actor, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await oltById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/olts/:id',
    permission: 'customers.view',
    params: idParams,
    summary: 'Show an OLT',
    responses: { 200: { description: 'The OLT', schema: oltOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await oltById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, OltInput>({
    ...base,
    method: 'put',
    path: '/api/olts/:id',
    permission: 'network.manage',
    params: idParams,
    body: oltUpdateBody,
    summary: 'Update an OLT (fields left out keep their value; not its status)',
    responses: { 200: { description: 'The updated OLT', schema: oltOne }, ...notFound },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      await updateOlt(scope, ctx.deps.config.appKey, actor, id, ctx.state.body);
      ctx.body = { data: await oltById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'post',
    path: '/api/olts/:id/poll',
    permission: 'network.manage',
    params: idParams,
    summary: 'Poll an OLT now: enqueues an onu-poll job for it (202)',
    responses: {
      202: { description: 'The poll job is queued', schema: oltPollAccepted },
      ...notFound,
      503: { description: 'QUEUE_UNAVAILABLE: the job queue (Redis) is down' },
    },
    async handler(ctx) {
      const queue = ctx.deps.queues.get(ONU_POLL);
      ctx.status = 202;
      ctx.body = { data: await requestOltPoll(ctx.state.scope!, queue, ctx.state.params.id) };
    },
  }),
];
