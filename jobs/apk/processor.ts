import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UnrecoverableError } from 'bullmq';
import type { TenantScope } from '../../db/tenant-scope.js';
import { tenantScopeOf } from '../../db/tenant-routing.js';
import { searchPath } from '../../lib/config.js';
import type { Storage } from '../../lib/storage/index.js';
import type { JobDeps } from '../deps.js';
import type { JobLike } from '../queues.js';
import { BuildLog } from './build-log.js';
import { APK_BUILD_DEFAULTS, STUB_DIR, TEMPLATE_DIR, workRootOf, type ApkBuildOptions } from './options.js';
import { runCommand } from './run-command.js';
import type { ApkAppType, ApkBuildType, ApkSigningSource, SigningMaterial } from './signing.js';
import { checkHealth } from './toolchain.js';
import { apkFileName, writeTemplateValues, type BuildConfig } from './values.js';

/**
 * One build, start to end (issue 12 item 6). Claims the row (status running, a new run_id), copies
 * templates/android-app into a work directory, writes the values through the escapers, writes the
 * keystore (0600), runs `npm run build` in web/ (10%), then `./gradlew --no-daemon --console=plain
 * assemble<Type>` (10-95% from `> Task` lines against the last successful build's count), streams
 * the APK into storage with its SHA-256 (100%). The time limit, a cancel (cancel_requested_at, read
 * every 2 s) and the worker's AbortSignal (shutdown) stop the Gradle process group. Every write of
 * the row after the claim is conditional on run_id, so a run that lost the row (a stalled job ran
 * again elsewhere) changes nothing.
 */

/** What a run returns (bull-board shows it). */
export interface BuildOutcome {
  build_id: number;
  status: 'successful' | 'failed' | 'cancelled' | 'skipped';
  toolchain?: 'real' | 'stub';
  size_bytes?: number;
  sha256?: string;
}

/** Why a running build was stopped. */
type StopReason = 'cancel' | 'timeout' | 'shutdown' | 'superseded';

class StepFailed extends Error {}

interface BuildRow {
  id: number;
  tenant_id: number;
  app_type: ApkAppType;
  build_type: ApkBuildType;
  config: BuildConfig;
  version_name: string;
  runs: number;
  cancel_requested_at: Date | null;
}

/** An ApkSigningSource with no keystores (used when none is configured): release builds cannot run. */
const NO_SIGNING: ApkSigningSource = {
  hasReleaseKeystore: async () => false,
  writeKeystore: async () => {
    throw new Error('no keystore source is configured in this worker');
  },
};

/**
 * Runs the build of `job.data` (see the file comment).
 * @param deps knex, storage, apkSigning, apkBuild (JobDeps)
 * @param signal the worker's AbortSignal (shutdown)
 * @throws UnrecoverableError when the build failed; Error('worker shut down') when `signal` stopped it
 */
export async function runBuild(
  job: JobLike<{ build_id: number; tenant_id: number }>,
  deps: JobDeps,
  signal?: AbortSignal,
): Promise<BuildOutcome> {
  const { build_id: buildId, tenant_id: tenantId } = job.data;
  const knex = deps.knex;
  const storage = deps.storage;
  const opts: ApkBuildOptions = deps.apkBuild ?? { toolchain: { mode: 'auto' } };
  const runId = randomUUID();
  // the tenant's database after its cutover (issue 15 item 4); `knex` stays the shared one (tenants)
  const scope = await tenantScopeOf(knex, tenantId, deps.appKey, 'job');
  const row = await claim(scope, buildId, runId);
  if (!row) {
    const current = await scope.table('apk_builds').where({ id: buildId }).first('status');
    await job.log(`build ${buildId} is ${current?.status ?? 'gone'}: nothing to do`);
    return { build_id: buildId, status: 'skipped' };
  }
  const own = () => scope.table('apk_builds').where({ id: buildId, run_id: runId });
  const work = await fs.mkdtemp(path.join(workRootOf(opts), `apk-build-${buildId}-`));
  const project = path.join(work, 'project');
  const log = new BuildLog(job, [], path.join(work, 'build.log'));
  const stop = new AbortController();
  const stopWith = (r: StopReason) => !stop.signal.aborted && stop.abort(r);
  const onShutdown = () => stopWith('shutdown');
  if (signal?.aborted) onShutdown();
  signal?.addEventListener('abort', onShutdown, { once: true });
  const timeoutMs = opts.timeoutMs ?? APK_BUILD_DEFAULTS.timeoutMs;
  const timer = setTimeout(() => stopWith('timeout'), timeoutMs);
  let progress = 0;
  let written = 0;
  let writtenLines = 0;
  const setProgress = async (p: number) => {
    p = Math.max(progress, Math.min(100, Math.floor(p)));
    if (p === progress) return;
    progress = p;
    await job.updateProgress(p);
  };
  const poll = setInterval(() => {
    void (async () => {
      const r = await scope.table('apk_builds').where({ id: buildId }).first('run_id', 'cancel_requested_at');
      if (!r || r.run_id !== runId) return stopWith('superseded');
      if (r.cancel_requested_at) stopWith('cancel');
      // the tail too when only lines came (a step that prints and then waits must show its last lines)
      if (progress !== written || log.lines !== writtenLines) {
        written = progress;
        writtenLines = log.lines;
        await own().update({ progress, log_tail: log.tailText(), updated_at: new Date() });
      }
    })().catch(() => undefined);
  }, opts.cancelPollMs ?? APK_BUILD_DEFAULTS.cancelPollMs);
  let toolchain: 'real' | 'stub' = 'real';
  try {
    if (row.runs > 1)
      await log.note(`run ${row.runs}: the previous run of this build stopped (worker gone); building again`);
    if (row.cancel_requested_at) stopWith('cancel');
    const health = await checkHealth(opts.toolchain);
    toolchain = health.toolchain;
    await own().update({ toolchain, updated_at: new Date() });
    if (!health.ready) {
      const hints = health.items.filter((i) => i.status !== 'ok' && i.hint).map((i) => `${i.name}: ${i.hint}`);
      throw new StepFailed(`The ${toolchain} toolchain is not ready. ${hints.join(' ')}`.trim());
    }
    await log.note(`${row.app_type} ${row.build_type} build ${buildId}, ${toolchain} toolchain, limit ${timeoutMs} ms`);
    await prepareProject(project, toolchain, opts);
    await writeTemplateValues(project, row.config);
    const signing = await writeSigning(deps.apkSigning ?? NO_SIGNING, row, work, toolchain, health, log);
    await setProgress(5);
    stop.signal.throwIfAborted();

    const env = childEnv(opts, toolchain, signing);
    await log.note('web: npm run build');
    const web = await runCommand('npm', ['run', 'build'], {
      cwd: path.join(project, 'web'),
      env,
      signal: stop.signal,
      forceKillAfterMs: opts.forceKillAfterMs ?? APK_BUILD_DEFAULTS.forceKillAfterMs,
      onLine: (l) => log.add(l),
    });
    stop.signal.throwIfAborted();
    if (web.exitCode !== 0) throw new StepFailed(`The web step (npm run build) failed with exit code ${web.exitCode}.`);
    await setProgress(10);

    const expected = await expectedTasks(scope, row, toolchain);
    const task = row.build_type === 'release' ? 'assembleRelease' : 'assembleDebug';
    await log.note(`gradle: ./gradlew --no-daemon --console=plain ${task}`);
    const gradle = await runCommand('./gradlew', ['--no-daemon', '--console=plain', task], {
      cwd: project,
      env,
      signal: stop.signal,
      forceKillAfterMs: opts.forceKillAfterMs ?? APK_BUILD_DEFAULTS.forceKillAfterMs,
      onLine: async (l) => {
        await log.add(l);
        if (log.tasks) await setProgress(10 + (85 * Math.min(log.tasks, expected)) / expected);
      },
    });
    stop.signal.throwIfAborted();
    if (gradle.exitCode !== 0)
      throw new StepFailed(
        `Gradle failed with exit code ${gradle.exitCode ?? gradle.signal}; see the last lines of the log.`,
      );
    await setProgress(95);

    const apk = await findApk(project, row.build_type);
    const tenant = await knex('tenants').where({ id: tenantId }).first('slug');
    const fileName = apkFileName(
      tenant?.slug ?? `tenant-${tenantId}`,
      row.app_type,
      row.version_name,
      row.build_type,
      toolchain,
    );
    if (!storage) throw new StepFailed('No file storage is configured in this worker.');
    const key = `tenants/${tenantId}/apk-builds/${buildId}/${fileName}`;
    await log.note(`storing ${fileName}`);
    const stored = await storage
      .put(key, createReadStream(apk), { maxBytes: opts.maxApkBytes ?? APK_BUILD_DEFAULTS.maxApkBytes })
      .catch((e: Error) => {
        throw new StepFailed(`Storing the APK failed: ${e.message}`, { cause: e });
      });
    await log.note(`stored ${stored.size} bytes, sha256 ${stored.sha256}`);
    await log.close();
    const logKey = await storeLog(storage, work, tenantId, buildId);
    const n = await own().update({
      status: 'successful',
      progress: 100,
      file_key: key,
      file_name: fileName,
      size_bytes: stored.size,
      sha256: stored.sha256,
      task_count: log.tasks,
      log_key: logKey,
      log_tail: log.tailText(),
      error: null,
      finished_at: new Date(),
      updated_at: new Date(),
    });
    if (!n) {
      await storage.delete(key).catch(() => undefined);
      return { build_id: buildId, status: 'skipped' };
    }
    await setProgress(100);
    return { build_id: buildId, status: 'successful', toolchain, size_bytes: stored.size, sha256: stored.sha256 };
  } catch (err) {
    const reason = stop.signal.aborted ? (stop.signal.reason as StopReason) : null;
    if (reason === 'superseded') return { build_id: buildId, status: 'skipped' };
    const message =
      reason === 'cancel'
        ? 'Cancelled by a user.'
        : reason === 'timeout'
          ? `The build exceeded its time limit of ${Math.round(timeoutMs / 1000)} s.`
          : reason === 'shutdown'
            ? 'worker shut down'
            : err instanceof StepFailed
              ? err.message
              : `The build failed: ${(err as Error)?.message ?? String(err)}`;
    await log.note(reason === 'cancel' ? 'cancelled' : `failed: ${message}`).catch(() => undefined);
    await log.close();
    const logKey = storage ? await storeLog(storage, work, tenantId, buildId) : null;
    await own().update({
      status: reason === 'cancel' ? 'cancelled' : 'failed',
      progress, // where it stopped (the 2 s tick may not have written it yet)
      error: reason === 'cancel' ? null : message,
      log_tail: log.tailText(),
      log_key: logKey,
      finished_at: new Date(),
      updated_at: new Date(),
    });
    if (reason === 'cancel') return { build_id: buildId, status: 'cancelled', toolchain };
    if (reason === 'shutdown') throw new Error('worker shut down', { cause: err });
    throw Object.assign(new UnrecoverableError(message), { cause: err });
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
    signal?.removeEventListener('abort', onShutdown);
    await log.close();
    await fs.rm(work, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Takes the row for this run: queued (or running after a lost run) -> running, new run_id. */
async function claim(scope: TenantScope, id: number, runId: string): Promise<BuildRow | null> {
  const [row] = await scope
    .table('apk_builds')
    .where({ id })
    .whereIn('status', ['queued', 'running'])
    .update({
      status: 'running',
      run_id: runId,
      runs: scope.knex.raw('runs + 1'),
      progress: 0,
      error: null,
      started_at: new Date(),
      updated_at: new Date(),
    })
    .returning(['id', 'tenant_id', 'app_type', 'build_type', 'config', 'version_name', 'runs', 'cancel_requested_at']);
  return (row as BuildRow | undefined) ?? null;
}

/** Copies the template (and, for the stub, its gradlew) into `project`. */
async function prepareProject(project: string, toolchain: 'real' | 'stub', opts: ApkBuildOptions): Promise<void> {
  const template = opts.templateDir ?? TEMPLATE_DIR;
  const skip = new Set(['build', '.gradle', 'node_modules']);
  await fs.cp(template, project, {
    recursive: true,
    filter: (src) => !skip.has(path.basename(src)),
  });
  if (toolchain === 'stub') {
    const stub = opts.stubDir ?? STUB_DIR;
    for (const f of await fs.readdir(stub)) await fs.copyFile(path.join(stub, f), path.join(project, f));
  }
  await fs.chmod(path.join(project, 'gradlew'), 0o755);
}

/** Writes the keystore (0600) unless the stub runs on a machine without keytool. */
async function writeSigning(
  source: ApkSigningSource,
  row: BuildRow,
  work: string,
  toolchain: 'real' | 'stub',
  health: Awaited<ReturnType<typeof checkHealth>>,
  log: BuildLog,
): Promise<SigningMaterial | null> {
  const keytool = health.items.find((i) => i.name === 'keytool')?.status === 'ok';
  if (toolchain === 'stub' && !keytool) {
    await log.note('stub toolchain without keytool: the stub APK is not signed');
    return null;
  }
  const dir = path.join(work, 'signing');
  await fs.mkdir(dir, { mode: 0o700 });
  const material = await source.writeKeystore(row.tenant_id, row.app_type, row.build_type, dir).catch((e: Error) => {
    throw new StepFailed(`The ${row.build_type} signing key is not available: ${e.message}`);
  });
  log.addSecrets(material.storePassword, material.keyPassword);
  await fs.chmod(material.storeFile, 0o600);
  await log.note(`signing with the ${row.build_type} key "${material.keyAlias}" (${material.storeType})`);
  return material;
}

/** The environment of npm and Gradle: nothing of the worker's own, signing passwords only here. */
function childEnv(
  opts: ApkBuildOptions,
  toolchain: 'real' | 'stub',
  s: SigningMaterial | null,
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: searchPath(),
    HOME: os.homedir(),
    LANG: 'C.UTF-8',
    CI: 'true',
    GRADLE_OPTS: '-Dorg.gradle.daemon=false',
  };
  if (opts.toolchain.javaHome) env.JAVA_HOME = opts.toolchain.javaHome;
  if (opts.toolchain.androidHome) env.ANDROID_HOME = env.ANDROID_SDK_ROOT = opts.toolchain.androidHome;
  if (toolchain === 'stub') Object.assign(env, opts.stubEnv ?? {});
  if (s) {
    env.APK_STORE_FILE = s.storeFile;
    env.APK_STORE_TYPE = s.storeType;
    env.APK_STORE_PASSWORD = s.storePassword;
    env.APK_KEY_ALIAS = s.keyAlias;
    env.APK_KEY_PASSWORD = s.keyPassword;
  }
  return env;
}

/** `> Task` lines of the last successful build with the same toolchain and type (the 10-95% scale). */
async function expectedTasks(scope: TenantScope, row: BuildRow, toolchain: 'real' | 'stub'): Promise<number> {
  const last = await scope
    .table('apk_builds')
    .where({ status: 'successful', toolchain, build_type: row.build_type })
    .whereNotNull('task_count')
    .orderBy('finished_at', 'desc')
    .first('task_count');
  return Math.max(1, Number(last?.task_count ?? (toolchain === 'stub' ? 21 : 40)));
}

/** The APK Gradle wrote for the build type. @throws StepFailed when there is none */
async function findApk(project: string, buildType: ApkBuildType): Promise<string> {
  const dir = path.join(project, 'app', 'build', 'outputs', 'apk', buildType);
  const files = (await fs.readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.apk'));
  const pick = files.find((f) => !f.includes('unsigned')) ?? files[0];
  if (!pick) throw new StepFailed(`Gradle finished but wrote no APK under app/build/outputs/apk/${buildType}.`);
  return path.join(dir, pick);
}

/** Stores the redacted build log; null when it cannot (the row's log_tail still has the end). */
async function storeLog(storage: Storage, work: string, tenantId: number, buildId: number): Promise<string | null> {
  const key = `tenants/${tenantId}/apk-builds/${buildId}/build.log`;
  try {
    await storage.put(key, createReadStream(path.join(work, 'build.log')), { maxBytes: 50 * 1024 * 1024 });
    return key;
  } catch {
    return null;
  }
}
