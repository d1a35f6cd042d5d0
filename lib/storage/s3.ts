import { Readable } from 'node:stream';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type * as S3LibStorage from '@aws-sdk/lib-storage';
import { lazyRequire } from '../lazy-require.js';
import { StorageNotFoundError } from './errors.js';
import type { GetResult, PutOptions, PutResult, S3StorageConfig, Storage } from './types.js';
import { inspectUpload, validateKey } from './upload.js';

const sdk = lazyRequire<typeof S3Sdk>('@aws-sdk/client-s3');
const libStorage = lazyRequire<typeof S3LibStorage>('@aws-sdk/lib-storage');

/** Multipart part size: S3's minimum (5 MiB); at most PART_QUEUE parts are held in memory. */
export const PART_BYTES = 5 * 1024 * 1024;
const PART_QUEUE = 2;

/**
 * S3 storage driver (DESIGN.md §10 "files", when configured) on @aws-sdk/client-s3, also for
 * S3-compatible services (MinIO, R2, ...: give `endpoint` and `forcePathStyle`).
 * Uploads go through @aws-sdk/lib-storage's Upload: content up to 5 MiB is one PutObject, larger
 * content a multipart upload streamed in 5 MiB parts (at most 2 in memory). A refused or failed
 * upload stores nothing: the type is decided before any request, the size limit stops the stream
 * before the offending bytes are sent, and a failed multipart upload is aborted
 * (AbortMultipartUpload). If the abort itself fails, the parts stay invisible but billed: give the
 * bucket a lifecycle rule "AbortIncompleteMultipartUpload".
 */
export class S3Storage implements Storage {
  readonly client: S3Client;
  readonly bucket: string;

  /**
   * @param config bucket, region, credentials, optional endpoint and forcePathStyle
   * @param client an S3Client to use instead of one built from `config` (tests, shared clients)
   */
  constructor(config: Omit<S3StorageConfig, 'driver'>, client?: S3Client) {
    if (!config.bucket) throw new TypeError('S3Storage needs a bucket');
    this.bucket = config.bucket;
    this.client =
      client ??
      new (sdk().S3Client)({
        region: config.region,
        endpoint: config.endpoint,
        forcePathStyle: config.forcePathStyle ?? false,
        credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
        // checksums only where S3 requires them: S3-compatible services often reject the
        // aws-chunked trailing checksums the SDK sends by default
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        // no "Expect: 100-continue" on large bodies: services or proxies that never answer it make the
        // SDK stall every part for 6 s; the cost is that a refused part is sent before it is refused
        expectContinueHeader: false,
      });
  }

  /** @see Storage.put */
  async put(key: string, source: Readable, opts: PutOptions): Promise<PutResult> {
    validateKey(key);
    const upload = await inspectUpload(source, opts);
    let failure: unknown;
    upload.body.once('error', (e) => {
      failure = e;
    });
    const up = new (libStorage().Upload)({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: upload.body, ContentType: upload.mime },
      partSize: PART_BYTES,
      queueSize: PART_QUEUE,
      leavePartsOnError: false,
    });
    try {
      await up.done();
    } catch (e) {
      upload.body.destroy();
      // the stream's own error (StorageLimitError, the source's error) rather than its echo
      throw failure ?? e;
    }
    return { key, ...upload.digest(), mime: upload.mime, ext: upload.ext };
  }

  /** @see Storage.get */
  async get(key: string): Promise<GetResult> {
    validateKey(key);
    try {
      const r = await this.client.send(new (sdk().GetObjectCommand)({ Bucket: this.bucket, Key: key }));
      if (!(r.Body instanceof Readable)) throw new Error('S3 GetObject returned no Node stream');
      return { stream: r.Body, size: Number(r.ContentLength ?? 0), mime: r.ContentType || undefined };
    } catch (e) {
      if (isNotFound(e)) throw new StorageNotFoundError(key);
      throw e;
    }
  }

  /** @see Storage.delete */
  async delete(key: string): Promise<void> {
    validateKey(key);
    await this.client.send(new (sdk().DeleteObjectCommand)({ Bucket: this.bucket, Key: key }));
  }

  /** @see Storage.exists */
  async exists(key: string): Promise<boolean> {
    validateKey(key);
    try {
      await this.client.send(new (sdk().HeadObjectCommand)({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }
}

function isNotFound(e: unknown): boolean {
  // GetObject answers NoSuchKey; HeadObject has no body, so a bare 404 (NotFound)
  return e instanceof sdk().S3ServiceException && (e.name === 'NoSuchKey' || e.name === 'NotFound');
}
