import Koa from 'koa';
import Router from '@koa/router';
import { jsonBody } from '../http/body.js';
import { refuseNulInUrl } from '../http/hostile-input.js';
import { securityHeaders } from '../http/security-headers.js';
import { QueueEvents, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { mailErrorsAndLogging } from './middleware/errors.js';
import { keyRateLimit, DEFAULT_MAIL_RATE_LIMIT } from './middleware/rate-limit.js';
import { mountMailRoutes } from './routes.js';
import { mailRoutes } from './table.js';
import { createMailDocsRouter } from './openapi.js';
import { createDashboardRouter } from './dashboard/index.js';
import { QUEUE as MAILBOX_CREATE_QUEUE } from '../../jobs/mailbox-create.js';
import type { MailDeps, MailRuntime, MailState } from './context.js';

export type { MailDeps, MailConfig, MailContext } from './context.js';

/**
 * The per-app runtime: a QueueEvents of the mailbox-create queue on its own Redis connection
 * (a blocking XREAD; BullMQ needs a dedicated connection), opened on the first create request.
 */
function createRuntime(deps: MailDeps): MailRuntime {
  let events: { qe: QueueEvents; conn: Redis } | null = null;
  const get = () => {
    if (!events) {
      const conn = deps.redis.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true });
      conn.on('error', () => {
        /* surfaced by the waiting request */
      });
      const qe = new QueueEvents(MAILBOX_CREATE_QUEUE, { connection: conn, prefix: deps.queues.prefix });
      qe.on('error', (err) => deps.logger.warn({ err: err.message }, 'mailbox-create queue events error'));
      events = { qe, conn };
    }
    return events.qe;
  };
  return {
    async waitForJob(job: Job, ms: number) {
      await job.waitUntilFinished(get(), ms);
    },
    async close() {
      if (!events) return;
      const { qe, conn } = events;
      events = null;
      await qe.close().catch(() => undefined);
      conn.disconnect();
    },
  };
}

/**
 * Builds the Mailbox API service (document 3; issue 3 items 1, 2, 7): request id + error body +
 * log line, JSON bodies under /api/ (1 MB), the route table of api/mail/routes.ts with the per-key
 * rate limit, /openapi.json and /docs, and the operator dashboard (api/mail/dashboard) at the root.
 * Never listens; api/mail/server.ts and the tests call app.callback().
 * @param deps knex, redis, logger, queues, mailClient, config {mailBaseUrl, appKey, rateLimit?, createWaitMs?}
 * @returns the Koa app, the API router (the OpenAPI test reads router.stack) and close() for the
 *   app's own connections (the QueueEvents of mailbox-create)
 */
export function createMailApp(deps: MailDeps): { app: Koa<MailState>; router: Router; close(): Promise<void> } {
  const app = new Koa<MailState>();
  app.proxy = deps.config.trustProxy ?? false;
  app.silent = true;
  const runtime = createRuntime(deps);
  Object.assign(app.context, { deps, mailRuntime: runtime });

  app.use(mailErrorsAndLogging());
  // nosniff everywhere, no-store on /api (issue 7); NUL in the path or query -> 422 invalid_request
  app.use(securityHeaders({ noStore: ['/api'] }));
  app.use(refuseNulInUrl());
  // JSON bodies under /api/ only (1 MB; malformed -> invalid_request, too large -> payload_too_large)
  app.use(jsonBody({ limit: '1mb', when: (ctx) => ctx.path.startsWith('/api/') }));

  const router = new Router();
  const rl = deps.config.rateLimit ?? DEFAULT_MAIL_RATE_LIMIT;
  mountMailRoutes(router, mailRoutes, {
    rateLimit: keyRateLimit(deps.redis, {
      points: rl.points,
      durationSeconds: rl.durationSeconds,
      keyPrefix: deps.config.rateLimitPrefix,
    }),
  });
  app.use(router.routes());
  app.use(router.allowedMethods());

  const docs = createMailDocsRouter(mailRoutes, deps.config.mailBaseUrl).router;
  app.use(docs.routes());

  const dashboard = createDashboardRouter({
    knex: deps.knex,
    redis: deps.redis,
    logger: deps.logger,
    config: { mailBaseUrl: deps.config.mailBaseUrl, appKey: deps.config.appKey },
  });
  app.use(dashboard.routes());
  app.use(dashboard.allowedMethods());

  return { app, router, close: () => runtime.close() };
}
