import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createStorage,
  LocalStorage,
  StorageKeyError,
  StorageLimitError,
  StorageNotFoundError,
  StorageTypeError,
} from '../../../lib/storage/index.js';
import { bytes, chunked, PNG_1X1, readAll, sha256 } from './fixtures.js';

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

/** Every file under dir, relative, "/"-separated (directories left out). */
async function files(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
}

describe('lib/storage/local.ts: local-disk storage driver', () => {
  let root: string;
  let storage: LocalStorage;

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'storage-test-'));
    storage = createStorage({ driver: 'local', root: path.join(root, 'storage') }) as LocalStorage;
  });
  afterEach(() => fs.rm(root, { recursive: true, force: true }));

  it('stores a real PNG allowed by type, reports size, type and SHA-256, and streams it back', async () => {
    expect(storage).to.be.instanceOf(LocalStorage);
    const r = await storage.put('tenants/1/logo.png', chunked(PNG_1X1, 7), {
      maxBytes: 1024,
      allowedTypes: ['image/*'],
    });
    expect(r).to.deep.equal({
      key: 'tenants/1/logo.png',
      size: PNG_1X1.length,
      mime: 'image/png',
      ext: 'png',
      sha256: sha256(PNG_1X1),
    });
    expect(await files(path.join(root, 'storage'))).to.deep.equal(['tenants/1/logo.png']);
    expect(await storage.exists('tenants/1/logo.png')).to.equal(true);
    const got = await storage.get('tenants/1/logo.png');
    expect(got.size).to.equal(PNG_1X1.length);
    expect(got.mime).to.equal('image/png');
    expect((await readAll(got.stream)).equals(PNG_1X1)).to.equal(true);
  });

  it('refuses text named .png when only images are allowed, and stores nothing', async () => {
    const src = Readable.from([Buffer.from('this is not an image, just text\n')]);
    const opts = { maxBytes: 1024, allowedTypes: ['image/png', 'image/jpeg'] };
    const err = await rejection(storage.put('tenants/1/fake.png', src, opts));
    expect(err).to.be.instanceOf(StorageTypeError);
    expect(err).to.include({ code: 'UNSUPPORTED_FILE_TYPE', status: 415, detected: 'text/plain' });
    expect(await storage.exists('tenants/1/fake.png')).to.equal(false);
    expect(await files(root)).to.deep.equal([]);
    // the same text is accepted as text/plain (e.g. a CSV import)
    const ok = await storage.put('imports/a.csv', Readable.from([Buffer.from('a,b\r\n1,2\r\n')]), {
      maxBytes: 1024,
      allowedTypes: ['text/plain'],
    });
    expect(ok).to.include({ mime: 'text/plain', ext: 'txt', size: 10 });
  });

  it('aborts at maxBytes + 1 with StorageLimitError while streaming, storing nothing; maxBytes passes', async () => {
    const limit = 100_000;
    const src = chunked(bytes(limit + 1), 4096);
    const err = await rejection(storage.put('big.bin', src, { maxBytes: limit }));
    expect(err).to.be.instanceOf(StorageLimitError);
    expect(err).to.include({ code: 'PAYLOAD_TOO_LARGE', status: 413, maxBytes: limit });
    expect(await storage.exists('big.bin')).to.equal(false);
    expect(await files(root)).to.deep.equal([]);
    const data = bytes(limit);
    const r = await storage.put('big.bin', chunked(data, 4096), { maxBytes: limit });
    expect(r).to.include({ size: limit, mime: 'application/octet-stream', ext: 'bin', sha256: sha256(data) });
    // a refused replacement leaves the old content in place
    expect(await rejection(storage.put('big.bin', chunked(bytes(limit + 1)), { maxBytes: limit }))).to.be.instanceOf(
      StorageLimitError,
    );
    expect(sha256(await readAll((await storage.get('big.bin')).stream))).to.equal(sha256(data));
    expect(await files(path.join(root, 'storage'))).to.deep.equal(['big.bin']);
    // the source of a refused upload is unpiped and paused, not destroyed: its owner decides
    const longer = chunked(bytes(4 * limit), 4096);
    expect(await rejection(storage.put('big.bin', longer, { maxBytes: limit }))).to.be.instanceOf(StorageLimitError);
    expect(longer.destroyed).to.equal(false);
    expect(longer.readableFlowing).to.equal(false);
    // a limit below the type sample is enforced too
    expect(await rejection(storage.put('png', chunked(PNG_1X1), { maxBytes: 10 }))).to.be.instanceOf(StorageLimitError);
  });

  it('writes while the upload arrives, to a temp file the key does not show until complete', async () => {
    const src = new PassThrough();
    const first = bytes(256 * 1024);
    const rest = bytes(256 * 1024);
    const put = storage.put('stream/x.bin', src, { maxBytes: 1024 * 1024 });
    src.write(first);
    const partial = path.join(root, 'storage', '.partial');
    let onDisk = 0;
    for (let i = 0; i < 500 && onDisk < first.length; i++) {
      await sleep(10);
      const [f] = await fs.readdir(partial).catch(() => []);
      onDisk = f ? (await fs.stat(path.join(partial, f))).size : 0;
    }
    expect(onDisk, 'bytes reached the disk before the source ended').to.be.at.least(first.length);
    expect(await storage.exists('stream/x.bin')).to.equal(false);
    src.end(rest);
    const r = await put;
    expect(r.size).to.equal(first.length + rest.length);
    expect(r.sha256).to.equal(sha256(Buffer.concat([first, rest])));
    expect(await files(path.join(root, 'storage'))).to.deep.equal(['stream/x.bin']);
  });

  it('leaves nothing behind when the source fails mid-stream', async () => {
    const src = new PassThrough();
    const put = storage.put('broken.bin', src, { maxBytes: 1024 * 1024 });
    src.write(bytes(64 * 1024));
    await sleep(20);
    src.destroy(new Error('client went away'));
    const err = await rejection(put);
    expect(err.message).to.equal('client went away');
    expect(await files(root)).to.deep.equal([]);
  });

  it('answers 404 for a missing key, deletes idempotently', async () => {
    const err = await rejection(storage.get('nope.txt'));
    expect(err).to.be.instanceOf(StorageNotFoundError);
    expect(err).to.include({ code: 'NOT_FOUND', status: 404 });
    await storage.put('a/b.txt', Readable.from([Buffer.from('hello')]), { maxBytes: 10 });
    expect(await rejection(storage.get('a'))).to.be.instanceOf(StorageNotFoundError);
    expect(await rejection(storage.get('a/b.txt/c'))).to.be.instanceOf(StorageNotFoundError);
    expect(await storage.exists('a')).to.equal(false);
    await storage.delete('a/b.txt');
    await storage.delete('a/b.txt');
    expect(await storage.exists('a/b.txt')).to.equal(false);
  });

  it('refuses keys with .., absolute paths, NUL, backslashes, hidden or empty segments', async () => {
    const bad = [
      '../escape.txt',
      'a/../../b',
      '/etc/passwd',
      'a\0b',
      'a\\b',
      '',
      'a//b',
      'a/',
      '.partial/x',
      'a/./b',
      'x'.repeat(1025),
      'a\nb',
    ];
    for (const key of bad) {
      for (const op of [
        () => storage.put(key, Readable.from([Buffer.from('x')]), { maxBytes: 10 }),
        () => storage.get(key),
        () => storage.delete(key),
        () => storage.exists(key),
      ]) {
        const err = await rejection(op());
        expect(err, JSON.stringify(key)).to.be.instanceOf(StorageKeyError);
        expect(err).to.include({ code: 'VALIDATION_FAILED', status: 422 });
      }
    }
    expect(await files(root)).to.deep.equal([]);
  });
});
