/**
 * A real `wabot-send` worker process for the wabot-throttle benchmark and the multi-process tests
 * (test/jobs/wabot/workers.test.ts): workers/main.ts startWorkers on the wabot-send queue only,
 * with the tenants' chat configurations given in memory (the secrets of the local fake gateway's
 * accounts, never real ones).
 *
 * Environment: DATABASE_URL, REDIS_URL, QUEUE_PREFIX, WABOT_KEY_PREFIX, WABOT_CONFIGS (JSON array
 * of ChatSendConfig), WABOT_TIME_SCALE, CONCURRENCY (default 10), LOCK_MS and STALLED_MS (BullMQ
 * lockDuration and stalledInterval, default BullMQ's), TIMEOUT_MS (provider call, default 10000),
 * GRANT_LOG (grant-log entries kept per account, default 0). Prints "READY" once started; SIGTERM
 * closes it (exit 0).
 */
import { createKnex } from '../../db/knex.js';
import { createLogger } from '../../lib/logger.js';
import { loadConfig } from '../../lib/config.js';
import { startWorkers } from '../../workers/main.js';
import * as wabotSend from '../../jobs/wabot-send.js';
import type { ChatSendConfig } from '../../jobs/wabot/send-config.js';

// eslint-disable-next-line no-restricted-properties -- a bench/test process reads its own knobs
const env = process.env;
const need = (name: string): string => {
  const v = env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};
const num = (name: string): number | undefined => (env[name] ? Number(env[name]) : undefined);

const knex = createKnex(need('DATABASE_URL'), { min: 0, max: 10 });
const configs = new Map((JSON.parse(need('WABOT_CONFIGS')) as ChatSendConfig[]).map((c) => [c.tenantId, c]));
const handle = await startWorkers({
  redisUrl: need('REDIS_URL'),
  knex,
  prefix: need('QUEUE_PREFIX'),
  logger: createLogger(env.LOG_LEVEL || 'warn'),
  queues: ['wabot-send'],
  registry: { 'wabot-send': { processor: wabotSend.process, concurrency: num('CONCURRENCY') ?? 10 } },
  chatConfig: async (tenantId) => configs.get(tenantId) ?? null,
  chatSend: {
    timeScale: loadConfig(env).wabotTimeScale,
    keyPrefix: need('WABOT_KEY_PREFIX'),
    grantLog: num('GRANT_LOG') ?? 0,
    timeoutMs: num('TIMEOUT_MS'),
  },
  lockDurationMs: num('LOCK_MS'),
  stalledIntervalMs: num('STALLED_MS'),
  shutdownGraceMs: 5000,
});
process.stdout.write('READY\n');
process.once('SIGTERM', () => {
  handle
    .close()
    .then(() => knex.destroy())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
});
