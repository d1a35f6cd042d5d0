import { expect } from 'chai';
import { Readable } from 'node:stream';
import { S3ServiceException } from '@aws-sdk/client-s3';
import {
  createStorage,
  S3Storage,
  StorageKeyError,
  StorageLimitError,
  StorageNotFoundError,
  StorageTypeError,
} from '../../../lib/storage/index.js';
import { PART_BYTES } from '../../../lib/storage/s3.js';
import { fakeS3, S3_BUCKET, S3_ENDPOINT } from './fake-s3.js';
import { bytes, chunked, PNG_1X1, readAll, sha256 } from './fixtures.js';

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

const MiB = 1024 * 1024;

describe('lib/storage/s3.ts: S3 storage driver against a fake S3-compatible endpoint', function () {
  this.timeout(60_000);
  let s3: ReturnType<typeof fakeS3>;
  let storage: S3Storage;

  beforeEach(() => {
    s3 = fakeS3();
    storage = createStorage({
      driver: 's3',
      bucket: S3_BUCKET,
      region: 'us-east-1',
      endpoint: S3_ENDPOINT,
      forcePathStyle: true,
      accessKeyId: 'test-access-key',
      secretAccessKey: 'test-secret-key',
    }) as S3Storage;
  });
  afterEach(() => {
    const { unmatched } = s3;
    s3.done();
    expect(unmatched, 'requests the fake S3 did not expect').to.deep.equal([]);
  });

  it('stores a small PNG with one PutObject and streams it back (round trip), then deletes it', async () => {
    expect(storage).to.be.instanceOf(S3Storage);
    const r = await storage.put('tenants/1/logo.png', chunked(PNG_1X1, 9), {
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
    expect(s3.log).to.deep.equal(['PutObject tenants/1/logo.png']);
    const stored = s3.objects.get('tenants/1/logo.png');
    expect(stored?.type).to.equal('image/png');
    expect(stored?.body.equals(PNG_1X1)).to.equal(true);

    const got = await storage.get('tenants/1/logo.png');
    expect(got.size).to.equal(PNG_1X1.length);
    expect(got.mime).to.equal('image/png');
    expect((await readAll(got.stream)).equals(PNG_1X1)).to.equal(true);
    expect(await storage.exists('tenants/1/logo.png')).to.equal(true);
    await storage.delete('tenants/1/logo.png');
    expect(await storage.exists('tenants/1/logo.png')).to.equal(false);
    expect(s3.log.slice(1)).to.deep.equal([
      'GetObject tenants/1/logo.png',
      'HeadObject tenants/1/logo.png',
      'DeleteObject tenants/1/logo.png',
      'HeadObject tenants/1/logo.png',
    ]);
  });

  it('refuses text named .png when only images are allowed, before any request', async () => {
    const src = Readable.from([Buffer.from('plain text pretending to be an image\n')]);
    const err = await rejection(storage.put('x.png', src, { maxBytes: 1024, allowedTypes: ['image/png'] }));
    expect(err).to.be.instanceOf(StorageTypeError);
    expect(err).to.include({ code: 'UNSUPPORTED_FILE_TYPE', status: 415, detected: 'text/plain' });
    expect(s3.log).to.deep.equal([]);
  });

  it('streams content over 5 MiB as a multipart upload in 5 MiB parts', async () => {
    const data = bytes(PART_BYTES + MiB);
    const r = await storage.put('exports/big.bin', chunked(data, 64 * 1024), { maxBytes: 20 * MiB });
    expect(r).to.include({ size: data.length, sha256: sha256(data), mime: 'application/octet-stream', ext: 'bin' });
    expect([...s3.log].sort()).to.deep.equal([
      'CompleteMultipartUpload exports/big.bin',
      'CreateMultipartUpload exports/big.bin',
      'UploadPart 1 exports/big.bin',
      'UploadPart 2 exports/big.bin',
    ]);
    expect(s3.log[0]).to.equal('CreateMultipartUpload exports/big.bin');
    expect(s3.log.at(-1)).to.equal('CompleteMultipartUpload exports/big.bin');
    expect(sha256(s3.objects.get('exports/big.bin')!.body)).to.equal(sha256(data));
    expect(s3.uploads.size).to.equal(0);
    const got = await storage.get('exports/big.bin');
    expect(got.size).to.equal(data.length);
    expect(sha256(await readAll(got.stream))).to.equal(sha256(data));
  });

  it('aborts the multipart upload when the size limit is passed mid-stream, storing nothing', async () => {
    const limit = PART_BYTES + MiB;
    const err = await rejection(storage.put('big.bin', chunked(bytes(limit + 1), 64 * 1024), { maxBytes: limit }));
    expect(err).to.be.instanceOf(StorageLimitError);
    expect(err).to.include({ code: 'PAYLOAD_TOO_LARGE', status: 413, maxBytes: limit });
    expect(s3.log).to.deep.equal([
      'CreateMultipartUpload big.bin',
      'UploadPart 1 big.bin',
      'AbortMultipartUpload big.bin',
    ]);
    expect(s3.objects.size).to.equal(0);
    expect(s3.uploads.size).to.equal(0);
  });

  it('sends nothing when a small upload passes its limit (limit + 1 bytes)', async () => {
    const err = await rejection(storage.put('small.bin', chunked(bytes(1001), 100), { maxBytes: 1000 }));
    expect(err).to.be.instanceOf(StorageLimitError);
    expect(s3.log).to.deep.equal([]);
  });

  it('aborts the multipart upload when S3 refuses a part', async () => {
    s3.done();
    s3 = fakeS3({ failPart: 2 });
    const err = await rejection(storage.put('big.bin', chunked(bytes(PART_BYTES + MiB)), { maxBytes: 20 * MiB }));
    expect(err).to.be.instanceOf(S3ServiceException);
    expect(err.name).to.equal('AccessDenied');
    expect(s3.log).to.include('AbortMultipartUpload big.bin');
    expect(s3.log).to.not.include('CompleteMultipartUpload big.bin');
    expect(s3.objects.size).to.equal(0);
    expect(s3.uploads.size).to.equal(0);
  });

  it('answers 404 for a missing key and refuses invalid keys without a request', async () => {
    const err = await rejection(storage.get('missing.txt'));
    expect(err).to.be.instanceOf(StorageNotFoundError);
    expect(err).to.include({ code: 'NOT_FOUND', status: 404 });
    expect(await storage.exists('missing.txt')).to.equal(false);
    await storage.delete('missing.txt');
    expect(s3.log).to.deep.equal(['GetObject missing.txt', 'HeadObject missing.txt', 'DeleteObject missing.txt']);
    for (const key of ['../x', '/abs', 'a\0b', 'a/../b']) {
      expect(await rejection(storage.get(key)), key).to.be.instanceOf(StorageKeyError);
      const put = storage.put(key, Readable.from([Buffer.from('x')]), { maxBytes: 9 });
      expect(await rejection(put)).to.be.instanceOf(StorageKeyError);
    }
    expect(s3.log).to.have.length(3);
  });
});
