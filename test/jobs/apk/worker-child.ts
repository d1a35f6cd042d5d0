/**
 * A real worker process for test/jobs/apk/worker-process.test.ts (not a spec file): runs the
 * `apk-build` queue through workers/main.ts startWorkers with the default registry, that is the
 * sandboxed processor workers/sandboxed/apk-build.ts in a child process of its own, which builds its
 * dependencies from this process's environment (DATABASE_URL, APP_KEY, DATA_DIR, APK_TOOLCHAIN,
 * APK_STUB_*). Environment: DATABASE_URL, REDIS_URL, QUEUE_PREFIX, SHUTDOWN_GRACE_MS. Prints
 * "READY" once started; SIGTERM closes the workers like the worker process does.
 */
import { createKnex } from '../../../db/knex.js';
import { createLogger } from '../../../lib/logger.js';
import { startWorkers } from '../../../workers/main.js';

const need = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

const knex = createKnex(need('DATABASE_URL'), { min: 0, max: 2 });
const handle = await startWorkers({
  redisUrl: need('REDIS_URL'),
  knex,
  prefix: need('QUEUE_PREFIX'),
  logger: createLogger('warn'),
  queues: ['apk-build'],
  shutdownGraceMs: Number(need('SHUTDOWN_GRACE_MS')),
  lockDurationMs: 2000,
  stalledIntervalMs: 1000,
});
process.stdout.write('READY\n');
process.once('SIGTERM', () => {
  const started = Date.now();
  handle
    .close()
    .then(() => knex.destroy())
    .then(
      () => {
        process.stdout.write(`CLOSED ${Date.now() - started}\n`);
        process.exit(0);
      },
      () => process.exit(1),
    );
});
