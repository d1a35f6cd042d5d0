import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { actorOf } from '../inventory/routes.js';
import {
  supplierCreateBody,
  supplierItemList,
  supplierItemQuery,
  supplierList,
  supplierListQuery,
  supplierOne,
  supplierParams,
  supplierUpdateBody,
} from './schemas.js';
import {
  createSupplier,
  deleteSupplier,
  listSupplierItems,
  listSuppliers,
  supplierById,
  updateSupplier,
  type SupplierInput,
  type SupplierItemQuery,
  type SupplierListQuery,
} from './service.js';

/** Guards every supplier route shares: a login token of a tenant user, module `inventory` on. */
const base = { tag: 'suppliers', auth: 'login', tenant: true, module: 'inventory' } as const;
const notFound = { 404: { description: 'Not a supplier of the tenant' } };
type P = { supplier: number };

/**
 * Suppliers (issue 16 item 1): reads need inventory.view, writes inventory.manage; DELETE
 * deactivates a supplier with buy prices or purchases. The import routes (item 6) live beside.
 */
export const supplierRoutes: AnyWebRoute[] = [
  webRoute<Input, SupplierListQuery>({
    ...base,
    method: 'get',
    path: '/api/suppliers',
    permission: 'inventory.view',
    query: supplierListQuery,
    summary: 'List suppliers, newest first; search name, contact, phone or e-mail',
    responses: { 200: { description: 'Page of suppliers', schema: supplierList } },
    async handler(ctx) {
      ctx.body = await listSuppliers(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, SupplierInput>({
    ...base,
    method: 'post',
    path: '/api/suppliers',
    permission: 'inventory.manage',
    body: supplierCreateBody,
    summary: 'Create a supplier',
    responses: { 201: { description: 'The new supplier', schema: supplierOne } },
    async handler(ctx) {
      const id = await createSupplier(ctx.state.scope!, actorOf(ctx), ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await supplierById(ctx.state.scope!, id) };
    },
  }),
  webRoute<P>({
    ...base,
    method: 'get',
    path: '/api/suppliers/:supplier',
    permission: 'inventory.view',
    params: supplierParams,
    summary: 'Show a supplier',
    responses: { 200: { description: 'The supplier', schema: supplierOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await supplierById(ctx.state.scope!, ctx.state.params.supplier) };
    },
  }),
  webRoute<P, Record<string, never>, SupplierInput>({
    ...base,
    method: 'put',
    path: '/api/suppliers/:supplier',
    permission: 'inventory.manage',
    params: supplierParams,
    body: supplierUpdateBody,
    summary: 'Update a supplier (fields left out keep their value)',
    responses: { 200: { description: 'The updated supplier', schema: supplierOne }, ...notFound },
    async handler(ctx) {
      await updateSupplier(ctx.state.scope!, actorOf(ctx), ctx.state.params.supplier, ctx.state.body);
      ctx.body = { data: await supplierById(ctx.state.scope!, ctx.state.params.supplier) };
    },
  }),
  webRoute<P>({
    ...base,
    method: 'delete',
    path: '/api/suppliers/:supplier',
    permission: 'inventory.manage',
    params: supplierParams,
    summary: 'Delete a supplier without buy prices or purchases; else deactivate it',
    responses: {
      200: { description: 'The supplier was in use: deactivated', schema: supplierOne },
      204: { description: 'Deleted' },
      ...notFound,
    },
    async handler(ctx) {
      const out = await deleteSupplier(ctx.state.scope!, actorOf(ctx), ctx.state.params.supplier);
      if (out.deleted) ctx.status = 204;
      else ctx.body = { data: out.supplier };
    },
  }),
  webRoute<P, SupplierItemQuery>({
    ...base,
    method: 'get',
    path: '/api/suppliers/:supplier/items',
    permission: 'inventory.view',
    params: supplierParams,
    query: supplierItemQuery,
    summary: "The supplier's items with their buy prices (cost_price), by item name",
    responses: { 200: { description: 'Page of buy prices', schema: supplierItemList }, ...notFound },
    async handler(ctx) {
      ctx.body = await listSupplierItems(ctx.state.scope!, ctx.state.params.supplier, ctx.state.query);
    },
  }),
];
