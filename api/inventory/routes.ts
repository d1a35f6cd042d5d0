import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import type { AppContext } from '../context.js';
import { idParams } from '../shared/schemas.js';
import {
  itemCreateBody,
  itemList,
  itemListQuery,
  itemOne,
  itemUpdateBody,
  locationCreateBody,
  locationList,
  locationListQuery,
  locationOne,
  locationUpdateBody,
} from './schemas.js';
import {
  createItem,
  deleteItem,
  itemById,
  listItems,
  updateItem,
  type ItemInput,
  type ItemListQuery,
} from './items.js';
import {
  createLocation,
  deleteLocation,
  listLocations,
  locationById,
  updateLocation,
  type LocationInput,
  type LocationListQuery,
} from './locations.js';

/** Guards every inventory route shares: a login token of a tenant user, module `inventory` on. */
export const inventoryBase = { tag: 'inventory', auth: 'login', tenant: true, module: 'inventory' } as const;
/** The caller as the services take it. */
export const actorOf = (ctx: AppContext) => ({ userId: ctx.state.auth!.userId, ip: ctx.ip });
const itemNotFound = { 404: { description: 'Not an inventory item of the tenant' } };
const locationNotFound = { 404: { description: 'Not an inventory location of the tenant' } };
const skuTaken = { 409: { description: 'CONFLICT: another item took the sku at the same moment.' } };

/**
 * The item catalogue and the locations (issue 16 item 1): reads need inventory.view, writes
 * inventory.manage; DELETE deactivates a used record instead.
 */
export const inventoryCatalogueRoutes: AnyWebRoute[] = [
  webRoute<Input, ItemListQuery>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory',
    permission: 'inventory.view',
    query: itemListQuery,
    summary:
      'List items, newest first, with their total stock; filters search, item_type, tracking, category, is_active, low_stock',
    responses: { 200: { description: 'Page of items', schema: itemList } },
    async handler(ctx) {
      ctx.body = await listItems(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, ItemInput>({
    ...inventoryBase,
    method: 'post',
    path: '/api/inventory',
    permission: 'inventory.manage',
    body: itemCreateBody,
    summary: 'Create an item (no stock: use stock-in)',
    responses: { 201: { description: 'The new item', schema: itemOne }, ...skuTaken },
    async handler(ctx) {
      const id = await createItem(ctx.state.scope!, actorOf(ctx), ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await itemById(ctx.state.scope!, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/:id',
    permission: 'inventory.view',
    params: idParams,
    summary: 'Show an item with its total stock',
    responses: { 200: { description: 'The item', schema: itemOne }, ...itemNotFound },
    async handler(ctx) {
      ctx.body = { data: await itemById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, ItemInput>({
    ...inventoryBase,
    method: 'put',
    path: '/api/inventory/:id',
    permission: 'inventory.manage',
    params: idParams,
    body: itemUpdateBody,
    summary: 'Update an item (fields left out keep their value; tracking is fixed once stock moved)',
    responses: { 200: { description: 'The updated item', schema: itemOne }, ...itemNotFound, ...skuTaken },
    async handler(ctx) {
      await updateItem(ctx.state.scope!, actorOf(ctx), ctx.state.params.id, ctx.state.body);
      ctx.body = { data: await itemById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }>({
    ...inventoryBase,
    method: 'delete',
    path: '/api/inventory/:id',
    permission: 'inventory.manage',
    params: idParams,
    summary: 'Delete an unused item; an item with stock, ledger rows, requests or buy prices is deactivated instead',
    responses: {
      200: { description: 'The item was in use: deactivated (is_active false)', schema: itemOne },
      204: { description: 'Deleted' },
      ...itemNotFound,
    },
    async handler(ctx) {
      const out = await deleteItem(ctx.state.scope!, actorOf(ctx), ctx.state.params.id);
      if (out.deleted) ctx.status = 204;
      else ctx.body = { data: out.item };
    },
  }),
  webRoute<Input, LocationListQuery>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/locations',
    permission: 'inventory.view',
    query: locationListQuery,
    summary: 'List stock locations (warehouse, pop, technician), newest first',
    responses: { 200: { description: 'Page of locations', schema: locationList } },
    async handler(ctx) {
      ctx.body = await listLocations(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, LocationInput>({
    ...inventoryBase,
    method: 'post',
    path: '/api/inventory/locations',
    permission: 'inventory.manage',
    body: locationCreateBody,
    summary: 'Create a location; a technician location is held by a user (holder_user_id)',
    responses: { 201: { description: 'The new location', schema: locationOne } },
    async handler(ctx) {
      const id = await createLocation(ctx.state.scope!, actorOf(ctx), ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await locationById(ctx.state.scope!, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...inventoryBase,
    method: 'get',
    path: '/api/inventory/locations/:id',
    permission: 'inventory.view',
    params: idParams,
    summary: 'Show a location',
    responses: { 200: { description: 'The location', schema: locationOne }, ...locationNotFound },
    async handler(ctx) {
      ctx.body = { data: await locationById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, LocationInput>({
    ...inventoryBase,
    method: 'put',
    path: '/api/inventory/locations/:id',
    permission: 'inventory.manage',
    params: idParams,
    body: locationUpdateBody,
    summary: 'Update a location (fields left out keep their value; the type is fixed once stock moved)',
    responses: { 200: { description: 'The updated location', schema: locationOne }, ...locationNotFound },
    async handler(ctx) {
      await updateLocation(ctx.state.scope!, actorOf(ctx), ctx.state.params.id, ctx.state.body);
      ctx.body = { data: await locationById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }>({
    ...inventoryBase,
    method: 'delete',
    path: '/api/inventory/locations/:id',
    permission: 'inventory.manage',
    params: idParams,
    summary: 'Delete an unused location; one with stock history, requests or counts is deactivated instead',
    responses: {
      200: { description: 'The location was in use: deactivated', schema: locationOne },
      204: { description: 'Deleted' },
      ...locationNotFound,
    },
    async handler(ctx) {
      const out = await deleteLocation(ctx.state.scope!, actorOf(ctx), ctx.state.params.id);
      if (out.deleted) ctx.status = 204;
      else ctx.body = { data: out.location };
    },
  }),
];
