import { createHash, type Hash } from 'node:crypto';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import { StorageKeyError, StorageLimitError, StorageTypeError } from './errors.js';
import type { PutOptions } from './types.js';

/** Bytes read before deciding the type (file-type's own detection window is 4100 bytes). */
export const SAMPLE_BYTES = 4100;

/**
 * Checks a storage key: 1..1024 characters; "/"-separated segments, none empty, "." or "..",
 * none starting with "." (hidden names are reserved for the driver's temp files); no leading "/",
 * no backslash, no NUL or other control characters.
 * @returns the key unchanged
 * @throws StorageKeyError naming the reason
 */
export function validateKey(key: string): string {
  if (typeof key !== 'string' || key.length === 0) throw new StorageKeyError(String(key), 'key is empty');
  if (Buffer.byteLength(key) > 1024) throw new StorageKeyError(key, 'key is longer than 1024 bytes');
  // eslint-disable-next-line no-control-regex -- matches control characters to refuse them in a storage key
  if (/[\x00-\x1f\x7f]/.test(key)) throw new StorageKeyError(key, 'key contains NUL or control characters');
  if (key.includes('\\')) throw new StorageKeyError(key, 'key contains a backslash');
  if (key.startsWith('/')) throw new StorageKeyError(key, 'key is an absolute path');
  for (const seg of key.split('/')) {
    if (seg === '') throw new StorageKeyError(key, 'key has an empty segment');
    if (seg === '.' || seg === '..') throw new StorageKeyError(key, `key has a "${seg}" segment`);
    if (seg.startsWith('.')) throw new StorageKeyError(key, 'key has a segment starting with "."');
  }
  return key;
}

/** Detected type of some content. */
export interface DetectedType {
  mime: string;
  ext: string;
}

/**
 * Decides the type of content from its first bytes: a file-type signature match (PNG, JPEG, PDF,
 * ZIP/XLSX, ...), else "text/plain" for UTF-8 text without control characters other than tab, CR,
 * LF and form feed, else "application/octet-stream".
 * @param sample the first bytes (SAMPLE_BYTES or the whole content when shorter)
 */
export async function detectType(sample: Uint8Array): Promise<DetectedType> {
  const t = sample.length ? await fileTypeFromBuffer(sample) : undefined;
  if (t) return { mime: t.mime, ext: t.ext };
  if (sample.length && looksLikeText(sample)) return { mime: 'text/plain', ext: 'txt' };
  return { mime: 'application/octet-stream', ext: 'bin' };
}

function looksLikeText(sample: Uint8Array): boolean {
  let s: string;
  try {
    // stream: true tolerates a character cut at the end of the sample
    s = new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: true });
  } catch {
    return false;
  }
  // eslint-disable-next-line no-control-regex -- text has no control characters but tab, LF, FF and CR
  return !/[\x00-\x08\x0b\x0e-\x1f\x7f]/.test(s);
}

/** Whether `mime` matches one of the allowed types ("image/png" or "image/*"). */
export function typeAllowed(mime: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => a === mime || (a.endsWith('/*') && mime.startsWith(a.slice(0, -1))));
}

/** Counts and hashes the bytes passing through; errors with StorageLimitError past the limit. */
class Meter extends Transform {
  size = 0;
  readonly hash: Hash = createHash('sha256');
  constructor(readonly maxBytes: number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    // checked before the chunk goes on: bytes past the limit never reach the storage backend
    if (this.size > this.maxBytes) {
      done(new StorageLimitError(this.maxBytes));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }
}

/** An upload whose type is accepted, ready to be written. */
export interface InspectedUpload extends DetectedType {
  /** the whole content (sample included), metered; errors with StorageLimitError past maxBytes */
  body: Readable;
  /** size and SHA-256 hex of what went through `body`; final once `body` has ended */
  digest(): { size: number; sha256: string };
}

/**
 * Reads the first bytes of an upload, decides its type and checks it against `allowedTypes`, and
 * returns the content as a stream that counts, hashes and enforces `maxBytes` as it is read.
 * The source is piped, never destroyed: on any failure (here or later in `body`) it is unpiped and
 * left paused for its owner (an HTTP request can still be answered).
 * @throws RangeError for a maxBytes that is not a non-negative integer; StorageTypeError when the
 *   type is not allowed; StorageLimitError when the sample already exceeds maxBytes; the source's error
 */
export async function inspectUpload(source: Readable, opts: PutOptions): Promise<InspectedUpload> {
  if (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes < 0) {
    throw new RangeError(`maxBytes must be a non-negative integer, got ${opts.maxBytes}`);
  }
  const meter = new Meter(opts.maxBytes);
  const onSourceError = (e: Error) => meter.destroy(e);
  source.on('error', onSourceError);
  source.pipe(meter);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    source.off('error', onSourceError);
    source.unpipe(meter);
    if (!source.readableEnded) source.pause();
    meter.destroy();
  };
  const it = meter[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let type: DetectedType;
  try {
    let len = 0;
    while (len < SAMPLE_BYTES) {
      const r = await it.next();
      if (r.done) break;
      head.push(r.value);
      len += r.value.length;
    }
    type = await detectType(Buffer.concat(head).subarray(0, SAMPLE_BYTES));
    if (opts.allowedTypes && !typeAllowed(type.mime, opts.allowedTypes)) {
      throw new StorageTypeError(type.mime, opts.allowedTypes);
    }
  } catch (e) {
    release();
    throw e;
  }
  async function* content(): AsyncGenerator<Buffer> {
    try {
      yield* head;
      for (;;) {
        const r = await it.next();
        if (r.done) return;
        yield r.value;
      }
    } finally {
      release();
    }
  }
  return {
    ...type,
    body: Readable.from(content(), { objectMode: false }),
    digest: () => ({ size: meter.size, sha256: meter.hash.copy().digest('hex') }),
  };
}
