import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import busboy from 'busboy';
import { PayloadTooLarge, ValidationFailed } from '../errors.js';

/**
 * Streamed multipart/form-data uploads of one file (DESIGN.md §10 "files": uploads streamed to
 * storage, never buffered whole; size limits enforced while streaming). The web service's body
 * parser leaves multipart bodies alone (api/http/body.ts); a route that takes a file declares
 * `upload` (documentation only) and calls receiveFile() in its handler.
 */

/** What the client said about the file (never trusted for its type: the storage driver decides that by content). */
export interface UploadedFileInfo {
  /** The file name the client sent (UTF-8), or null when it sent none. */
  filename: string | null;
  /** The part's Content-Type as the client sent it (informational only). */
  mimeType: string;
}

/** Options of receiveFile. */
export interface ReceiveFileOptions {
  /** The form field that carries the file (e.g. `file`). */
  field: string;
  /** The largest accepted file, in bytes; the storage driver enforces it while streaming (413). */
  maxBytes: number;
  /**
   * Bytes of multipart framing allowed on top of maxBytes (default 64 KiB). A request declaring a
   * larger Content-Length is refused (413) before anything is read; after a refusal the rest of
   * the request is read and dropped up to maxBytes + slackBytes, so that the client sees the answer
   * on a kept-alive connection; beyond that the connection is closed after the answer.
   */
  slackBytes?: number;
}

/** The part of a Koa context receiveFile uses. */
export interface UploadContext {
  req: IncomingMessage;
  is(type: string): string | false | null;
  get(field: string): string;
  set(field: string, value: string): void;
}

const DEFAULT_SLACK = 64 * 1024;

/**
 * Reads a multipart/form-data request that carries exactly one file in `opts.field` and no other
 * field, and hands the file to `store` as a stream while it arrives.
 * - Not multipart, no file, another field, a second file or a malformed body: 422
 *   VALIDATION_FAILED naming the field. A file that `store` already kept when the body turns out
 *   bad (a field after the file, a broken closing boundary) is handed to `discard`.
 * - `store`'s own error (e.g. the storage driver's 413 StorageLimitError or 415 StorageTypeError) is
 *   rethrown as it is.
 * - A Content-Length beyond maxBytes + slackBytes: 413 PAYLOAD_TOO_LARGE before anything is read,
 *   with `Connection: close`.
 * @param ctx the request (Koa context)
 * @param store streams the file somewhere (read `file` to its end or fail); resolves to what it kept
 * @param discard undoes a successful `store` when the request fails afterwards
 * @returns what `store` resolved to
 * @throws ValidationFailed, PayloadTooLarge, or `store`'s error
 */
export async function receiveFile<T>(
  ctx: UploadContext,
  opts: ReceiveFileOptions,
  store: (file: Readable, info: UploadedFileInfo) => Promise<T>,
  discard: (stored: T) => Promise<void>,
): Promise<T> {
  const { field } = opts;
  const invalid = (reason: string) => new ValidationFailed({ [field]: [reason] });
  if (!ctx.is('multipart/form-data')) {
    throw invalid(`Send the file as multipart/form-data in the ${field} field.`);
  }
  const cap = opts.maxBytes + (opts.slackBytes ?? DEFAULT_SLACK);
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > cap) {
    ctx.set('Connection', 'close');
    throw new PayloadTooLarge(`The file is larger than allowed (at most ${opts.maxBytes} bytes).`);
  }
  const req = ctx.req;
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: { files: 1, fields: 10, fieldSize: 1024, parts: 11, headerPairs: 20, fileSize: opts.maxBytes + 1 },
    });
  } catch {
    throw invalid('The upload is not a valid multipart/form-data body.');
  }

  let failure: unknown = null;
  const fail = (e: unknown) => {
    failure ??= e;
  };
  let stored: { value: T } | null = null;
  let storing: Promise<void> | null = null;
  let current: PassThrough | null = null;
  let endParsing!: () => void;
  const parsed = new Promise<void>((resolve) => {
    endParsing = resolve;
  });
  // stops parsing the request: the rest is neither parsed nor stored, the connection closes after the answer.
  // With a declared length (at most `cap`, checked above) the rest is read and dropped, so the client, still
  // sending its last bytes, gets the answer and not a reset (a socket closed with unread data sends RST);
  // without one (chunked) nothing more is read.
  const stopReading = (e: unknown) => {
    fail(e);
    req.unpipe(bb);
    if (Number.isFinite(declared)) req.resume();
    else req.pause();
    current?.destroy(e instanceof Error ? e : new Error(String(e)));
    ctx.set('Connection', 'close');
    endParsing();
  };

  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > cap)
      stopReading(new PayloadTooLarge(`The file is larger than allowed (at most ${opts.maxBytes} bytes).`));
  };
  const onClose = () => {
    if (!req.complete) stopReading(invalid('The upload was interrupted.'));
  };

  bb.on('file', (name: string, file: Readable, info: busboy.FileInfo) => {
    if (name !== field) fail(new ValidationFailed({ [name]: [`The ${name} field is not allowed.`] }));
    if (name !== field || storing || failure) {
      file.resume();
      return;
    }
    // the store reads a stream of our own: whatever it does to it (pause, unpipe) never stalls the parser
    const own = new PassThrough();
    current = own;
    file.on('error', (e) => own.destroy(e));
    file.pipe(own);
    storing = store(own, { filename: info.filename || null, mimeType: info.mimeType }).then(
      (value) => {
        stored = { value };
      },
      (e) => {
        fail(e);
        file.unpipe(own);
        own.destroy();
        file.resume(); // drop the rest of the file; the parser goes on to the end of the body
      },
    );
  });
  bb.on('field', (name: string) => fail(new ValidationFailed({ [name]: [`The ${name} field is not allowed.`] })));
  bb.on('filesLimit', () => fail(invalid('Send one file only.')));
  bb.on('partsLimit', () => fail(invalid('Send one file only.')));
  bb.on('fieldsLimit', () => fail(invalid('Send one file only.')));
  bb.on('error', () => stopReading(invalid('The upload is not a valid multipart/form-data body.')));
  bb.on('close', () => endParsing());

  req.on('data', onData);
  req.on('close', onClose);
  req.pipe(bb);
  try {
    await parsed;
    // `storing` is assigned inside the parser's callbacks, which TypeScript's flow analysis cannot see
    await (storing as Promise<void> | null);
  } finally {
    req.off('data', onData);
    req.off('close', onClose);
  }
  const kept = stored as { value: T } | null;
  if (failure) {
    if (kept) await discard(kept.value);
    throw failure;
  }
  if (!kept) throw invalid(`The ${field} field is required.`);
  return kept.value;
}
