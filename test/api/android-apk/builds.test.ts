import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { createLogger } from '../../../lib/logger.js';
import { startWorkers, type WorkerHandle } from '../../../workers/main.js';
import * as apkBuild from '../../../jobs/apk-build.js';
import { fakeSigning, type FakeSigning } from '../../jobs/apk/support.js';
import { portalConfig } from './configs.test.js';

/** Polls `fn` until it returns a truthy value (bounded). */
async function until<T>(what: string, fn: () => Promise<T>, ms = 60_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Issue 12 items 5-7: builds through the API and a real worker (in-process processor, stub toolchain). */
describe('/api/android-apk builds (real worker, stub toolchain)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let worker: WorkerHandle;
  let signing: FakeSigning;
  // while this file exists, the stub waits before each task: the cancel test holds its build running
  const holdFile = path.join(os.tmpdir(), `apk-hold-${process.pid}-${Date.now()}`);

  before(async () => {
    signing = fakeSigning();
    app = await startTestApp({ apk: { toolchain: { mode: 'stub' }, signing } });
    worker = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      prefix: app.queues.prefix,
      queues: ['apk-build'],
      storage: app.storage,
      logger: createLogger('silent'),
      apkSigning: signing,
      apkBuild: {
        toolchain: { mode: 'stub' },
        forceKillAfterMs: 1000,
        cancelPollMs: 250, // the cancel is seen within a quarter second (production: 2 s)
        stubEnv: { APK_STUB_TASK_DELAY_MS: '60', APK_STUB_HOLD_FILE: holdFile },
      },
      registry: {
        'apk-build': {
          processor: apkBuild.process,
          concurrency: 1,
          onFailed: (job, err) => apkBuild.failOrphanedBuild(env.knex, job.data, err.message).then(() => undefined),
        },
      },
    });
  });
  after(async () => {
    await worker?.close();
  });

  const configure = async (f: TenantFixture, extra: Record<string, unknown> = {}, appType = 'portal') => {
    const res = await app.request('PUT', `/api/android-apk/configs/${appType}`, {
      token: f.adminToken,
      body: portalConfig(extra),
    });
    expect(res.status, res.text).to.equal(200);
  };
  const start = (f: TenantFixture, buildType = 'debug', appType = 'portal') =>
    app.request('POST', `/api/android-apk/configs/${appType}/builds`, {
      token: f.adminToken,
      body: { build_type: buildType },
    });
  const show = async (f: TenantFixture, id: number) =>
    (await app.request('GET', `/api/android-apk/builds/${id}`, { token: f.adminToken })).body.data;
  const finished = (f: TenantFixture, id: number) =>
    until(`build ${id} to finish`, async () => {
      const b = await show(f, id);
      return ['successful', 'failed', 'cancelled'].includes(b.status) ? b : null;
    });

  it('debug build: 202 queued, runs to successful, log, list, download with the stored size and SHA-256', async () => {
    const f = await makeTenant();
    await configure(f);
    const res = await start(f);
    expect(res.status, res.text).to.equal(202);
    expect(res.body.data).to.include({ status: 'queued', progress: 0, build_type: 'debug', toolchain: 'stub' });
    expect(res.body.data.config).to.include({ app_name: 'Demo Portal', package_id: 'id.demoisp.portal' });
    const b = await finished(f, res.body.data.id);
    expect(b).to.include({ status: 'successful', progress: 100, error: null });
    expect(b.download_url).to.equal(`/api/android-apk/builds/${b.id}/download`);
    expect(b.file_name).to.equal(`${f.tenant.slug}-portal-1.0.0-debug-stub.apk`);

    const dl = await fetch(`${app.url}${b.download_url}`, { headers: { Authorization: `Bearer ${f.adminToken}` } });
    expect(dl.status).to.equal(200);
    expect(dl.headers.get('content-type')).to.equal('application/vnd.android.package-archive');
    expect(dl.headers.get('content-disposition')).to.equal(`attachment; filename=${b.file_name}`);
    const bytes = Buffer.from(await dl.arrayBuffer());
    expect(bytes.length).to.equal(b.size_bytes);
    expect(createHash('sha256').update(bytes).digest('hex')).to.equal(b.sha256);
    expect(dl.headers.get('x-checksum-sha256')).to.equal(b.sha256);

    const log = await app.request('GET', `/api/android-apk/builds/${b.id}/log`, { token: f.adminToken });
    expect(log.status).to.equal(200);
    expect(log.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    expect(log.text).to.include('> Task :app:assembleDebug');
    expect(log.text).to.include('BUILD SUCCESSFUL');
    const list = await app.request('GET', '/api/android-apk/builds?status=successful', { token: f.adminToken });
    expect(list.body).to.include({ total: 1, current_page: 1 });
    expect(list.body.data[0].id).to.equal(b.id);
    const overview = await app.request('GET', '/api/android-apk', { token: f.adminToken });
    expect(overview.body.data.builds.map((x: { id: number }) => x.id)).to.deep.equal([b.id]);
    const audit = await f.scope.table('audit_log').where({ action: 'app_builder.build_started' });
    expect(audit).to.have.length(1);
    expect(audit[0]).to.include({ subject_type: 'apk_builds', subject_id: b.id });
  });

  it('refusals: a second build (build), disabled app (enabled), release with debug signing and no keystore', async () => {
    const f = await makeTenant();
    const none = await start(f);
    expect(none.status).to.equal(422);
    expect(Object.keys(none.body.errors)).to.deep.equal(['config']);
    await configure(f);
    const first = await start(f);
    expect(first.status).to.equal(202);
    const second = await start(f, 'debug', 'portal');
    expect(second.status).to.equal(422);
    expect(second.body.code).to.equal('INVALID_TRANSITION');
    expect(Object.keys(second.body.errors)).to.deep.equal(['build']);
    await finished(f, first.body.data.id);
    const release = await start(f, 'release');
    expect(release.status).to.equal(422);
    expect(Object.keys(release.body.errors).sort()).to.deep.equal(['keystore', 'signing_mode']);
    await configure(f, { enabled: false });
    const disabled = await start(f);
    expect(disabled.status).to.equal(422);
    expect(Object.keys(disabled.body.errors)).to.deep.equal(['enabled']);
    expect(await f.scope.table('apk_builds').count({ n: '*' }).first()).to.deep.equal({ n: 1 });
  });

  it('release: signed with the app type key; the same version code again is refused (version_code)', async () => {
    const f = await makeTenant();
    await configure(f, { signing_mode: 'release', version_code: 5 });
    signing.release.add(`${f.tenant.id}/portal`);
    const res = await start(f, 'release');
    expect(res.status, res.text).to.equal(202);
    const b = await finished(f, res.body.data.id);
    expect(b.status).to.equal('successful');
    expect(b.file_name).to.equal(`${f.tenant.slug}-portal-1.0.0-release-stub.apk`);
    expect(signing.calls).to.include(`${f.tenant.id}/portal/release`);
    const again = await start(f, 'release');
    expect(again.status).to.equal(422);
    expect(Object.keys(again.body.errors)).to.deep.equal(['version_code']);
    await configure(f, { signing_mode: 'release', version_code: 6 });
    expect((await start(f, 'release')).status).to.equal(202);
    await until(
      'the second release',
      async () => !(await f.scope.table('apk_builds').whereIn('status', ['queued', 'running']).first()),
    );
  });

  it('a demo tenant: release 403 demo_guard_blocked (nothing saved), debug allowed', async () => {
    const f = await makeTenant({ demo: true });
    await configure(f, { signing_mode: 'release' });
    signing.release.add(`${f.tenant.id}/portal`);
    const res = await start(f, 'release');
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('demo_guard_blocked');
    expect(await f.scope.table('apk_builds').count({ n: '*' }).first()).to.deep.equal({ n: 0 });
    const debug = await start(f, 'debug');
    expect(debug.status, debug.text).to.equal(202);
    await finished(f, debug.body.data.id);
  });

  it('cancel a running build: 202, it ends cancelled within seconds; a finished build: 422 INVALID_TRANSITION', async () => {
    const f = await makeTenant();
    await configure(f);
    await fs.writeFile(holdFile, 'hold');
    let id = 0;
    let status: string | undefined;
    try {
      const res = await start(f);
      id = res.body.data.id;
      await until('the build to run', async () => (await show(f, id)).status === 'running');
      const cancel = await app.request('POST', `/api/android-apk/builds/${id}/cancel`, { token: f.adminToken });
      expect(cancel.status, cancel.text).to.equal(202);
      expect(cancel.body.data.cancel_requested_at).to.be.a('string');
      status = (await finished(f, id)).status;
    } finally {
      await fs.rm(holdFile, { force: true });
    }
    expect(status).to.equal('cancelled');
    const again = await app.request('POST', `/api/android-apk/builds/${id}/cancel`, { token: f.adminToken });
    expect(again.status).to.equal(422);
    expect(again.body.code).to.equal('INVALID_TRANSITION');
    const dl = await app.request('GET', `/api/android-apk/builds/${id}/download`, { token: f.adminToken });
    expect(dl.status).to.equal(404);
    const audits = await f.scope.table('audit_log').where({ action: 'app_builder.build_cancelled' });
    expect(audits).to.have.length(1);
  });

  it('download after retention removed the file: 404; other tenants’ ids: 404 and nothing changed', async () => {
    const f = await makeTenant();
    const other = await makeTenant();
    await configure(f);
    const b = await finished(f, (await start(f)).body.data.id);
    expect(b.status).to.equal('successful');
    for (const [m, p] of [
      ['GET', `/api/android-apk/builds/${b.id}`],
      ['GET', `/api/android-apk/builds/${b.id}/log`],
      ['GET', `/api/android-apk/builds/${b.id}/download`],
      ['POST', `/api/android-apk/builds/${b.id}/cancel`],
    ] as const) {
      const res = await app.request(m, p, { token: other.adminToken });
      expect(res.status, `${m} ${p}`).to.equal(404);
    }
    expect((await show(f, b.id)).updated_at).to.equal(b.updated_at);
    await f.scope.table('apk_builds').where({ id: b.id }).update({ file_deleted_at: new Date() });
    const gone = await app.request('GET', `/api/android-apk/builds/${b.id}/download`, { token: f.adminToken });
    expect(gone.status).to.equal(404);
    expect((await show(f, b.id)).download_url).to.equal(null);
  });

  it('two tenants, one worker: their builds alternate (FIFO, one build per tenant)', async () => {
    const a = await makeTenant();
    const b = await makeTenant();
    await configure(a);
    await configure(b);
    const done = new Map<number, number>([
      [a.tenant.id, 0],
      [b.tenant.id, 0],
    ]);
    const order: number[] = [];
    // each tenant starts its next build as soon as its last one finished, 3 builds each
    await until(
      'six builds',
      async () => {
        for (const f of [a, b]) {
          const active = await f.scope.table('apk_builds').whereIn('status', ['queued', 'running']).first('id');
          const ok = Number(
            (await f.scope.table('apk_builds').where({ status: 'successful' }).count({ n: '*' }).first())!.n,
          );
          done.set(f.tenant.id, ok);
          if (!active && ok < 3) expect((await start(f)).status).to.equal(202);
        }
        return done.get(a.tenant.id) === 3 && done.get(b.tenant.id) === 3;
      },
      150_000,
    );
    const rows = await env
      .knex('apk_builds')
      .whereIn('tenant_id', [a.tenant.id, b.tenant.id])
      .orderBy('started_at')
      .select('tenant_id', 'started_at', 'finished_at');
    for (const r of rows) order.push(r.tenant_id);
    expect(order).to.have.length(6);
    expect(order).to.deep.equal([a.tenant.id, b.tenant.id, a.tenant.id, b.tenant.id, a.tenant.id, b.tenant.id]);
    for (let i = 1; i < rows.length; i++) expect(rows[i].started_at >= rows[i - 1].finished_at).to.equal(true);
  });
});

/** Issue 12 item 7: a queued build (no worker takes it) cancels at once and leaves the queue. */
describe('/api/android-apk cancel of a queued build (no worker)', () => {
  it('queued -> cancelled (200), its job removed; the download 404 before success', async () => {
    const app = await startTestApp({ apk: { toolchain: { mode: 'stub' }, signing: fakeSigning() } });
    const f = await makeTenant();
    await app.request('PUT', '/api/android-apk/configs/partner', {
      token: f.adminToken,
      body: portalConfig({ package_id: 'id.demoisp.partner' }),
    });
    const res = await app.request('POST', '/api/android-apk/configs/partner/builds', {
      token: f.adminToken,
      body: { build_type: 'debug' },
    });
    expect(res.status, res.text).to.equal(202);
    const id = res.body.data.id;
    const queue = app.queues.get('apk-build');
    expect(await (await queue.getJob(apkBuild.buildJobId(id)))?.isWaiting()).to.equal(true);
    const dl = await app.request('GET', `/api/android-apk/builds/${id}/download`, { token: f.adminToken });
    expect(dl.status).to.equal(404);
    const cancel = await app.request('POST', `/api/android-apk/builds/${id}/cancel`, { token: f.adminToken });
    expect(cancel.status, cancel.text).to.equal(200);
    expect(cancel.body.data).to.include({ status: 'cancelled' });
    expect(await queue.getJob(apkBuild.buildJobId(id))).to.equal(undefined);
    // the tenant may build again at once
    expect(
      (
        await app.request('POST', '/api/android-apk/configs/partner/builds', {
          token: f.adminToken,
          body: { build_type: 'debug' },
        })
      ).status,
    ).to.equal(202);
  });
});
