import type { AppContext } from '../context.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { mirrorRole } from '../../db/tenant-mirror.js';
import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import type { AccessActor } from './grants.js';
import { roleCreateBody, roleList, roleListQuery, roleOne, roleRead, roleUpdateBody } from './schemas.js';
import {
  createRole,
  deleteRole,
  listRoles,
  roleById,
  updateRole,
  type RoleInput,
  type RoleListQuery,
} from './service.js';

/**
 * Roles are identity rows: they stay in the shared database after a tenant's cutover (issue 15
 * item 4), like users (api/users/routes.ts), so these routes use a shared-database scope and a
 * write also updates the role's copy in a cut-over tenant's database (mirrorRole).
 */
const rolesScope = (ctx: AppContext) => new TenantScope(ctx.deps.knex, ctx.state.scope!.tenantId);
const mirror = (ctx: AppContext, id: number) =>
  mirrorRole(ctx.deps.knex, ctx.state.scope!.tenantId, id, ctx.deps.config.appKey);

/** Guards every role route shares: a login token of a tenant user holding users.manage. */
const base = { tag: 'roles', auth: 'login', tenant: true, permission: 'users.manage' } as const;
const notFound = { 404: { description: "Not a built-in role nor one of the tenant's" } };
const readOnly = { 403: { description: 'A built-in role, or a permission the caller lacks (FORBIDDEN)' } };

/** The caller as the access rules see it (api/roles/grants.ts). */
export function accessActor(ctx: AppContext): AccessActor {
  const auth = ctx.state.auth!;
  return { userId: auth.userId, roles: auth.roles, permissions: auth.permissions, ip: ctx.ip };
}

/**
 * Roles (issue 8 item 1; DESIGN.md §10 "permissions"): built-in roles are read-only; custom roles
 * carry a permission list from the catalogue. Every route needs users.manage; writes are refused on
 * a demo tenant.
 */
export const roleRoutes: AnyWebRoute[] = [
  webRoute<Input, RoleListQuery>({
    ...base,
    method: 'get',
    path: '/api/roles',
    query: roleListQuery,
    summary: "List the built-in roles, then the tenant's custom roles; filter search (name)",
    responses: { 200: { description: 'Page of roles', schema: roleList } },
    async handler(ctx) {
      ctx.body = await listRoles(rolesScope(ctx), ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, Required<RoleInput>>({
    ...base,
    method: 'post',
    path: '/api/roles',
    demoAction: 'roles.create',
    body: roleCreateBody,
    summary: 'Create a custom role with permissions the caller holds',
    responses: {
      201: { description: 'The new role', schema: roleOne },
      403: { description: 'A permission the caller lacks (FORBIDDEN, named)' },
      409: { description: 'The name is taken (built-in names included)' },
    },
    async handler(ctx) {
      ctx.status = 201;
      const data = await createRole(rolesScope(ctx), accessActor(ctx), ctx.state.body);
      await mirror(ctx, data.id);
      ctx.body = { data };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/roles/:id',
    params: idParams,
    summary: 'Show a role with its permissions and how many users of the tenant hold it',
    responses: { 200: { description: 'The role', schema: roleOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await roleById(rolesScope(ctx), ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, RoleInput>({
    ...base,
    method: 'put',
    path: '/api/roles/:id',
    demoAction: 'roles.update',
    params: idParams,
    body: roleUpdateBody,
    summary: 'Rename a custom role or replace its permissions (the fields given)',
    responses: {
      200: { description: 'The updated role', schema: roleOne },
      ...readOnly,
      ...notFound,
      409: { description: 'The name is taken' },
    },
    async handler(ctx) {
      const data = await updateRole(rolesScope(ctx), accessActor(ctx), ctx.state.params.id, ctx.state.body);
      await mirror(ctx, ctx.state.params.id);
      ctx.body = { data };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'delete',
    path: '/api/roles/:id',
    demoAction: 'roles.delete',
    params: idParams,
    summary: 'Delete a custom role that no user holds (422 while one does)',
    responses: {
      200: {
        description: 'Deleted',
        schema: { type: 'object', properties: { message: { type: 'string' }, data: roleRead } },
      },
      ...readOnly,
      ...notFound,
    },
    async handler(ctx) {
      const data = await deleteRole(rolesScope(ctx), accessActor(ctx), ctx.state.params.id);
      await mirror(ctx, ctx.state.params.id);
      ctx.body = { message: 'Role deleted.', data };
    },
  }),
];
