import type http from 'node:http';
import { readFile } from 'node:fs/promises';
import { isMainModule, listenUntilClosed, runService } from '../../lib/process.js';
import { loadMailServerConfig } from '../../lib/config.js';
import { createBoundedRedis } from '../../lib/redis.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { createKnex } from '../../db/knex.js';
import { createQueues } from '../../jobs/queues.js';
import { createMailboxClient } from '../../jobs/adapters/mailbox-client/index.js';
import { createMailApp } from './app.js';
import { handleMailClientErrors } from './middleware/errors.js';
import { createLimitedServer } from '../http/server-limits.js';
import { serviceBounds } from '../http/service-bounds.js';

/**
 * The `mail` process (DESIGN.md §1; Procfile `mail: node --import tsx api/mail/server.ts`): the Mailbox API and
 * its dashboard on MAIL_PORT (default 3001), announcing MAIL_BASE_URL. Needs DATABASE_URL,
 * REDIS_URL, APP_KEY and MAIL_BASE_URL (a missing or malformed one stops it with a message naming
 * it). close() stops accepting, lets the requests in flight finish within SHUTDOWN_GRACE_MS
 * (lib/process.ts closeHttpServer), then closes the app's queue events, the queues, the pooled
 * IMAP/SMTP connections, Redis and the database pool. Redis and PostgreSQL calls are bounded in time
 * and the HTTP server limits slow and greedy clients (issue 7; api/http/service-bounds.ts).
 * @returns the server, its announced URL, close(), the grace period in ms and the logger
 * @throws ConfigError naming the bad variable
 */
export async function startMail(
  env?: NodeJS.ProcessEnv,
): Promise<{ server: http.Server; url: string; close(): Promise<void>; graceMs: number; logger: Logger }> {
  const config = loadMailServerConfig(env);
  const rateLimit = { points: config.mailRateLimit, durationSeconds: 60 };
  const logger = createLogger(config.logLevel);
  const bounds = serviceBounds(config);
  const knex = createKnex(config.databaseUrl, undefined, { ...bounds.db, logger });
  const redis = createBoundedRedis(config.redisUrl, bounds.redis, bounds.redisErrorLog(logger));
  const queues = createQueues(config.redisUrl, { bounds: bounds.redis, enqueueTimeoutMs: bounds.enqueueTimeoutMs });
  void queues.ping(bounds.redis.connectTimeoutMs); // opens the producer connection now, not in the first enqueue
  const ca = config.mailTlsCaFile ? await readFile(config.mailTlsCaFile) : undefined;
  const mailClient = createMailboxClient({ logger, ...(ca ? { tls: { ca } } : {}) });
  const { app, close: closeApp } = createMailApp({
    knex,
    redis,
    logger,
    queues,
    mailClient,
    config: {
      mailBaseUrl: config.mailBaseUrl,
      appKey: config.appKey,
      rateLimit,
      trustProxy: config.trustProxy,
      loginIpLimit: config.abuse.loginIpLimit,
    },
  });
  const server = createLimitedServer(app.callback(), bounds.http, {
    status: 429,
    body: { ok: false, error: 'rate_limited', message: 'Too many open connections from your address. Retry later.' },
    retryAfterSeconds: 5,
  });
  handleMailClientErrors(server, logger); // Node's own 400/408/431 as JSON (issue 7)
  const graceMs = config.shutdownGraceMs;
  const close = await listenUntilClosed(server, {
    port: config.mailPort,
    name: 'mail',
    url: config.mailBaseUrl,
    graceMs,
    logger,
    release: async () => {
      await closeApp();
      await queues.close();
      await mailClient.close();
      redis.disconnect();
      await knex.destroy();
    },
  });
  return { server, url: config.mailBaseUrl, close, graceMs, logger };
}

if (isMainModule(import.meta.url)) runService(() => startMail());
