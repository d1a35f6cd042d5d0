/**
 * The sandboxed processor of the `apk-build` queue (issue 12 item 6; DESIGN.md §3 workers/sandboxed):
 * BullMQ forks a child process per concurrent job slot and calls this file's default export there, so
 * a Gradle build (minutes, hundreds of MB) never blocks or bloats the worker process itself.
 *
 * The child builds its own dependencies on first use from the configuration it inherits (DATABASE_URL,
 * APP_KEY, S3_* or DATA_DIR, APK_*): a knex pool of two, the storage driver, the keystore source
 * (jobs/apk/default-signing.ts) and the build options. The build stops (its Gradle process group is
 * killed) when
 * - the worker cancels the job (its AbortSignal: shutdown),
 * - this child gets SIGTERM (a whole process group stopped by a process manager),
 * - the worker process disappears (kill -9: the IPC channel closes); the row is then marked failed
 *   by this run, and the stalled job finds it finished.
 */
import { createKnex } from '../../db/knex.js';
import { loadServerConfig } from '../../lib/config.js';
import { createStorage } from '../../lib/storage/index.js';
import type { JobDeps } from '../../jobs/deps.js';
import { runBuild, type BuildOutcome } from '../../jobs/apk/processor.js';
import { apkBuildOptionsFrom } from '../../jobs/apk/options.js';
import { defaultApkSigningSource } from '../../jobs/apk/default-signing.js';
import type { ApkBuildData } from '../../jobs/apk-build.js';
import type { JobLike } from '../../jobs/queues.js';

let deps: JobDeps | null = null;
const local = new AbortController();
let current: Promise<unknown> | null = null;

function depsOnce(): JobDeps {
  if (deps) return deps;
  const config = loadServerConfig();
  const knex = createKnex(config.databaseUrl, { min: 0, max: 2 });
  deps = {
    knex,
    storage: createStorage(config.storage),
    apkSigning: defaultApkSigningSource(knex, config.appKey),
    apkBuild: apkBuildOptionsFrom(config.apk, config.storage.driver === 'local' ? config.storage.root : undefined),
  };
  return deps;
}

process.on('SIGTERM', () => local.abort('worker shut down'));
/*
 * Once the worker process is gone every message to it is refused, and BullMQ's child turns the
 * refused "job failed" message into an unhandled rejection, its uncaughtException handler sends
 * again, is refused again, and so on: a microtask loop that never yields, so the exit below never
 * ran and the orphan spun at full CPU for good (kill -9 of a worker mid-build). Without a parent
 * such rejections are dropped; with one they stay uncaught exceptions as before.
 */
process.on('unhandledRejection', (reason) => {
  if (process.connected) throw reason;
});
process.on('disconnect', () => {
  local.abort('worker gone');
  const exit = () => process.exit(0);
  setTimeout(exit, 20_000).unref();
  void Promise.resolve(current)
    .catch(() => undefined)
    .finally(() => deps?.knex.destroy().finally(exit));
});

/** BullMQ's entry: `(job, token, signal)`. @see runBuild */
export default async function apkBuildSandboxed(
  job: JobLike<ApkBuildData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<BuildOutcome> {
  const stop = signal ? AbortSignal.any([signal, local.signal]) : local.signal;
  const run = runBuild(job, depsOnce(), stop);
  current = run;
  try {
    return await run;
  } finally {
    current = null;
  }
}
