import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { loginBody, loginResult, tenantShape, userShape } from './schemas.js';
import { login, profile, revokeToken } from './service.js';
import { LoginThrottle } from '../../lib/login-throttle.js';
import { RateLimited, Unauthenticated } from '../errors.js';
import type { AppContext } from '../context.js';

const throttles = new WeakMap<object, LoginThrottle>();

/** The app's login throttle (one per app config; options from AppDeps.config.loginThrottle). */
function throttleOf(ctx: AppContext): LoginThrottle {
  let t = throttles.get(ctx.deps.config);
  if (!t) {
    const { config, logger } = ctx.deps;
    t = new LoginThrottle(ctx.deps.redis, {
      ipPoints: config.loginIpLimit,
      ...(config.loginThrottle ?? { points: 10, durationSeconds: 900, keyPrefix: 'rl:api-login' }),
      onFallback: () => logger.warn('login throttle: Redis unavailable, counting in memory'),
    });
    throttles.set(ctx.deps.config, t);
  }
  return t;
}

/** Identity endpoints (DESIGN.md §5): login, logout, me. */
export const authRoutes: AnyWebRoute[] = [
  webRoute<Input, Input, { email: string; password: string; device_name?: string }>({
    method: 'post',
    path: '/api/auth/login',
    tag: 'auth',
    auth: 'public',
    summary: 'Log in with e-mail and password; returns an admin login token',
    body: loginBody,
    description:
      'Failed attempts are throttled per IP and e-mail (10 per 15 minutes by default) and per IP across all ' +
      'e-mails (20 per 15 minutes by default, LOGIN_IP_LIMIT): past that, 429 RATE_LIMITED with Retry-After, ' +
      'even for the right password.',
    responses: {
      200: { description: 'Logged in', schema: loginResult },
      401: { description: 'Wrong e-mail or password' },
      429: { description: 'Too many failed attempts for this IP and e-mail, or for this IP (Retry-After)' },
    },
    async handler(ctx) {
      const b = ctx.state.body;
      const throttle = throttleOf(ctx);
      const wait = await throttle.blockedFor(ctx.ip, b.email);
      if (wait > 0) throw new RateLimited(wait);
      try {
        ctx.body = await login(ctx.deps.knex, { ...b, ip: ctx.ip, userAgent: ctx.get('user-agent') });
      } catch (e) {
        if (e instanceof Unauthenticated) await throttle.failed(ctx.ip, b.email);
        throw e;
      }
      await throttle.succeeded(ctx.ip, b.email);
    },
  }),
  webRoute({
    method: 'post',
    path: '/api/auth/logout',
    tag: 'auth',
    auth: 'login',
    summary: 'Revoke the login token in use',
    responses: {
      200: { description: 'Logged out', schema: { type: 'object', properties: { message: { type: 'string' } } } },
    },
    async handler(ctx) {
      await revokeToken(ctx.deps.knex, ctx.state.auth!.tokenId);
      ctx.body = { message: 'Logged out.' };
    },
  }),
  webRoute({
    method: 'get',
    path: '/api/auth/me',
    tag: 'auth',
    auth: 'login',
    summary: 'The logged-in user, roles, permissions and tenant',
    responses: {
      200: {
        description: 'Current user',
        schema: { type: 'object', properties: { user: userShape, tenant: tenantShape } },
      },
    },
    async handler(ctx) {
      ctx.body = await profile(ctx.deps.knex, ctx.state.auth!.userId!);
    },
  }),
];
