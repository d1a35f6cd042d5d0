import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import type { AppContext } from '../context.js';
import { ModuleDisabled } from '../errors.js';
import {
  homeBaseCreateBody,
  homeBaseList,
  homeBaseListQuery,
  homeBaseLocationsBody,
  homeBaseOne,
  homeBaseUpdateBody,
} from './schemas.js';
import { mapHomeBaseLocations } from './inventory-locations.js';
import {
  createHomeBase,
  homeBaseById,
  listHomeBases,
  updateHomeBase,
  type HomeBaseInput,
  type HomeBaseListQuery,
} from './service.js';

/** Guards every home base route shares: a login token of a tenant user. */
const base = { tag: 'home-bases', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not a home base of the tenant' } };

/** inventory_location_ids in a POST/PUT body needs the inventory module (403 module_disabled otherwise). */
function assertInventoryModule(ctx: AppContext, body: HomeBaseInput) {
  if (body.inventory_location_ids !== undefined && !ctx.state.tenant!.modules.includes('inventory'))
    throw new ModuleDisabled('inventory');
}

/** Home bases (issue 8 item 3): reads need customers.view, writes homebase.manage (document 2). */
export const homeBaseRoutes: AnyWebRoute[] = [
  webRoute<Input, HomeBaseListQuery>({
    ...base,
    method: 'get',
    path: '/api/home-bases',
    permission: 'customers.view',
    query: homeBaseListQuery,
    summary: 'List home bases, newest first; search name or address',
    responses: { 200: { description: 'Page of home bases', schema: homeBaseList } },
    async handler(ctx) {
      ctx.body = await listHomeBases(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, HomeBaseInput>({
    ...base,
    method: 'post',
    path: '/api/home-bases',
    permission: 'homebase.manage',
    body: homeBaseCreateBody,
    summary: 'Create a home base',
    responses: { 201: { description: 'The new home base', schema: homeBaseOne } },
    async handler(ctx) {
      assertInventoryModule(ctx, ctx.state.body);
      const scope = ctx.state.scope!;
      const id = await createHomeBase(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await homeBaseById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/home-bases/:id',
    permission: 'customers.view',
    params: idParams,
    summary: 'Show a home base',
    responses: { 200: { description: 'The home base', schema: homeBaseOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await homeBaseById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, HomeBaseInput>({
    ...base,
    method: 'put',
    path: '/api/home-bases/:id',
    permission: 'homebase.manage',
    params: idParams,
    body: homeBaseUpdateBody,
    summary: 'Update a home base (fields left out keep their value)',
    responses: { 200: { description: 'The updated home base', schema: homeBaseOne }, ...notFound },
    async handler(ctx) {
      assertInventoryModule(ctx, ctx.state.body);
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      await updateHomeBase(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, id, ctx.state.body);
      ctx.body = { data: await homeBaseById(scope, id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, { inventory_location_ids: number[] }>({
    ...base,
    method: 'post',
    path: '/api/home-bases/:id/inventory-locations',
    permission: 'homebase.manage',
    module: 'inventory',
    params: idParams,
    body: homeBaseLocationsBody,
    summary: "Replace the home base's warehouse or POP locations (issue 16 item 5); [] removes the mapping",
    responses: { 200: { description: 'The home base with its mapping', schema: homeBaseOne }, ...notFound },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      await mapHomeBaseLocations(scope, actor, id, ctx.state.body.inventory_location_ids);
      ctx.body = { data: await homeBaseById(scope, id) };
    },
  }),
];
