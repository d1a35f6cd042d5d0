import { createHash, randomUUID } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import nock from 'nock';

/** Endpoint of the fake S3-compatible service (path-style: /<bucket>/<key>). */
export const S3_ENDPOINT = 'http://s3.test';
export const S3_BUCKET = 'files';

/** Nock hands a request body over as UTF-8 text when it is representable so, as hex otherwise. */
function nockBody(s: unknown): Buffer {
  if (typeof s !== 'string') return Buffer.from(JSON.stringify(s ?? ''));
  // Buffer.from stops at the first non-hex character: a full-length result means s is all hex
  const b = s.length % 2 === 0 ? Buffer.from(s, 'hex') : undefined;
  if (b && b.length * 2 === s.length && !isUtf8(b)) return b;
  return Buffer.from(s, 'utf8');
}

const xml = (body: string) => `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
const XML = { 'Content-Type': 'application/xml' };
const etag = (b: Buffer) => `"${createHash('md5').update(b).digest('hex')}"`;
const s3Error = (status: number, code: string, message: string): [number, string, Record<string, string>] => [
  status,
  xml(`<Error><Code>${code}</Code><Message>${message}</Message><RequestId>fake</RequestId></Error>`),
  XML,
];

/**
 * An in-memory S3 bucket behind nock, answering the REST API as AWS documents it: PutObject,
 * CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload, GetObject,
 * HeadObject, DeleteObject. `log` lists the operations received in order ("UploadPart 2 big.bin").
 * `failPart` makes UploadPart of that part number answer 403 AccessDenied.
 */
export function fakeS3(opts: { failPart?: number } = {}) {
  const objects = new Map<string, { body: Buffer; type: string }>();
  const uploads = new Map<string, { key: string; type: string; parts: Map<number, Buffer> }>();
  const log: string[] = [];
  const unmatched: string[] = [];
  const onNoMatch = (req: { method?: string; path?: string; href?: string }) =>
    unmatched.push(`${req.method} ${req.path ?? req.href}`);
  nock.emitter.on('no match', onNoMatch);

  const parse = (uri: string) => {
    const u = new URL(uri, S3_ENDPOINT);
    const [, bucket, ...rest] = u.pathname.split('/');
    if (bucket !== S3_BUCKET) throw new Error(`unexpected bucket ${bucket}`);
    return { key: rest.map(decodeURIComponent).join('/'), q: u.searchParams };
  };
  const path = new RegExp(`^/${S3_BUCKET}/`);
  type Reply = [number, string | Buffer, Record<string, string>?];

  const scope = nock(S3_ENDPOINT)
    .persist()
    .put(path)
    .query(true)
    .reply(function (uri, body): Reply {
      const { key, q } = parse(uri);
      const data = nockBody(body);
      const uploadId = q.get('uploadId');
      if (uploadId) {
        const n = Number(q.get('partNumber'));
        log.push(`UploadPart ${n} ${key}`);
        const up = uploads.get(uploadId);
        if (!up) return s3Error(404, 'NoSuchUpload', 'The specified upload does not exist.');
        if (n === opts.failPart) return s3Error(403, 'AccessDenied', 'Access Denied');
        up.parts.set(n, data);
        return [200, '', { ETag: etag(data) }];
      }
      log.push(`PutObject ${key}`);
      objects.set(key, { body: data, type: String(this.req.headers['content-type'] ?? 'binary/octet-stream') });
      return [200, '', { ETag: etag(data) }];
    })
    .post(path)
    .query(true)
    .reply(function (uri, body): Reply {
      const { key, q } = parse(uri);
      if (q.has('uploads')) {
        const id = randomUUID();
        log.push(`CreateMultipartUpload ${key}`);
        const type = String(this.req.headers['content-type'] ?? 'binary/octet-stream');
        uploads.set(id, { key, type, parts: new Map() });
        return [
          200,
          xml(
            `<InitiateMultipartUploadResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
              `<Bucket>${S3_BUCKET}</Bucket><Key>${key}</Key><UploadId>${id}</UploadId>` +
              '</InitiateMultipartUploadResult>',
          ),
          XML,
        ];
      }
      const id = q.get('uploadId') ?? '';
      log.push(`CompleteMultipartUpload ${key}`);
      const up = uploads.get(id);
      if (!up) return s3Error(404, 'NoSuchUpload', 'The specified upload does not exist.');
      const listed = [
        ...nockBody(body)
          .toString()
          .matchAll(/<PartNumber>(\d+)<\/PartNumber>/g),
      ].map((m) => Number(m[1]));
      const data = Buffer.concat(listed.map((n) => up.parts.get(n) ?? Buffer.alloc(0)));
      objects.set(key, { body: data, type: up.type });
      uploads.delete(id);
      return [
        200,
        xml(
          `<CompleteMultipartUploadResult><Location>${S3_ENDPOINT}/${S3_BUCKET}/${key}</Location>` +
            `<Bucket>${S3_BUCKET}</Bucket><Key>${key}</Key><ETag>"${listed.length}-parts"</ETag>` +
            '</CompleteMultipartUploadResult>',
        ),
        XML,
      ];
    })
    .delete(path)
    .query(true)
    .reply((uri): Reply => {
      const { key, q } = parse(uri);
      const id = q.get('uploadId');
      if (id) {
        log.push(`AbortMultipartUpload ${key}`);
        uploads.delete(id);
      } else {
        log.push(`DeleteObject ${key}`);
        objects.delete(key);
      }
      return [204, ''];
    })
    .get(path)
    .query(true)
    .reply((uri): Reply => {
      const { key } = parse(uri);
      log.push(`GetObject ${key}`);
      const o = objects.get(key);
      if (!o) return s3Error(404, 'NoSuchKey', 'The specified key does not exist.');
      return [200, o.body, { 'Content-Type': o.type, 'Content-Length': String(o.body.length), ETag: etag(o.body) }];
    })
    .head(path)
    .query(true)
    .reply((uri): Reply => {
      const { key } = parse(uri);
      log.push(`HeadObject ${key}`);
      const o = objects.get(key);
      if (!o) return [404, ''];
      return [200, '', { 'Content-Type': o.type, 'Content-Length': String(o.body.length) }];
    });

  return {
    objects,
    uploads,
    log,
    unmatched,
    /** Removes the interceptors and the no-match listener. */
    done() {
      scope.persist(false);
      nock.emitter.off('no match', onNoMatch);
      nock.cleanAll();
    },
  };
}
