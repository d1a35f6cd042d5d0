import Router from '@koa/router';
import type { Next } from 'koa';
import { authenticate, authorize, type AuthKind } from '../middleware/auth.js';
import { assertDemoAllowed } from '../middleware/demo-guard.js';
import type { TokenRateLimiter } from '../middleware/rate-limit.js';
import { bodyAjv, queryAjv, validate, type Schema } from './validation.js';
import type { AppContext } from '../context.js';

/** One documented response of a route. */
export interface ResponseDef { description: string; schema?: Schema }

/**
 * A route of the web service: the single table both the Koa router and the OpenAPI document are
 * built from (DESIGN.md §4). Paths use Koa syntax (`/customers/:id`).
 */
export interface RouteDef {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  /** One line for the docs. */
  summary: string;
  description?: string;
  /** OpenAPI tag (module name). */
  tag: string;
  auth: AuthKind;
  /** Integration tokens: 'write' needs a read_write token. */
  access?: 'read' | 'write';
  /** Login users: permission name required. */
  permission?: string;
  /** Login routes that act on the user's tenant. */
  tenant?: boolean;
  /** Action name checked against the demo guard's blocked list. */
  demoAction?: string;
  /** Per-token rate limit applies (external API). */
  rateLimited?: boolean;
  /** Honours the Idempotency-Key header (POSTs that create). */
  idempotent?: boolean;
  params?: Schema;
  query?: Schema;
  body?: Schema;
  /** Success and route-specific error responses; the common ones (401/403/422/500) are added by the docs. */
  responses: Record<number, ResponseDef>;
  /** Extra middleware run after auth and validation, before the handler (rate limit, idempotency). */
  middleware?: ((ctx: AppContext, next: Next) => Promise<void>)[];
  handler: (ctx: AppContext) => Promise<void> | void;
}

/** Options of mountRoutes: hooks every route of a kind gets (rate limit, idempotency). */
export interface MountHooks {
  /** Per-token limiter of rateLimited routes, applied by authenticate() (api/middleware/rate-limit.ts). */
  rateLimit?: TokenRateLimiter;
  idempotency?: (ctx: AppContext, next: Next) => Promise<void>;
}

/**
 * Registers route definitions on a Koa router: authenticate (with the per-token rate limit of
 * rateLimited routes, consumed alongside the token lookup) -> authorize -> demo guard ->
 * validate params/query/body -> idempotency -> handler.
 * Validated values land in ctx.state.params, ctx.state.query and ctx.state.body.
 */
export function mountRoutes(router: Router, defs: RouteDef[], hooks: MountHooks = {}): void {
  for (const def of defs) {
    const chain: ((ctx: AppContext, next: Next) => Promise<void>)[] = [authenticate(def.auth, def.rateLimited ? hooks.rateLimit : undefined)];
    chain.push(authorize({ access: def.access, permission: def.permission, tenant: def.tenant }));
    chain.push(async (ctx, next) => {
      assertDemoAllowed(ctx.state.tenant, def.demoAction);
      ctx.state.params = def.params ? validate(queryAjv, def.params, { ...ctx.params }) : { ...ctx.params };
      ctx.state.query = def.query ? validate(queryAjv, def.query, { ...ctx.query }) : { ...ctx.query };
      const raw = (ctx.request as unknown as { body?: unknown }).body;
      if (def.body) {
        const body = raw && typeof raw === 'object' && !Array.isArray(raw) ? structuredClone(raw) : raw ?? {};
        ctx.state.body = validate(bodyAjv, def.body, body);
      } else ctx.state.body = {};
      return next();
    });
    if (def.idempotent && hooks.idempotency) chain.push(hooks.idempotency);
    if (def.middleware) chain.push(...def.middleware);
    chain.push(async (ctx) => { await def.handler(ctx); });
    (router as unknown as Record<string, (path: string, ...mw: unknown[]) => void>)[def.method](def.path, ...chain);
  }
}
