import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import {
  packageAdminList,
  packageAdminListQuery,
  packageCreateBody,
  packageOne,
  packageUpdateBody,
} from './schemas.js';
import {
  createPackage,
  deletePackage,
  listAdminPackages,
  packageById,
  updatePackage,
  type PackageAdminListQuery,
  type PackageInput,
} from './service.js';

/** Guards every package route shares: a login token of a tenant user. */
const base = { tag: 'packages', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not a package of the tenant' } };

/**
 * Service packages (issue 8 item 3; DESIGN.md §6): reads need customers.view, writes
 * customers.manage. DELETE removes an unused package and deactivates a used one.
 */
export const packageRoutes: AnyWebRoute[] = [
  webRoute<Input, PackageAdminListQuery>({
    ...base,
    method: 'get',
    path: '/api/packages',
    permission: 'customers.view',
    query: packageAdminListQuery,
    summary: 'List packages, newest first; filters search, is_active, is_partner_package, service_type',
    responses: { 200: { description: 'Page of packages', schema: packageAdminList } },
    async handler(ctx) {
      ctx.body = await listAdminPackages(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, PackageInput>({
    ...base,
    method: 'post',
    path: '/api/packages',
    permission: 'customers.manage',
    body: packageCreateBody,
    summary: 'Create a package',
    responses: { 201: { description: 'The new package', schema: packageOne } },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const id = await createPackage(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data: await packageById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/packages/:id',
    permission: 'customers.view',
    params: idParams,
    summary: 'Show a package',
    responses: { 200: { description: 'The package', schema: packageOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await packageById(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, PackageInput>({
    ...base,
    method: 'put',
    path: '/api/packages/:id',
    permission: 'customers.manage',
    params: idParams,
    body: packageUpdateBody,
    summary: 'Update a package (fields left out keep their value)',
    responses: { 200: { description: 'The updated package', schema: packageOne }, ...notFound },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      await updatePackage(scope, { userId: ctx.state.auth!.userId, ip: ctx.ip }, id, ctx.state.body);
      ctx.body = { data: await packageById(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'delete',
    path: '/api/packages/:id',
    permission: 'customers.manage',
    params: idParams,
    summary: 'Delete an unused package; a package customers or invoices refer to is deactivated instead',
    responses: {
      200: { description: 'The package was in use: deactivated (is_active false)', schema: packageOne },
      204: { description: 'Deleted' },
      ...notFound,
    },
    async handler(ctx) {
      const outcome = await deletePackage(
        ctx.state.scope!,
        { userId: ctx.state.auth!.userId, ip: ctx.ip },
        ctx.state.params.id,
      );
      if (outcome.deleted) ctx.status = 204;
      else ctx.body = { data: outcome.package };
    },
  }),
];
