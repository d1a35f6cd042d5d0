import type { Readable } from 'node:stream';

/** Options of Storage.put. */
export interface PutOptions {
  /** Largest accepted size in bytes; one byte more aborts the upload with StorageLimitError. */
  maxBytes: number;
  /**
   * Accepted MIME types as detected from the content: exact ("image/png", "application/pdf") or a
   * whole family ("image/*"). Content no signature matches is "text/plain" when it is UTF-8 text
   * without control characters (CSV imports: allow "text/plain"), else "application/octet-stream".
   * Absent: any type.
   */
  allowedTypes?: readonly string[];
}

/** What Storage.put stored. */
export interface PutResult {
  /** the key it was stored under */
  key: string;
  /** size in bytes */
  size: number;
  /** MIME type detected from the content (see PutOptions.allowedTypes) */
  mime: string;
  /** file extension matching the detected type, without a dot ("png", "pdf", "txt", "bin") */
  ext: string;
  /** SHA-256 of the content, lower-case hex */
  sha256: string;
}

/** A stored file, ready to stream. */
export interface GetResult {
  /** the content; the caller must read it to the end or destroy it */
  stream: Readable;
  /** size in bytes */
  size: number;
  /** MIME type recorded (S3) or detected from the content (local disk) */
  mime?: string;
}

/**
 * The one storage driver (DESIGN.md §10 "files"): local disk or S3, same behaviour.
 * Keys are relative paths with "/" separators ("tenants/12/tickets/9f3c.png"); see validateKey.
 */
export interface Storage {
  /**
   * Streams `source` into storage under `key` (replacing what was there). The content is never
   * buffered whole: the first 4 KiB decide the type (magic bytes, file-type), the size limit is
   * enforced while streaming, and a refused or failed write leaves nothing behind (and the old
   * content under `key`, if any, untouched).
   * @throws StorageKeyError (422) for an invalid key, StorageTypeError (415) for a type outside
   *   `allowedTypes`, StorageLimitError (413) beyond `maxBytes`; the source's own error or the
   *   backend's error otherwise
   */
  put(key: string, source: Readable, opts: PutOptions): Promise<PutResult>;
  /**
   * Opens a stored file for reading.
   * @throws StorageNotFoundError (404) when nothing is stored under `key`; StorageKeyError (422)
   */
  get(key: string): Promise<GetResult>;
  /** Removes the file under `key`; no error when there is none. @throws StorageKeyError (422) */
  delete(key: string): Promise<void>;
  /** Whether a file is stored under `key`. @throws StorageKeyError (422) */
  exists(key: string): Promise<boolean>;
}

/** Local-disk driver configuration: files live under `root` (by convention DATA_DIR/storage). */
export interface LocalStorageConfig {
  driver: 'local';
  /** absolute directory (created when missing) */
  root: string;
}

/** S3 (or S3-compatible: MinIO, R2, ...) driver configuration. */
export interface S3StorageConfig {
  driver: 's3';
  bucket: string;
  region: string;
  /** endpoint URL of an S3-compatible service, e.g. "https://minio.example:9000"; absent: AWS */
  endpoint?: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** path-style URLs (endpoint/bucket/key), which most S3-compatible services need */
  forcePathStyle?: boolean;
}

/** Configuration accepted by createStorage. */
export type StorageConfig = LocalStorageConfig | S3StorageConfig;
