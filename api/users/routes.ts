import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { accessActor } from '../roles/routes.js';
import { idParams } from '../shared/schemas.js';
import { userCreateBody, userList, userListQuery, userOne, userUpdateBody } from './schemas.js';
import { createUser, listUsers, updateUser, userById, type UserInput, type UserListQuery } from './service.js';
import type { AppContext } from '../context.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { mirrorUser } from '../../db/tenant-mirror.js';

/**
 * Users are identity rows: they stay in the shared database after a tenant's cutover (issue 15
 * item 4), so these routes use a shared-database scope, and a write also updates the user's copy in
 * a cut-over tenant's database (mirrorUser).
 */
const usersScope = (ctx: AppContext) => new TenantScope(ctx.deps.knex, ctx.state.scope!.tenantId);
const mirror = (ctx: AppContext, id: number) =>
  mirrorUser(ctx.deps.knex, ctx.state.scope!.tenantId, id, ctx.deps.config.appKey);

/** Guards every user route shares: a login token of a tenant user holding users.manage. */
const base = { tag: 'users', auth: 'login', tenant: true, permission: 'users.manage' } as const;
const notFound = { 404: { description: 'Not a user of the tenant' } };

/**
 * Users of the tenant (issue 8 item 1): list, create, show, change (no delete: deactivate with
 * is_active false). Every route needs users.manage; writes are refused on a demo tenant.
 */
export const userRoutes: AnyWebRoute[] = [
  webRoute<Input, UserListQuery>({
    ...base,
    method: 'get',
    path: '/api/users',
    query: userListQuery,
    summary: 'List users, newest first; filters search (name, e-mail, phone), role (id or name), is_active',
    responses: { 200: { description: 'Page of users', schema: userList } },
    async handler(ctx) {
      ctx.body = await listUsers(usersScope(ctx), ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, UserInput>({
    ...base,
    method: 'post',
    path: '/api/users',
    demoAction: 'users.create',
    body: userCreateBody,
    summary: 'Create a user with roles the caller may give',
    responses: {
      201: { description: 'The new user', schema: userOne },
      403: { description: 'A role the caller may not give (FORBIDDEN)' },
      409: { description: 'The e-mail is taken' },
    },
    async handler(ctx) {
      const user = await createUser(usersScope(ctx), accessActor(ctx), ctx.state.body);
      await mirror(ctx, user.id);
      ctx.status = 201;
      ctx.body = { data: user };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/users/:id',
    params: idParams,
    summary: 'Show a user with roles and effective permissions',
    responses: { 200: { description: 'The user', schema: userOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await userById(usersScope(ctx), ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, UserInput>({
    ...base,
    method: 'put',
    path: '/api/users/:id',
    demoAction: 'users.update',
    params: idParams,
    body: userUpdateBody,
    summary: 'Change the fields given; roles replaces the roles; is_active false revokes the sessions',
    responses: {
      200: { description: 'The updated user', schema: userOne },
      403: { description: 'The user or a role is beyond what the caller may grant (FORBIDDEN)' },
      409: { description: 'The e-mail is taken' },
      ...notFound,
    },
    async handler(ctx) {
      const user = await updateUser(usersScope(ctx), accessActor(ctx), ctx.state.params.id, ctx.state.body);
      await mirror(ctx, user.id);
      ctx.body = { data: user };
    },
  }),
];
