import { expect } from 'chai';
import path from 'node:path';
import { Readable } from 'node:stream';
import * as apkRetention from '../../jobs/apk-retention.js';
import { configureJobDeps } from '../../jobs/deps.js';
import { createStorage, type Storage } from '../../lib/storage/index.js';
import { ManualClock } from '../../lib/clock.js';
import type { Knex } from 'knex';
import { env } from '../helpers/env.js';
import { freshDatabase } from '../helpers/fresh-db.js';
import { fakeJob } from './fake-job.js';

/**
 * Issue 12 item 9: the daily apk-retention job keeps the files of the newest APK_RETENTION_COUNT
 * successful builds per tenant and app type and deletes the rest; the rows stay, marked.
 */
describe('apk-retention: files beyond the newest 10 successful builds per tenant and app type (issue 12 item 9)', function () {
  this.timeout(60_000);
  let storage: Storage;
  const clock = new ManualClock(Date.now());
  // a database of its own: a run without tenant_id scans every tenant's builds, and other files'
  // builds in the shared test database (files in other storage roots) would be candidates too
  let db: Knex;
  let n = 0;
  type TenantFixture = { tenant: { id: number } };
  const makeTenant = async (): Promise<TenantFixture> => {
    const [{ id }] = await db('tenants')
      .insert({ slug: `r-${++n}`, name: `Retention ${n}` })
      .returning('id');
    return { tenant: { id: Number(id) } };
  };
  let a: TenantFixture;
  let b: TenantFixture;

  before(async () => {
    storage = createStorage({ driver: 'local', root: path.join(env.dir, 'apk-retention-storage') });
    db = (await freshDatabase()).knex;
    configureJobDeps({ knex: db, storage, clock });
    a = await makeTenant();
    b = await makeTenant();
  });
  // later files in this process find the job deps on the shared test database, as before
  after(() => configureJobDeps({ knex: env.knex, storage, clock }));

  /** A build of the tenant finished `minutesAgo` before the clock's now, with a stored file when successful. */
  async function build(f: TenantFixture, appType: string, status: string, minutesAgo: number): Promise<number> {
    const finished = new Date(clock.now().getTime() - minutesAgo * 60_000);
    const [row] = await db('apk_builds')
      .insert({
        tenant_id: f.tenant.id,
        app_type: appType,
        build_type: 'debug',
        toolchain: 'stub',
        config: {},
        version_name: '1.0',
        version_code: 1,
        status,
        finished_at: finished,
      })
      .returning('id');
    if (status === 'successful') {
      const key = `tenants/${f.tenant.id}/apk/${row.id}.apk`;
      const put = await storage.put(key, Readable.from([Buffer.from(`PK\x03\x04 apk ${row.id}`)]), {
        maxBytes: 1024,
      });
      await db('apk_builds').where({ id: row.id }).update({ file_key: key, size_bytes: put.size });
    }
    return row.id;
  }

  const state = async (ids: number[]) =>
    Promise.all(
      ids.map(async (id) => {
        const r = await db('apk_builds').where({ id }).first();
        return {
          id,
          marked: r.file_deleted_at !== null,
          file: r.file_key ? await storage.exists(r.file_key) : null,
        };
      }),
    );

  it('keeps the newest 10 successful per tenant and app type (by finished_at), deletes the older files, keeps the rows', async () => {
    // tenant a, portal: 13 successful inserted newest first (so ids do not follow finished_at), 2 failed among them
    const portal: number[] = [];
    for (let i = 0; i < 13; i++) portal.push(await build(a, 'portal', 'successful', 10 + i * 60));
    const failed = [await build(a, 'portal', 'failed', 1), await build(a, 'portal', 'failed', 5000)];
    const netadmin: number[] = [];
    for (let i = 0; i < 12; i++) netadmin.push(await build(a, 'netadmin', 'successful', 1000 - i * 10));
    const other: number[] = [];
    for (let i = 0; i < 11; i++) other.push(await build(b, 'portal', 'successful', 1 + i));
    const partner = [await build(b, 'partner', 'successful', 99999)];

    const fj = fakeJob<apkRetention.ApkRetentionData>({});
    const result = await apkRetention.process(fj.job);
    expect(result).to.deep.equal({
      deleted: 3 + 2 + 1,
      tenants: { [a.tenant.id]: 5, [b.tenant.id]: 1 },
      failed: 0,
      keep: 10,
    });
    expect(fj.progress.at(-1)).to.equal(100);
    // a/portal: the 3 that finished longest ago (the last inserted) lost their files
    expect(await state(portal)).to.deep.equal(portal.map((id, i) => ({ id, marked: i >= 10, file: i < 10 })));
    // a/netadmin: finished_at grows with the index, so the first two are the oldest
    expect(await state(netadmin)).to.deep.equal(netadmin.map((id, i) => ({ id, marked: i < 2, file: i >= 2 })));
    expect(await state(other)).to.deep.equal(other.map((id, i) => ({ id, marked: i === 10, file: i < 10 })));
    expect(await state(partner)).to.deep.equal([{ id: partner[0], marked: false, file: true }]);
    expect(await state(failed)).to.deep.equal(failed.map((id) => ({ id, marked: false, file: null })));
    const marked = await db('apk_builds').whereIn('id', portal.slice(10)).pluck('file_deleted_at');
    expect(marked.map((d: Date) => d.toISOString())).to.deep.equal(
      portal.slice(10).map(() => clock.now().toISOString()),
    );
    // rows stay
    expect(
      await db('apk_builds').whereIn('tenant_id', [a.tenant.id, b.tenant.id]).count({ n: '*' }).first(),
    ).to.deep.equal({ n: 13 + 2 + 12 + 11 + 1 });

    // a second run changes nothing
    const again = await apkRetention.process(fakeJob<apkRetention.ApkRetentionData>({}).job);
    expect(again.deleted).to.equal(0);

    // a newer build pushes the oldest kept one out, in that tenant and app type only
    const newest = await build(b, 'portal', 'successful', 0);
    const one = await apkRetention.process(fakeJob<apkRetention.ApkRetentionData>({ tenant_id: b.tenant.id }).job);
    expect(one).to.deep.include({ deleted: 1, tenants: { [b.tenant.id]: 1 } });
    expect(await state([newest, other[9], other[8]])).to.deep.equal([
      { id: newest, marked: false, file: true },
      { id: other[9], marked: true, file: false },
      { id: other[8], marked: false, file: true },
    ]);
  });

  it('a file already gone is marked without error; keep from the job data; a run limited to one tenant', async () => {
    const t = await makeTenant();
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) ids.push(await build(t, 'absensi', 'successful', i));
    const lost = await db('apk_builds').where({ id: ids[3] }).first();
    await storage.delete(lost.file_key);
    const res = await apkRetention.process(
      fakeJob<apkRetention.ApkRetentionData>({ tenant_id: t.tenant.id, keep: 2 }).job,
    );
    expect(res).to.deep.equal({ deleted: 2, tenants: { [t.tenant.id]: 2 }, failed: 0, keep: 2 });
    expect(await state(ids)).to.deep.equal([
      { id: ids[0], marked: false, file: true },
      { id: ids[1], marked: false, file: true },
      { id: ids[2], marked: true, file: false },
      { id: ids[3], marked: true, file: false },
    ]);
  });

  it('a storage failure leaves that row unmarked for the next run and fails the job; the others are done', async () => {
    const t = await makeTenant();
    const ids: number[] = [];
    for (let i = 0; i < 13; i++) ids.push(await build(t, 'partner', 'successful', i));
    const broken: Storage = {
      ...storage,
      async delete(key: string) {
        if (key.endsWith(`/${ids[11]}.apk`)) throw new Error('disk gone');
        return storage.delete(key);
      },
    };
    configureJobDeps({ knex: db, storage: broken, clock });
    try {
      const fj = fakeJob<apkRetention.ApkRetentionData>({ tenant_id: t.tenant.id });
      const err = await apkRetention.process(fj.job).catch((e: Error) => e);
      expect(err).to.be.instanceOf(Error);
      expect((err as Error).message).to.equal('1 APK file(s) could not be deleted; the next run retries them');
      expect(fj.logs.some((l) => l.includes(`build ${ids[11]}`))).to.equal(true);
      expect((await state(ids.slice(10))).map((s) => s.marked)).to.deep.equal([true, false, true]);
    } finally {
      configureJobDeps({ knex: db, storage, clock });
    }
    const retry = await apkRetention.process(fakeJob<apkRetention.ApkRetentionData>({ tenant_id: t.tenant.id }).job);
    expect(retry.deleted).to.equal(1);
    expect((await state(ids.slice(10))).map((s) => s.marked)).to.deep.equal([true, true, true]);
  });

  it('runs daily from a scheduler and has a fixed manual-run id', () => {
    expect(apkRetention.scheduler).to.deep.include({ id: 'apk-retention-daily' });
    expect(apkRetention.scheduler.repeat).to.deep.equal({ pattern: '30 3 * * *', tz: 'UTC' });
    const at = clock.now();
    const minute = at.toISOString().slice(0, 16).replace(/[-T:]/g, '');
    expect(apkRetention.jobId({ tenant_id: 7 }, at)).to.equal(`apk-retention-t7-${minute}`);
    expect(apkRetention.jobId({}, at)).to.equal(`apk-retention-all-${minute}`);
  });
});
