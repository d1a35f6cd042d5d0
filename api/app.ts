import Koa from 'koa';
import Router from '@koa/router';
import type { AppContext, AppDeps, AppState } from './context.js';
import { errorsAndLogging } from './middleware/errors.js';
import { mountWebRoutes } from './http/web-route.js';
import { jsonBody } from './http/body.js';
import { refuseNulInUrl } from './http/hostile-input.js';
import { securityHeaders } from './http/security-headers.js';
import { tokenRateLimit } from './middleware/rate-limit.js';
import { idempotency } from './middleware/idempotency.js';
import { webRoutes } from './routes.js';
import { mountDocs } from './docs/routes.js';
import { webApiInfo, webTagDescriptions } from './docs/info.js';
import { boardRoutes } from './board/routes.js';

/**
 * Builds the web service (DESIGN.md §3): error/logging middleware, JSON body parsing, the route
 * table of api/routes.ts. Never listens; server.ts and the tests call app.callback().
 * @returns the Koa app and its router (the OpenAPI test reads router.stack)
 */
export function createApp(deps: AppDeps): { app: Koa<AppState>; router: Router } {
  const app = new Koa<AppState>();
  app.proxy = deps.config.trustProxy ?? false;
  app.context.deps = deps;
  app.silent = true; // errors are logged by errorsAndLogging, never printed by Koa
  app.use(errorsAndLogging());
  // nosniff everywhere, no-store on /api (issue 7); NUL in the path or query -> 422
  app.use(securityHeaders({ noStore: ['/api'] }));
  app.use(refuseNulInUrl());
  // JSON and urlencoded bodies of POST, PUT and PATCH, 1 MB
  // (malformed -> 422, too large -> 413 through the error table)
  app.use(jsonBody({ limit: '1mb', urlencoded: true }));
  // bull-board at /admin/queues behind the platform-admin sign-in (/admin/login); browser pages, not in the route table
  app.use(boardRoutes(deps));
  const router = new Router();
  const rl = deps.config.rateLimit ?? { points: 600, durationSeconds: 60 };
  mountWebRoutes(router, webRoutes, {
    rateLimit: tokenRateLimit(deps.redis, { points: rl.points, durationSeconds: rl.durationSeconds }),
    idempotency: idempotency(),
  });
  // /openapi.json and /docs, built from the same route table (DESIGN.md §4)
  mountDocs(router, {
    routes: webRoutes,
    info: webApiInfo(deps.config.publicBaseUrl),
    options: { tagDescriptions: webTagDescriptions },
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, router };
}

/** Re-exported for route modules that import from the app. */
export type { AppContext };
