import http from 'node:http';
import { isMainModule, runService } from '../lib/process.js';
import { Redis } from 'ioredis';
import { loadServerConfig } from '../lib/config.js';
import { createLogger } from '../lib/logger.js';
import { createKnex } from '../db/knex.js';
import { createQueues } from '../jobs/queues.js';
import { createApp } from './app.js';

/**
 * The `web` process: builds the app from the configuration (lib/config.ts; `env` defaults to the process's), listens on PORT, and closes the server,
 * queues, Redis and the database pool on SIGTERM/SIGINT.
 */
export async function startWeb(env?: NodeJS.ProcessEnv): Promise<{ server: http.Server; close(): Promise<void> }> {
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
  await new Promise<void>((resolve) => server.listen(config.port, resolve));
  logger.info({ port: config.port, url: config.publicBaseUrl }, 'web listening');
  const close = async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await queues.close();
    redis.disconnect();
    await knex.destroy();
  };
  return { server, close };
}

if (isMainModule(import.meta.url)) runService(() => startWeb());
