import type Router from '@koa/router';
import type Koa from 'koa';
import type { Next } from 'koa';
import { authenticate, authorize, type AuthKind } from '../middleware/auth.js';
import { assertDemoAllowed, type DemoAction } from '../middleware/demo-guard.js';
import type { TokenRateLimiter } from '../middleware/rate-limit.js';
import type { ModuleName, Permission } from '../tenants/catalog.js';
import type { AppContext } from '../context.js';
import { mountRoutes, type Input, type Middleware, type RouteDef } from './route.js';

/** The web service's guard fields of a route (DESIGN.md §5, §10). */
export interface WebGuards {
  auth: AuthKind;
  /** Integration tokens: 'write' needs a read_write token. */
  access?: 'read' | 'write';
  /** Login users must hold this permission (403 FORBIDDEN naming it). */
  permission?: Permission;
  /** The tenant module the route belongs to (403 module_disabled when the tenant switched it off). */
  module?: ModuleName;
  /**
   * Login routes that act on the user's tenant: 403 for users without one, or with 'validation'
   * 422 VALIDATION_FAILED `errors.tenant` (the app builder, document 2).
   */
  tenant?: boolean | 'validation';
  /** The demo guard's action of this route (403 demo_guard_blocked on demo tenants). */
  demoAction?: DemoAction;
  /** Extra middleware run after validation and idempotency, before the handler. */
  middleware?: Middleware<AppContext>[];
  /**
   * The route's own check, run after the guards above and before the body is read: a public
   * webhook authenticates its caller here (tenant slug and key, issue 11), so a refused caller's
   * body is never read (issue 7 item 6).
   */
  guard?: Middleware<AppContext>;
}

/** A route of the web service: the shared RouteDef plus the web guards. */
export type WebRoute<P = Input, Q = Input, B = Input> = RouteDef<AppContext, P, Q, B> & WebGuards;

/** Any web route (the element type of the route table). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table holds routes of different input types
export type AnyWebRoute = WebRoute<any, any, any>;

/**
 * Declares a web route with typed input: `webRoute<{ id: number }, Input, TicketPatch>({...})`
 * gives the handler `ctx.state.params.id: number` and `ctx.state.body: TicketPatch` without casts.
 * @returns the same definition
 */
export function webRoute<P = Input, Q = Input, B = Input>(def: WebRoute<P, Q, B>): AnyWebRoute {
  return def as AnyWebRoute;
}

/** Hooks every route of a kind gets (rate limit, idempotency). */
export interface WebMountHooks {
  /** Per-token limiter of rateLimited routes, applied by authenticate() (api/middleware/rate-limit.ts). */
  rateLimit?: TokenRateLimiter;
  idempotency?: (ctx: AppContext, next: Next) => Promise<void>;
  /** The body parser, run after authentication and authorization (api/http/route.ts MountOptions.body). */
  body?: Koa.Middleware;
}

/**
 * Registers the web route table: authenticate (with the per-token rate limit of rateLimited routes)
 * -> authorize (access, module switch, permission, tenant) -> demo guard -> body parser -> validate -> idempotency
 * -> route middleware -> handler. Path ids are digits only (DESIGN.md §10). A refused permission,
 * module or demo action answers before validation and changes nothing.
 */
export function mountWebRoutes(router: Router, defs: readonly AnyWebRoute[], hooks: WebMountHooks = {}): void {
  mountRoutes<AppContext, AnyWebRoute>(router, defs, {
    digitIds: true,
    body: hooks.body,
    before: (def) => [
      authenticate(def.auth, def.rateLimited ? hooks.rateLimit : undefined),
      authorize({
        access: def.access,
        permission: def.permission,
        module: def.module,
        tenant: def.tenant,
      }),
      async (ctx, next) => {
        assertDemoAllowed(ctx.state.tenant, def.demoAction);
        return next();
      },
      ...(def.guard ? [def.guard] : []),
    ],
    after: (def) => [...(def.idempotent && hooks.idempotency ? [hooks.idempotency] : []), ...(def.middleware ?? [])],
  });
}
