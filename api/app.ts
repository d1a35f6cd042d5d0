import Koa from 'koa';
import Router from '@koa/router';
import { koaBody } from 'koa-body';
import type { AppContext, AppDeps, AppState } from './context.js';
import { errorsAndLogging } from './middleware/errors.js';
import { mountRoutes } from './http/route.js';
import { tokenRateLimit } from './middleware/rate-limit.js';
import { idempotency } from './middleware/idempotency.js';
import { webRoutes } from './routes.js';
import { mountDocs } from './docs/routes.js';
import { webApiInfo, webTagDescriptions } from './docs/info.js';
import { boardRoutes } from './board/routes.js';

/** The methods koa-body parses a body for (its default parsedMethods). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Builds the web service (DESIGN.md §3): error/logging middleware, JSON body parsing, the route
 * table of api/routes.ts. Never listens; server.ts and the tests call app.callback().
 * @returns the Koa app and its router (the OpenAPI test reads router.stack)
 */
export function createApp(deps: AppDeps): { app: Koa<AppState>; router: Router } {
  const app = new Koa<AppState>();
  app.proxy = process.env.TRUST_PROXY === '1';
  app.context.deps = deps;
  app.silent = true; // errors are logged by errorsAndLogging, never printed by Koa
  app.use(errorsAndLogging() as unknown as Koa.Middleware<AppState>);
  // Body parse errors keep their status: malformed JSON (400) -> 422 VALIDATION_FAILED, too large (413) -> 413 PAYLOAD_TOO_LARGE (api/middleware/errors.ts)
  const parseBody = koaBody({ jsonLimit: '1mb', formLimit: '1mb', multipart: false, text: false, urlencoded: true, onError: (err) => { throw Object.assign(err, { status: (err as { status?: number }).status ?? 400, expose: true }); } });
  // koa-body parses POST, PUT and PATCH only; other methods skip its content-type checks entirely
  app.use((ctx, next) => (BODY_METHODS.has(ctx.method) ? parseBody(ctx, next) : next()));
  // bull-board at /admin/queues behind the platform-admin sign-in (/admin/login); browser pages, not in the route table
  app.use(boardRoutes(deps));
  const router = new Router();
  const rl = deps.config.rateLimit ?? { points: 600, durationSeconds: 60 };
  mountRoutes(router, webRoutes, {
    rateLimit: tokenRateLimit(deps.redis, { points: rl.points, durationSeconds: rl.durationSeconds }),
    idempotency: idempotency(),
  });
  // /openapi.json and /docs, built from the same route table (DESIGN.md §4)
  mountDocs(router, { routes: webRoutes, info: webApiInfo(deps.config.publicBaseUrl), options: { tagDescriptions: webTagDescriptions } });
  app.use(router.routes() as unknown as Koa.Middleware<AppState>);
  app.use(router.allowedMethods() as unknown as Koa.Middleware<AppState>);
  return { app, router };
}

/** Re-exported for route modules that import from the app. */
export type { AppContext };
