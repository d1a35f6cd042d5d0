import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import {
  embeddedUrl,
  readPostgresMeta,
  resolveAppKey,
  resolveDatabase,
  resolveRedis,
} from '../../../lib/infra/embedded.js';
import { ConfigError } from '../../../lib/config.js';
import { isRoot, lookupUser, removeSystemState, stateKey, stateRoot } from '../../../lib/infra/system-dirs.js';

describe('embedded default resolution (lib/infra/embedded.ts)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-embedded-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('APP_KEY: generates 32 random bytes once into app.key (mode 600) and reuses them', async () => {
    const first = await resolveAppKey({}, dir);
    expect(first.source).to.equal('generated');
    expect(first.value).to.match(/^[0-9a-f]{64}$/);
    const stat = await fs.stat(path.join(dir, 'app.key'));
    expect(stat.mode & 0o777).to.equal(0o600);
    const again = await resolveAppKey({}, dir);
    expect(again).to.deep.equal({ value: first.value, source: 'file' });
    const other = await resolveAppKey({}, await fs.mkdtemp(path.join(dir, 'x-')));
    expect(other.value).not.to.equal(first.value);
  });

  it('APP_KEY: a given key is used as is and never written; a malformed one is refused naming APP_KEY', async () => {
    const key = 'ab'.repeat(32);
    expect(await resolveAppKey({ APP_KEY: key }, dir)).to.deep.equal({ value: key, source: 'env' });
    expect(await fs.readdir(dir)).to.deep.equal([]);
    let err: unknown;
    try {
      await resolveAppKey({ APP_KEY: 'short' }, dir);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message).to.match(/APP_KEY/);
  });

  it('APP_KEY: a corrupt app.key is refused rather than silently replaced', async () => {
    await fs.writeFile(path.join(dir, 'app.key'), 'not a key\n');
    let err: unknown;
    try {
      await resolveAppKey({}, dir);
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.match(/APP_KEY must be 32 bytes/);
    expect(await fs.readFile(path.join(dir, 'app.key'), 'utf8')).to.equal('not a key\n');
  });

  it('DATABASE_URL and REDIS_URL, when set, are used and nothing is started', async () => {
    const db = await resolveDatabase({ DATABASE_URL: 'postgres://u:p@db.example:5432/x' }, dir, {
      reuseRunning: false,
    });
    expect(db.url).to.equal('postgres://u:p@db.example:5432/x');
    expect(db.source).to.equal('env');
    const redis = await resolveRedis({ REDIS_URL: 'redis://cache.example:6379' }, dir);
    expect(redis).to.include({ url: 'redis://cache.example:6379', source: 'env' });
    expect(await fs.readdir(dir)).to.deep.equal([]);
  });

  it('reads the embedded server metadata and builds its URL (password URL-encoded)', async () => {
    expect(await readPostgresMeta(dir)).to.equal(null);
    await fs.writeFile(path.join(dir, 'postgres.json'), JSON.stringify({ port: 5999, password: 'p@ss/word' }));
    const meta = await readPostgresMeta(dir);
    expect(meta).to.deep.equal({ port: 5999, password: 'p@ss/word' });
    expect(embeddedUrl(meta!)).to.equal('postgres://postgres:p%40ss%2Fword@127.0.0.1:5999/isp');
  });

  it('PostgreSQL and Redis for a data dir in a 0700 directory, a space in its path; the 0700 stays', async function () {
    this.timeout(120_000);
    // `dir` comes from mkdtemp: mode 0700, owned by us (as root: a place the OS user postgres cannot enter)
    expect((await fs.stat(dir)).mode & 0o777).to.equal(0o700);
    const dataDir = path.join(dir, 'my proj', '.data');
    const query = async (url: string, sql: string) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query(sql)).rows;
      } finally {
        await c.end();
      }
    };
    const lines: string[] = [];
    try {
      const db = await resolveDatabase({}, dataDir, { reuseRunning: false, log: (l) => lines.push(l) });
      const redis = await resolveRedis({}, dataDir);
      try {
        expect(db.source).to.equal('started');
        await query(db.url, 'CREATE TABLE t (v text)');
        await query(db.url, "INSERT INTO t VALUES ('kept')");
        const r = new Redis(redis.url, { maxRetriesPerRequest: 1 });
        try {
          expect(await r.set('k', 'v')).to.equal('OK');
          expect(await r.config('GET', 'dir')).to.deep.equal(['dir', path.join(dataDir, 'redis')]);
        } finally {
          r.disconnect();
        }
      } finally {
        await redis.stop();
        await db.stop();
      }

      const real = await fs.realpath(dataDir);
      const cluster = isRoot() ? path.join(stateRoot(), stateKey(real), 'postgres') : path.join(dataDir, 'postgres');
      expect(db.location).to.equal(cluster);
      expect(lines[0]).to.equal(`initialising PostgreSQL in ${cluster} ...`);
      const st = await fs.stat(path.join(cluster, 'PG_VERSION'));
      if (isRoot()) expect(st.uid).to.equal((await lookupUser('postgres'))!.uid);
      expect((await fs.stat(cluster)).mode & 0o777).to.equal(0o700);
      // port and password stay in the checkout's data dir; Redis wrote its AOF there
      expect(await readPostgresMeta(dataDir)).to.have.keys('port', 'password');
      expect(await fs.readdir(path.join(dataDir, 'redis'))).to.include('appendonlydir');

      // a second start reuses the cluster and its data
      const again = await resolveDatabase({}, dataDir, { reuseRunning: false, log: (l) => lines.push(l) });
      try {
        expect(await query(again.url, 'SELECT v FROM t')).to.deep.equal([{ v: 'kept' }]);
        expect(lines[1]).to.equal(`starting PostgreSQL (data in ${cluster}) ...`);
      } finally {
        await again.stop();
      }
      expect((await fs.stat(dir)).mode & 0o777).to.equal(0o700);
    } finally {
      await removeSystemState(dataDir);
    }
  });
});
