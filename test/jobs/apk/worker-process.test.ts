import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { env } from '../../helpers/env.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { createQueues, type Queues } from '../../../jobs/queues.js';
import { buildJobId, enqueueBuild } from '../../../jobs/apk-build.js';
import { alive, childrenOf, processesUnder, queuedBuild } from './support.js';

const CHILD = 'test/jobs/apk/worker-child.ts';
type Child = ResultPromise<{ reject: false; timeout: number }> & { output: () => string };

/**
 * Issue 12 "Bad input and failure": a real worker process with the sandboxed processor
 * (workers/sandboxed/apk-build.ts) and the stub toolchain. SIGTERM ends a running build `failed`
 * ("worker shut down") within the shutdown window, Gradle's group killed even though it ignores
 * SIGTERM; kill -9 of the worker leaves no build `running`, no process of the group behind and no
 * orphaned sandboxed child.
 */
describe('apk-build in a real worker process (sandboxed processor, SIGTERM, kill -9)', function () {
  this.timeout(600_000);
  const children: Child[] = [];
  let tmp: string;
  let queues: Queues;
  let prefix: string;

  before(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'apk-proc-'));
    prefix = `{apkproc-${process.pid}-${Date.now()}}`;
    queues = createQueues(env.redisUrl, { prefix });
  });
  after(async () => {
    for (const c of children) {
      if (c.exitCode === undefined || c.exitCode === null) c.kill('SIGKILL');
      await c;
    }
    await queues.close();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  function startChild(stubEnv: Record<string, string>): Child {
    const child = execa(process.execPath, ['--import', 'tsx', CHILD], {
      env: {
        ...process.env,
        DATABASE_URL: env.databaseUrl,
        REDIS_URL: env.redisUrl,
        APP_KEY: randomBytes(32).toString('hex'),
        DATA_DIR: path.join(tmp, 'data'),
        TMPDIR: tmp,
        QUEUE_PREFIX: prefix,
        SHUTDOWN_GRACE_MS: '25000',
        // SIGKILL for the group that ignores SIGTERM after 2 s instead of the default 10 s waited out
        APK_FORCE_KILL_AFTER_MS: '2000',
        APK_TOOLCHAIN: 'stub',
        APK_STUB_TASK_DELAY_MS: '50',
        LOG_LEVEL: 'warn',
        ...stubEnv,
      },
      reject: false,
      timeout: 540_000,
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    children.push(Object.assign(child, { output: () => out }));
    return children[children.length - 1];
  }

  async function until<T>(what: string, fn: () => Promise<T>, ms = 240_000): Promise<NonNullable<T>> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      if (Date.now() > end)
        throw new Error(
          `timed out waiting for ${what}; children: ${children
            .map((c) => c.output())
            .join('\n---\n')
            .slice(-3000)}`,
        );
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  const row = (f: TenantFixture, id: number) => f.scope.table('apk_builds').where({ id }).first();
  const hanging = (f: TenantFixture, id: number) =>
    until('the stub to hang', async () => ((await row(f, id)).log_tail ?? '').includes('stub: hanging'));

  it('SIGTERM: the running build ends failed "worker shut down" within the shutdown window, no process left', async () => {
    const worker = startChild({ APK_STUB_HANG: '1', APK_STUB_IGNORE_SIGTERM: '1' });
    await until('READY', async () => worker.output().includes('READY'));
    const f = await makeTenant();
    const id = await queuedBuild(f);
    await enqueueBuild(queues.get('apk-build'), { id, tenant_id: f.tenant.id });
    await hanging(f, id);
    expect((await row(f, id)).status).to.equal('running');
    expect((await processesUnder(tmp)).length).to.be.greaterThan(0);
    process.kill(worker.pid!, 'SIGTERM'); // not worker.kill(): execa would SIGKILL it after 5 s
    const res = await worker;
    expect(res.exitCode, worker.output()).to.equal(0);
    const closedMs = Number(/CLOSED (\d+)/.exec(worker.output())?.[1]);
    expect(closedMs).to.be.lessThan(25_000);
    const r = await row(f, id);
    expect(r).to.include({ status: 'failed', error: 'worker shut down' });
    expect(r.log_tail).to.include('stub gradlew: SIGTERM ignored');
    expect(await processesUnder(tmp)).to.deep.equal([]);
    const job = await queues.get('apk-build').getJob(buildJobId(id));
    expect(await job!.getState()).to.equal('failed');
  });

  it('kill -9 of the worker: the build is not left running, its job finishes, no process of the group left', async () => {
    const a = startChild({ APK_STUB_HANG: '1' });
    await until('READY', async () => a.output().includes('READY'));
    const f = await makeTenant();
    const id = await queuedBuild(f);
    await enqueueBuild(queues.get('apk-build'), { id, tenant_id: f.tenant.id });
    await hanging(f, id);
    const sandboxed = await childrenOf(a.pid!);
    expect(sandboxed, 'the sandboxed processor runs in a child of the worker').to.have.length.greaterThan(0);
    a.kill('SIGKILL');
    await a;
    // a second worker picks the stalled job up once the lock expired
    const b = startChild({});
    await until('READY', async () => b.output().includes('READY'));
    const job = await until('the stalled job to end', async () => {
      const j = await queues.get('apk-build').getJob(buildJobId(id));
      const state = await j?.getState();
      return state === 'completed' || state === 'failed' ? state : null;
    });
    const r = await until('the build to end', async () => {
      const x = await row(f, id);
      return ['successful', 'failed'].includes(x.status) ? x : null;
    });
    // either the orphaned run stopped it (failed) or the stalled job built it again (successful)
    expect(['failed', 'successful']).to.include(r.status);
    if (r.status === 'failed') expect(r.error).to.equal('worker shut down');
    else expect(r.runs).to.equal(2);
    expect(['completed', 'failed']).to.include(job);
    await until('no process left', async () => (await processesUnder(tmp)).length === 0, 20_000);
    // the orphaned sandboxed child exits (it used to spin at full CPU for good: see workers/sandboxed/apk-build.ts)
    const orphans = async () => (await Promise.all(sandboxed.map(alive))).every((x) => !x);
    await until("the killed worker's sandboxed child to exit", orphans, 30_000);
    process.kill(b.pid!, 'SIGTERM');
    await b;
  });
});
