import path from 'node:path';
import { create as createDisposition } from 'content-disposition';
import { LocalStorage } from './local.js';
import { S3Storage } from './s3.js';
import type { Storage, StorageConfig } from './types.js';

/**
 * The storage driver (DESIGN.md §10 "files"): one Storage interface, local disk by default, S3 when
 * configured. Errors: lib/storage/errors.ts (each with `code` and `status` for the HTTP layer).
 */
export * from './errors.js';
export type * from './types.js';
export { LocalStorage } from './local.js';
export { S3Storage } from './s3.js';
export { validateKey, detectType, typeAllowed } from './upload.js';
export { readWhole, putJson } from './whole.js';

/**
 * Builds the configured driver.
 * @param config `{driver: 'local', root}` or `{driver: 's3', bucket, region, endpoint?, accessKeyId,
 *   secretAccessKey, forcePathStyle?}`
 * @returns a LocalStorage or an S3Storage
 * @throws TypeError for an unknown driver or a missing root/bucket
 */
export function createStorage(config: StorageConfig): Storage {
  switch (config.driver) {
    case 'local':
      return new LocalStorage(config.root);
    case 's3':
      return new S3Storage(config);
    default:
      throw new TypeError(`unknown storage driver ${JSON.stringify((config as { driver?: unknown }).driver)}`);
  }
}

/** The local driver's conventional root: `<DATA_DIR>/storage`. @param dataDir the DATA_DIR setting */
export function defaultLocalRoot(dataDir: string): string {
  return path.join(dataDir, 'storage');
}

/**
 * A Content-Disposition header value for a download (RFC 6266, via the content-disposition
 * package): `attachment; filename=report.pdf`; a name outside printable ASCII also gets
 * `filename*=UTF-8''...` (RFC 8187) with an ASCII fallback in `filename`. Directory parts of the
 * name are dropped (a stored original name never names a path on the client).
 * @param filename the name the browser should save the file as
 * @param type "attachment" (default: download) or "inline" (display, e.g. images and PDFs)
 */
export function contentDisposition(filename: string, type: 'attachment' | 'inline' = 'attachment'): string {
  const base = filename.split(/[\\/]/).pop() || 'download';
  return createDisposition(base, { type });
}
