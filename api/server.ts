import { closeTenantPools } from '../db/tenant-pools.js';
import type http from 'node:http';
import { isMainModule, listenUntilClosed, runService } from '../lib/process.js';
import { loadServerConfig } from '../lib/config.js';
import { createBoundedRedis } from '../lib/redis.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { createKnex } from '../db/knex.js';
import { createQueues } from '../jobs/queues.js';
import { createStorage } from '../lib/storage/index.js';
import { createApp } from './app.js';
import { apkBuildOptionsFrom } from '../jobs/apk/options.js';
import { defaultApkSigningSource } from '../jobs/apk/default-signing.js';
import { handleWebClientErrors } from './middleware/errors.js';
import { createLimitedServer } from './http/server-limits.js';
import { serviceBounds } from './http/service-bounds.js';

/**
 * The `web` process: builds the app from the configuration (lib/config.ts; `env` defaults to the
 * process's) and listens on PORT. close() (SIGTERM/SIGINT through runService) stops listening, lets
 * the requests in flight finish within SHUTDOWN_GRACE_MS (lib/process.ts closeHttpServer), then
 * closes the queues, Redis and the database pool. Redis and PostgreSQL calls are bounded in time and
 * the HTTP server limits slow and greedy clients (issue 7; api/http/service-bounds.ts, server-limits.ts).
 * @returns the server, close(), the grace period in ms and the logger
 * @throws ConfigError naming a missing or malformed variable
 */
export async function startWeb(
  env?: NodeJS.ProcessEnv,
): Promise<{ server: http.Server; close(): Promise<void>; graceMs: number; logger: Logger }> {
  const config = loadServerConfig(env);
  const logger = createLogger(config.logLevel);
  const bounds = serviceBounds(config);
  const knex = createKnex(config.databaseUrl, undefined, { ...bounds.db, logger });
  const redis = createBoundedRedis(config.redisUrl, bounds.redis, bounds.redisErrorLog(logger));
  const queues = createQueues(config.redisUrl, { bounds: bounds.redis, enqueueTimeoutMs: bounds.enqueueTimeoutMs });
  void queues.ping(bounds.redis.connectTimeoutMs); // opens the producer connection now, not in the first enqueue
  const { app } = createApp({
    knex,
    redis,
    logger,
    queues,
    storage: createStorage(config.storage),
    config: {
      publicBaseUrl: config.publicBaseUrl,
      trustProxy: config.trustProxy,
      rateLimit: { points: config.externalRateLimit, durationSeconds: 60 },
      secureCookies: config.publicBaseUrl.startsWith('https:'),
      loginIpLimit: config.abuse.loginIpLimit,
      appKey: config.appKey,
      provisioning: { mailDomain: config.platformMailDomain, dnsTarget: config.provisioningDnsTarget },
      apk: {
        toolchain: apkBuildOptionsFrom(config.apk, config.storage.driver === 'local' ? config.storage.root : undefined)
          .toolchain,
        signing: defaultApkSigningSource(knex, config.appKey),
      },
    },
  });
  const server = createLimitedServer(app.callback(), bounds.http, {
    status: 429,
    body: { message: 'Too many open connections from your address. Retry later.', code: 'RATE_LIMITED' },
    retryAfterSeconds: 5,
  });
  handleWebClientErrors(server, logger); // Node's own 400/408/431 as JSON (issue 7)
  const graceMs = config.shutdownGraceMs;
  const close = await listenUntilClosed(server, {
    port: config.port,
    name: 'web',
    url: config.publicBaseUrl,
    graceMs,
    logger,
    release: async () => {
      await queues.close();
      redis.disconnect();
      await closeTenantPools();
      await knex.destroy();
    },
  });
  return { server, close, graceMs, logger };
}

if (isMainModule(import.meta.url)) runService(() => startWeb());
