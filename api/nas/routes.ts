import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import { nasCreateBody, nasList, nasListQuery, nasOne, nasUpdateBody } from './schemas.js';
import { createNas, listNas, nasById, updateNas, type NasInput, type NasListQuery } from './service.js';

/** Guards every NAS route shares: a login token of a tenant user. */
const base = { tag: 'network', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not a NAS of the tenant' } };

/** NAS (issue 8 item 3): reads need customers.view, writes network.manage; credentials write-only. */
export const nasRoutes: AnyWebRoute[] = [
  webRoute<Input, NasListQuery>({
    ...base,
    method: 'get',
    path: '/api/nas',
    permission: 'customers.view',
    query: nasListQuery,
    summary: 'List NAS, newest first; filters search, is_active',
    responses: { 200: { description: 'Page of NAS', schema: nasList } },
    async handler(ctx) {
      ctx.body = await listNas(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, NasInput>({
    ...base,
    method: 'post',
    path: '/api/nas',
    permission: 'network.manage',
    body: nasCreateBody,
    summary: 'Create a NAS (its id is the router_id other modules refer to)',
    responses: {
      201: { description: 'The new NAS', schema: nasOne },
      409: { description: 'CONFLICT: the nas_key exists in the tenant' },
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const id = await createNas(scope, ctx.deps.config.appKey, actor, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await nasById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/nas/:id',
    permission: 'customers.view',
    params: idParams,
    summary: 'Show a NAS',
    responses: { 200: { description: 'The NAS', schema: nasOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await nasById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, NasInput>({
    ...base,
    method: 'put',
    path: '/api/nas/:id',
    permission: 'network.manage',
    params: idParams,
    body: nasUpdateBody,
    summary: 'Update a NAS (fields left out keep their value)',
    responses: {
      200: { description: 'The updated NAS', schema: nasOne },
      ...notFound,
      409: { description: 'CONFLICT: another NAS has the nas_key' },
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      await updateNas(scope, ctx.deps.config.appKey, actor, id, ctx.state.body);
      ctx.body = { data: await nasById(scope, id) };
    },
  }),
];
