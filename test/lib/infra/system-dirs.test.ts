import { expect } from 'chai';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  cacheRoot,
  DEFAULT_CACHE_ROOT,
  DEFAULT_STATE_ROOT,
  lookupUser,
  makeWorldReadable,
  mkdirWithMode,
  removeSystemState,
  STATE_MARKER,
  stateKey,
  stateRoot,
  systemStateDir,
} from '../../../lib/infra/system-dirs.js';

/** lib/infra/system-dirs.ts: places outside the checkout for what runs as another OS user ("A clone anywhere"). */
describe('lib/infra/system-dirs', () => {
  let tmp: string;
  let root: string;
  let dataDir: string;
  beforeEach(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-sysdirs-'));
    root = path.join(tmp, 'state root');
    dataDir = path.join(tmp, 'check out', '.data');
  });
  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('roots: /var/lib/isp-platform and /var/cache/isp-platform unless ISP_STATE_DIR / ISP_CACHE_DIR are set', () => {
    expect(DEFAULT_STATE_ROOT).to.equal('/var/lib/isp-platform');
    expect(DEFAULT_CACHE_ROOT).to.equal('/var/cache/isp-platform');
    expect(stateRoot({})).to.equal('/var/lib/isp-platform');
    expect(cacheRoot({})).to.equal('/var/cache/isp-platform');
    expect(stateRoot({ ISP_STATE_DIR: '/srv/isp state' })).to.equal('/srv/isp state');
    expect(cacheRoot({ ISP_CACHE_DIR: '/srv/isp-cache/' })).to.equal('/srv/isp-cache');
  });

  it('stateKey: 16 hex characters of the SHA-256 of the path', () => {
    const p = '/home/ann/my proj/.data';
    expect(stateKey(p)).to.equal(crypto.createHash('sha256').update(p).digest('hex').slice(0, 16));
    expect(stateKey(p)).to.match(/^[0-9a-f]{16}$/);
    expect(stateKey(`${p}2`)).not.to.equal(stateKey(p));
  });

  it('mkdirWithMode: created directories get the mode whatever the umask; existing ones keep theirs', async () => {
    await fs.mkdir(path.join(tmp, 'a'), { mode: 0o700 });
    await fs.chmod(path.join(tmp, 'a'), 0o700);
    const old = process.umask(0o077);
    try {
      await mkdirWithMode(path.join(tmp, 'a', 'b', 'c'), 0o755);
    } finally {
      process.umask(old);
    }
    expect((await fs.stat(path.join(tmp, 'a'))).mode & 0o777).to.equal(0o700);
    expect((await fs.stat(path.join(tmp, 'a', 'b'))).mode & 0o777).to.equal(0o755);
    expect((await fs.stat(path.join(tmp, 'a', 'b', 'c'))).mode & 0o777).to.equal(0o755);
    await mkdirWithMode(path.join(tmp, 'a', 'b', 'c'), 0o700); // exists: unchanged
    expect((await fs.stat(path.join(tmp, 'a', 'b', 'c'))).mode & 0o777).to.equal(0o755);
  });

  it('systemStateDir: one 0755 directory per data dir, tied to it by the same id on both sides', async () => {
    const dir = await systemStateDir(dataDir, { root });
    const real = await fs.realpath(dataDir);
    expect(dir).to.equal(path.join(root, stateKey(real)));
    expect((await fs.stat(dir)).mode & 0o777).to.equal(0o755);
    expect((await fs.stat(root)).mode & 0o777).to.equal(0o755);
    const marker = JSON.parse(await fs.readFile(path.join(dataDir, STATE_MARKER), 'utf8'));
    const origin = JSON.parse(await fs.readFile(path.join(dir, 'origin.json'), 'utf8'));
    expect(marker.dir).to.equal(dir);
    expect(marker.id).to.match(/^[0-9a-f]{32}$/);
    expect(origin).to.deep.equal({ data_dir: real, id: marker.id });

    // kept across calls, also by concurrent ones
    await fs.writeFile(path.join(dir, 'kept'), 'x');
    const twice = await Promise.all([1, 2].map(() => systemStateDir(dataDir, { root })));
    expect(twice).to.deep.equal([dir, dir]);
    expect(await fs.readFile(path.join(dir, 'kept'), 'utf8')).to.equal('x');

    // another data dir: another state dir
    const other = await systemStateDir(path.join(tmp, 'other', '.data'), { root });
    expect(other).not.to.equal(dir);
  });

  it('systemStateDir: deleting the data dir starts its state from scratch; removeSystemState deletes it', async () => {
    const dir = await systemStateDir(dataDir, { root });
    await fs.mkdir(path.join(dir, 'postgres'));
    await fs.writeFile(path.join(dir, 'postgres', 'PG_VERSION'), '18\n');
    await fs.rm(dataDir, { recursive: true });
    expect(await systemStateDir(dataDir, { root })).to.equal(dir);
    expect((await fs.readdir(dir)).sort()).to.deep.equal(['origin.json']);

    await removeSystemState(dataDir, { root });
    expect(
      await fs.access(dir).then(
        () => true,
        () => false,
      ),
    ).to.equal(false);
    await removeSystemState(path.join(tmp, 'never made'), { root }); // nothing to do, no error
  });

  it('makeWorldReadable: a+rx on directories and owner-executable files, a+r on others; links untouched', async () => {
    const t = path.join(tmp, 'tree');
    await fs.mkdir(path.join(t, 'bin'), { recursive: true, mode: 0o700 });
    await fs.chmod(path.join(t, 'bin'), 0o700);
    await fs.writeFile(path.join(t, 'bin', 'prog'), '', { mode: 0o700 });
    await fs.writeFile(path.join(t, 'bin', 'data'), '', { mode: 0o600 });
    await fs.symlink('data', path.join(t, 'bin', 'link'));
    await fs.chmod(t, 0o700);
    await makeWorldReadable(t);
    const mode = async (p: string) => (await fs.stat(path.join(t, p))).mode & 0o777;
    expect([await mode('.'), await mode('bin'), await mode('bin/prog'), await mode('bin/data')]).to.deep.equal([
      0o755, 0o755, 0o755, 0o644,
    ]);
    expect(await fs.readlink(path.join(t, 'bin', 'link'))).to.equal('data');
  });

  it('lookupUser: ids of an existing user (root: 0/0); null for an unknown one', async () => {
    expect(await lookupUser('root')).to.deep.equal({ name: 'root', uid: 0, gid: 0 });
    expect(await lookupUser(`isp-no-user-${process.pid}`)).to.equal(null);
  });
});
