import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { closeHttpServer, isMainModule, runService } from '../../lib/process.js';
import { Redis } from 'ioredis';
import { loadMailServerConfig } from '../../lib/config.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import { createKnex } from '../../db/knex.js';
import { createQueues } from '../../jobs/queues.js';
import { createMailboxClient } from '../../jobs/adapters/mailbox-client/index.js';
import { createMailApp } from './app.js';
import { handleMailClientErrors } from './middleware/errors.js';

/**
 * The `mail` process (DESIGN.md §1; Procfile `mail: node --import tsx api/mail/server.ts`): the Mailbox API and
 * its dashboard on MAIL_PORT (default 3001), announcing MAIL_BASE_URL. Needs DATABASE_URL,
 * REDIS_URL, APP_KEY and MAIL_BASE_URL (a missing or malformed one stops it with a message naming
 * it). close() stops accepting, lets the requests in flight finish within SHUTDOWN_GRACE_MS
 * (lib/process.ts closeHttpServer), then closes the app's queue events, the queues, the pooled
 * IMAP/SMTP connections, Redis and the database pool.
 * @returns the server, its announced URL, close(), the grace period in ms and the logger
 * @throws ConfigError naming the bad variable
 */
export async function startMail(
  env?: NodeJS.ProcessEnv,
): Promise<{ server: http.Server; url: string; close(): Promise<void>; graceMs: number; logger: Logger }> {
  const config = loadMailServerConfig(env);
  const rateLimit = { points: config.mailRateLimit, durationSeconds: 60 };
  const logger = createLogger(config.logLevel);
  const knex = createKnex(config.databaseUrl);
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const queues = createQueues(config.redisUrl);
  const ca = config.mailTlsCaFile ? await readFile(config.mailTlsCaFile) : undefined;
  const mailClient = createMailboxClient({ logger, ...(ca ? { tls: { ca } } : {}) });
  const { app, close: closeApp } = createMailApp({
    knex,
    redis,
    logger,
    queues,
    mailClient,
    config: { mailBaseUrl: config.mailBaseUrl, appKey: config.appKey, rateLimit, trustProxy: config.trustProxy },
  });
  const server = http.createServer(app.callback());
  handleMailClientErrors(server, logger); // Node's own 400/408/431 as JSON (issue 7)
  await new Promise<void>((resolve) => server.listen(config.mailPort, resolve));
  logger.info({ port: config.mailPort, url: config.mailBaseUrl }, 'mail listening');
  const graceMs = config.shutdownGraceMs;
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await closeHttpServer(server, {
        graceMs,
        onForced: (n) => logger.warn({ connections: n, grace_ms: graceMs }, 'requests cut after the grace period'),
      });
      await closeApp();
      await queues.close();
      await mailClient.close();
      redis.disconnect();
      await knex.destroy();
      logger.info('mail stopped');
    })();
    return closing;
  };
  return { server, url: config.mailBaseUrl, close, graceMs, logger };
}

if (isMainModule(import.meta.url)) runService(() => startMail());
