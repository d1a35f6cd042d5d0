import type { RouteDef } from '../http/route.js';
import { loginBody, loginResult, tenantShape, userShape } from './schemas.js';
import { login, profile, revokeToken } from './service.js';

/** Identity endpoints (DESIGN.md §5): login, logout, me. */
export const authRoutes: RouteDef[] = [
  {
    method: 'post', path: '/api/auth/login', tag: 'auth', auth: 'public', summary: 'Log in with e-mail and password; returns an admin login token',
    body: loginBody,
    responses: { 200: { description: 'Logged in', schema: loginResult }, 401: { description: 'Wrong e-mail or password' } },
    async handler(ctx) {
      const b = ctx.state.body as { email: string; password: string; device_name?: string };
      ctx.body = await login(ctx.deps.knex, { ...b, ip: ctx.ip, userAgent: ctx.get('user-agent') });
    },
  },
  {
    method: 'post', path: '/api/auth/logout', tag: 'auth', auth: 'login', summary: 'Revoke the login token in use',
    responses: { 200: { description: 'Logged out', schema: { type: 'object', properties: { message: { type: 'string' } } } } },
    async handler(ctx) {
      await revokeToken(ctx.deps.knex, ctx.state.auth!.tokenId);
      ctx.body = { message: 'Logged out.' };
    },
  },
  {
    method: 'get', path: '/api/auth/me', tag: 'auth', auth: 'login', summary: 'The logged-in user, roles, permissions and tenant',
    responses: { 200: { description: 'Current user', schema: { type: 'object', properties: { user: userShape, tenant: tenantShape } } } },
    async handler(ctx) {
      ctx.body = await profile(ctx.deps.knex, ctx.state.auth!.userId!);
    },
  },
];
