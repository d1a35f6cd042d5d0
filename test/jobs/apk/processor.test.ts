import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UnrecoverableError } from 'bullmq';
import { runBuild } from '../../../jobs/apk/processor.js';
import type { JobDeps } from '../../../jobs/deps.js';
import { createStorage, type Storage } from '../../../lib/storage/index.js';
import { env } from '../../helpers/env.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { fakeJob } from '../fake-job.js';
import {
  alive,
  fakeSigning,
  processesUnder,
  queuedBuild,
  SENTINEL_PASSWORD,
  stubWorkerPid,
  type FakeSigning,
} from './support.js';

/**
 * Issue 12 items 6, 10: the apk-build processor with the stub toolchain, called with a fake Job
 * against the real database and a local storage: success, a failing task, a hang past the time
 * limit, a cancel, a shutdown of a stub that ignores SIGTERM; the process group is gone after each.
 */
describe('apk-build processor (stub toolchain)', function () {
  this.timeout(120_000);
  let storage: Storage;
  let workRoot: string;
  let signing: FakeSigning;

  before(async () => {
    storage = createStorage({ driver: 'local', root: path.join(env.dir, 'storage') });
    signing = fakeSigning();
  });
  beforeEach(async () => {
    workRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'apk-work-'));
  });
  afterEach(() => fs.rm(workRoot, { recursive: true, force: true }));

  const deps = (stubEnv: Record<string, string> = {}, extra: Partial<NonNullable<JobDeps['apkBuild']>> = {}) =>
    ({
      knex: env.knex,
      storage,
      apkSigning: signing,
      apkBuild: {
        toolchain: { mode: 'stub' },
        workRoot,
        forceKillAfterMs: 1000,
        stubEnv: { APK_STUB_TASK_DELAY_MS: '30', ...stubEnv },
        ...extra,
      },
    }) satisfies JobDeps;

  const row = (f: TenantFixture, id: number) => f.scope.table('apk_builds').where({ id }).first();

  it('success: progress to 100, task lines in the job log, the stored APK matches size and sha256', async () => {
    const f = await makeTenant();
    const id = await queuedBuild(f);
    const fj = fakeJob({ build_id: id, tenant_id: f.tenant.id });
    const out = await runBuild(fj.job, deps());
    const r = await row(f, id);
    expect(out).to.include({ build_id: id, status: 'successful', toolchain: 'stub' });
    expect(r).to.include({ status: 'successful', progress: 100, toolchain: 'stub', runs: 1, error: null });
    expect(r.file_name).to.equal(`${f.tenant.slug}-portal-1.0.0-debug-stub.apk`);
    const numbers = fj.progress as number[];
    expect(numbers[numbers.length - 1]).to.equal(100);
    expect(numbers).to.deep.equal([...numbers].sort((x, y) => x - y));
    expect(
      numbers.some((p) => p > 10 && p < 95),
      numbers.join(','),
    ).to.equal(true);
    expect(fj.logs.filter((l) => l.startsWith('> Task :app:'))).to.have.length(21);
    expect(r.task_count).to.equal(21);
    const file = await storage.get(r.file_key);
    const chunks: Buffer[] = [];
    for await (const c of file.stream) chunks.push(c as Buffer);
    const bytes = Buffer.concat(chunks);
    expect(bytes.length).to.equal(r.size_bytes).and.to.be.greaterThan(100);
    expect(createHash('sha256').update(bytes).digest('hex')).to.equal(r.sha256);
    expect(bytes.subarray(0, 4).toString('latin1')).to.equal('PK\x03\x04');
    expect(bytes.includes(Buffer.from('STUB-BUILD.txt'))).to.equal(true);
    expect(signing.calls).to.include(`${f.tenant.id}/portal/debug`);
    expect(signing.modes.every((m) => m === 0o600)).to.equal(true);
    expect(r.log_key).to.be.a('string');
    expect(await processesUnder(workRoot)).to.deep.equal([]);
    const pid = stubWorkerPid(fj.logs);
    expect(pid).to.be.a('number');
    expect(await alive(pid!)).to.equal(false);
    // a second run of the same job finds the build finished and changes nothing
    const again = await runBuild(fakeJob({ build_id: id, tenant_id: f.tenant.id }).job, deps());
    expect(again.status).to.equal('skipped');
    expect((await row(f, id)).updated_at).to.deep.equal(r.updated_at);
  });

  it('the signing passwords never reach the job log, the row, the stored log or Redis (the stub prints them)', async () => {
    const f = await makeTenant();
    const id = await queuedBuild(f);
    const fj = fakeJob({ build_id: id, tenant_id: f.tenant.id });
    await runBuild(fj.job, deps({ APK_STUB_ECHO_SECRET: '1' }));
    const r = await row(f, id);
    expect(r.status).to.equal('successful');
    const echoed = fj.logs.find((l) => l.startsWith('stub: storePassword='));
    expect(echoed).to.equal('stub: storePassword=*** keyPassword ***');
    expect(fj.logs.join('\n')).not.to.include(SENTINEL_PASSWORD);
    expect(JSON.stringify(r)).not.to.include(SENTINEL_PASSWORD);
    const log = await storage.get(r.log_key);
    let text = '';
    for await (const c of log.stream) text += c.toString();
    expect(text).to.include('stub: storePassword=***');
    expect(text).not.to.include(SENTINEL_PASSWORD);
    const keys = await env.redis.keys('*');
    for (const k of keys) {
      const type = await env.redis.type(k);
      const v =
        type === 'string'
          ? await env.redis.get(k)
          : type === 'hash'
            ? JSON.stringify(await env.redis.hgetall(k))
            : type === 'list'
              ? JSON.stringify(await env.redis.lrange(k, 0, -1))
              : '';
      expect(v ?? '', k).not.to.include(SENTINEL_PASSWORD);
    }
  });

  it('a failing task: failed, no retry (UnrecoverableError), the last lines kept, no process of the group left', async () => {
    const f = await makeTenant();
    const id = await queuedBuild(f);
    const fj = fakeJob({ build_id: id, tenant_id: f.tenant.id });
    let err: unknown;
    await runBuild(fj.job, deps({ APK_STUB_FAIL_AT: 'compileDebugJava' })).catch((e) => (err = e));
    expect(err).to.be.instanceOf(UnrecoverableError);
    const r = await row(f, id);
    expect(r.status).to.equal('failed');
    expect(r.error).to.equal('Gradle failed with exit code 1; see the last lines of the log.');
    expect(r.log_tail).to.include("Execution failed for task ':app:compileDebugJavaWithJavac'.");
    expect(r.log_tail).to.include('> Task :app:compileDebugJavaWithJavac FAILED');
    expect(r.file_key).to.equal(null);
    expect(r.progress).to.be.greaterThan(10).and.lessThan(95);
    expect(await processesUnder(workRoot)).to.deep.equal([]);
    expect(await alive(stubWorkerPid(fj.logs)!)).to.equal(false);
  });

  it('a hang past the time limit (2 s): failed naming the limit, the group killed', async () => {
    const f = await makeTenant();
    const id = await queuedBuild(f);
    const fj = fakeJob({ build_id: id, tenant_id: f.tenant.id });
    const started = Date.now();
    let err: unknown;
    await runBuild(fj.job, deps({ APK_STUB_HANG: '1' }, { timeoutMs: 2000 })).catch((e) => (err = e));
    expect(Date.now() - started).to.be.lessThan(20_000);
    expect(err).to.be.instanceOf(UnrecoverableError);
    const r = await row(f, id);
    expect(r).to.include({ status: 'failed', error: 'The build exceeded its time limit of 2 s.' });
    // on a loaded machine the 2 s may run out before Gradle started; either way the step was stopped
    expect(r.log_tail).to.include('[app-builder] failed: The build exceeded its time limit of 2 s.');
    expect(await processesUnder(workRoot)).to.deep.equal([]);
    const pid = stubWorkerPid(fj.logs);
    if (pid) expect(await alive(pid)).to.equal(false);
  });

  it('cancel while running: the processor sees cancel_requested_at within ~2 s and ends cancelled', async () => {
    const f = await makeTenant();
    const id = await queuedBuild(f);
    const fj = fakeJob({ build_id: id, tenant_id: f.tenant.id }, (p) => {
      if (typeof p === 'number' && p >= 10)
        void f.scope
          .table('apk_builds')
          .where({ id })
          .update({ cancel_requested_at: new Date() })
          .then(() => undefined);
    });
    const started = Date.now();
    const out = await runBuild(fj.job, deps({ APK_STUB_HANG: '1' }, { timeoutMs: 60_000 }));
    expect(Date.now() - started).to.be.lessThan(15_000);
    expect(out.status).to.equal('cancelled');
    const r = await row(f, id);
    expect(r).to.include({ status: 'cancelled', error: null, file_key: null });
    expect(r.log_tail).to.include('[app-builder] cancelled');
    expect(await processesUnder(workRoot)).to.deep.equal([]);
  });

  it('shutdown (the worker signal) with a stub that ignores SIGTERM: failed "worker shut down", SIGKILL after the delay', async () => {
    const f = await makeTenant();
    const id = await queuedBuild(f);
    const ac = new AbortController();
    const fj = fakeJob({ build_id: id, tenant_id: f.tenant.id });
    const logSpy = fj.job.log.bind(fj.job);
    fj.job.log = async (line) => {
      if (line.startsWith('> Task :app:generateDebugBuildConfig')) ac.abort('worker shutdown');
      return logSpy(line);
    };
    let err: Error | undefined;
    await runBuild(fj.job, deps({ APK_STUB_IGNORE_SIGTERM: '1' }), ac.signal).catch((e) => (err = e));
    expect(err?.message).to.equal('worker shut down');
    const r = await row(f, id);
    expect(r).to.include({ status: 'failed', error: 'worker shut down' });
    expect(fj.logs).to.include('stub gradlew: SIGTERM ignored');
    expect(await processesUnder(workRoot)).to.deep.equal([]);
    expect(await alive(stubWorkerPid(fj.logs)!)).to.equal(false);
  });

  it('storage failure: failed, no file referenced', async () => {
    const f = await makeTenant();
    const id = await queuedBuild(f);
    const broken: Storage = {
      ...storage,
      put: async (key, source) => {
        if (key.endsWith('.apk')) {
          (source as NodeJS.ReadableStream & { destroy(): void }).destroy();
          throw new Error('disk full');
        }
        return storage.put(key, source, { maxBytes: 1 << 20 });
      },
      get: (k) => storage.get(k),
      delete: (k) => storage.delete(k),
      exists: (k) => storage.exists(k),
    };
    let err: unknown;
    await runBuild(fakeJob({ build_id: id, tenant_id: f.tenant.id }).job, { ...deps(), storage: broken }).catch(
      (e) => (err = e),
    );
    expect(err).to.be.instanceOf(UnrecoverableError);
    const r = await row(f, id);
    expect(r).to.include({
      status: 'failed',
      error: 'Storing the APK failed: disk full',
      file_key: null,
      sha256: null,
    });
  });
});
