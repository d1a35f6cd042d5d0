import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import { onuAdminList, onuAdminListQuery, onuCreateBody, onuOne, onuUpdateBody } from './schemas.js';
import {
  createOnu,
  deactivateOnu,
  listAdminOnus,
  onuById,
  updateOnu,
  type OnuAdminListQuery,
  type OnuInput,
} from './service.js';

/** Guards every ONU route shares: a login token of a tenant user. */
const base = { tag: 'network', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not an ONU of the tenant' } };

/** ONUs (issue 8 item 3): reads need customers.view, writes network.manage; DELETE deactivates. */
export const onuRoutes: AnyWebRoute[] = [
  webRoute<Input, OnuAdminListQuery>({
    ...base,
    method: 'get',
    path: '/api/onus',
    permission: 'customers.view',
    query: onuAdminListQuery,
    summary: 'List ONUs (active and inactive), newest first; filters search, status, olt_id, customer_id, is_active',
    responses: { 200: { description: 'Page of ONUs', schema: onuAdminList } },
    async handler(ctx) {
      ctx.body = await listAdminOnus(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, OnuInput>({
    ...base,
    method: 'post',
    path: '/api/onus',
    permission: 'network.manage',
    body: onuCreateBody,
    summary: 'Create an ONU (offline until its OLT is polled)',
    responses: {
      201: { description: 'The new ONU', schema: onuOne },
      409: { description: 'CONFLICT: the serial number exists in the tenant' },
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const id = await createOnu(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await onuById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/onus/:id',
    permission: 'customers.view',
    params: idParams,
    summary: 'Show an ONU with its last readings',
    responses: { 200: { description: 'The ONU', schema: onuOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await onuById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, OnuInput>({
    ...base,
    method: 'put',
    path: '/api/onus/:id',
    permission: 'network.manage',
    params: idParams,
    body: onuUpdateBody,
    summary: 'Update an ONU (fields left out keep their value; not its status or readings)',
    responses: {
      200: { description: 'The updated ONU', schema: onuOne },
      ...notFound,
      409: { description: 'CONFLICT: another ONU has the serial number' },
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      await updateOnu(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, id, ctx.state.body);
      ctx.body = { data: await onuById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'delete',
    path: '/api/onus/:id',
    permission: 'network.manage',
    params: idParams,
    summary: 'Deactivate an ONU (is_active false; kept with its history)',
    responses: { 200: { description: 'The deactivated ONU', schema: onuOne }, ...notFound },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      await deactivateOnu(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, id);
      ctx.body = { data: await onuById(scope, id) };
    },
  }),
];
