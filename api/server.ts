import http from 'node:http';
import { closeHttpServer, isMainModule, runService } from '../lib/process.js';
import { Redis } from 'ioredis';
import { loadServerConfig } from '../lib/config.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { createKnex } from '../db/knex.js';
import { createQueues } from '../jobs/queues.js';
import { createApp } from './app.js';
import { handleWebClientErrors } from './middleware/errors.js';

/**
 * The `web` process: builds the app from the configuration (lib/config.ts; `env` defaults to the
 * process's) and listens on PORT. close() (SIGTERM/SIGINT through runService) stops listening, lets
 * the requests in flight finish within SHUTDOWN_GRACE_MS (lib/process.ts closeHttpServer), then
 * closes the queues, Redis and the database pool.
 * @returns the server, close(), the grace period in ms and the logger
 * @throws ConfigError naming a missing or malformed variable
 */
export async function startWeb(
  env?: NodeJS.ProcessEnv,
): Promise<{ server: http.Server; close(): Promise<void>; graceMs: number; logger: Logger }> {
  const config = loadServerConfig(env);
  const logger = createLogger(config.logLevel);
  const knex = createKnex(config.databaseUrl);
  const redis = new Redis(config.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  const queues = createQueues(config.redisUrl);
  const { app } = createApp({
    knex,
    redis,
    logger,
    queues,
    config: {
      publicBaseUrl: config.publicBaseUrl,
      trustProxy: config.trustProxy,
      rateLimit: { points: config.externalRateLimit, durationSeconds: 60 },
      secureCookies: config.publicBaseUrl.startsWith('https:'),
      appKey: config.appKey,
    },
  });
  const server = http.createServer(app.callback());
  handleWebClientErrors(server, logger); // Node's own 400/408/431 as JSON (issue 7)
  await new Promise<void>((resolve) => server.listen(config.port, resolve));
  logger.info({ port: config.port, url: config.publicBaseUrl }, 'web listening');
  const graceMs = config.shutdownGraceMs;
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      await closeHttpServer(server, {
        graceMs,
        onForced: (n) => logger.warn({ connections: n, grace_ms: graceMs }, 'requests cut after the grace period'),
      });
      await queues.close();
      redis.disconnect();
      await knex.destroy();
      logger.info('web stopped');
    })();
    return closing;
  };
  return { server, close, graceMs, logger };
}

if (isMainModule(import.meta.url)) runService(() => startWeb());
