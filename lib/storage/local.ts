import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StorageKeyError, StorageNotFoundError } from './errors.js';
import type { GetResult, PutOptions, PutResult, Storage } from './types.js';
import { detectType, inspectUpload, SAMPLE_BYTES, validateKey } from './upload.js';

/** Directory under the root for uploads in progress (a hidden name, so no key can reach it). */
const PARTIAL_DIR = '.partial';

/**
 * Local-disk storage driver (DESIGN.md §10 "files", the default): the file of key "a/b.png" is
 * `<root>/a/b.png`. An upload is written to `<root>/.partial/<uuid>`, flushed, then renamed into
 * place, so readers never see half a file and a refused or failed upload leaves nothing behind.
 */
export class LocalStorage implements Storage {
  readonly root: string;

  /**
   * @param root directory holding the files (by convention DATA_DIR/storage); resolved to an
   *   absolute path, created on the first put
   */
  constructor(root: string) {
    if (!root) throw new TypeError('LocalStorage needs a root directory');
    this.root = path.resolve(root);
  }

  /** Absolute path of a key, checked to stay under the root. */
  private pathOf(key: string): string {
    const p = path.resolve(this.root, validateKey(key));
    if (!p.startsWith(this.root + path.sep)) throw new StorageKeyError(key, 'key leaves the storage root');
    return p;
  }

  /** @see Storage.put */
  async put(key: string, source: Readable, opts: PutOptions): Promise<PutResult> {
    const dest = this.pathOf(key);
    const upload = await inspectUpload(source, opts);
    const partialDir = path.join(this.root, PARTIAL_DIR);
    const tmp = path.join(partialDir, randomUUID());
    try {
      await fs.mkdir(partialDir, { recursive: true });
      await pipeline(upload.body, createWriteStream(tmp, { flags: 'wx', flush: true }));
      await fs.mkdir(path.dirname(dest), { recursive: true });
      await fs.rename(tmp, dest);
    } catch (e) {
      upload.body.destroy();
      await fs.rm(tmp, { force: true });
      throw e;
    }
    return { key, ...upload.digest(), mime: upload.mime, ext: upload.ext };
  }

  /** @see Storage.get */
  async get(key: string): Promise<GetResult> {
    const p = this.pathOf(key);
    let fh: fs.FileHandle;
    try {
      fh = await fs.open(p, 'r');
    } catch (e) {
      if (isMissing(e)) throw new StorageNotFoundError(key);
      throw e;
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new StorageNotFoundError(key);
      const sample = Buffer.alloc(Math.min(SAMPLE_BYTES, st.size));
      const { bytesRead } = await fh.read(sample, 0, sample.length, 0);
      const { mime } = await detectType(sample.subarray(0, bytesRead));
      // the stream owns the handle from here and closes it at its end or destruction
      return { stream: fh.createReadStream({ start: 0 }), size: st.size, mime };
    } catch (e) {
      await fh.close();
      throw e;
    }
  }

  /** @see Storage.delete */
  async delete(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
  }

  /** @see Storage.exists */
  async exists(key: string): Promise<boolean> {
    try {
      return (await fs.stat(this.pathOf(key))).isFile();
    } catch (e) {
      if (isMissing(e)) return false;
      throw e;
    }
  }
}

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
