import busboy from 'busboy';
import type { UploadContext } from '../http/multipart.js';
import { PayloadTooLarge, ValidationFailed, type FieldErrors } from '../errors.js';

/**
 * A small multipart/form-data form: a few text fields and at most one small file, read whole into
 * memory (issue 12 item 8: a keystore of at most 1 MB that is sealed into the database anyway, so it
 * is never streamed to storage; decision in docs/decisions.md). api/http/multipart.ts stays the
 * streaming path for real uploads.
 */

/** What readSmallForm returns. */
export interface SmallForm {
  /** the text fields as sent (the last value of a repeated field) */
  fields: Record<string, string>;
  /** the file's bytes, or null when none was sent */
  file: Buffer | null;
}

/** Options of readSmallForm. */
export interface SmallFormOptions {
  /** the form field of the file */
  fileField: string;
  /** the text fields allowed (any other: 422 naming it) */
  fields: readonly string[];
  /** the largest file in bytes (413 beyond) */
  maxFileBytes: number;
  /** the longest text field in bytes (422 beyond) */
  maxFieldBytes: number;
}

/** Multipart framing and fields allowed on top of the file, in bytes. */
const SLACK = 64 * 1024;

/**
 * Reads the whole form.
 * @throws ValidationFailed (422) for a body that is not multipart, malformed, has unknown fields, a
 *   second file or an over-long field; PayloadTooLarge (413) for a file over maxFileBytes or a body
 *   declaring more than maxFileBytes + 64 KiB (then with `Connection: close`)
 */
export async function readSmallForm(ctx: UploadContext, opts: SmallFormOptions): Promise<SmallForm> {
  if (!ctx.is('multipart/form-data')) {
    throw new ValidationFailed({ [opts.fileField]: ['Send the form as multipart/form-data.'] });
  }
  const tooLarge = () => new PayloadTooLarge(`The file is larger than allowed (at most ${opts.maxFileBytes} bytes).`);
  const cap = opts.maxFileBytes + SLACK;
  const declared = Number(ctx.get('content-length') || NaN);
  if (Number.isFinite(declared) && declared > cap) {
    ctx.set('Connection', 'close');
    throw tooLarge();
  }
  const req = ctx.req;
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: req.headers,
      defParamCharset: 'utf8',
      limits: {
        files: 1,
        fields: opts.fields.length + 4,
        parts: opts.fields.length + 5,
        fieldSize: opts.maxFieldBytes,
        headerPairs: 20,
        fileSize: opts.maxFileBytes,
      },
    });
  } catch {
    throw new ValidationFailed({ [opts.fileField]: ['The body is not a valid multipart/form-data form.'] });
  }
  const errors: FieldErrors = {};
  const addError = (field: string, reason: string) => {
    errors[field] ??= [];
    if (!errors[field].includes(reason)) errors[field].push(reason);
  };
  const fields: Record<string, string> = {};
  const chunks: Buffer[] = [];
  let sawFile = false;
  let fatal: Error | null = null;
  let onData: (chunk: Buffer) => void = () => {};
  let onClose: () => void = () => {};

  await new Promise<void>((resolve) => {
    let received = 0;
    const stop = (e: Error) => {
      fatal ??= e;
      req.unpipe(bb);
      req.pause();
      ctx.set('Connection', 'close');
      resolve();
    };
    onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > cap) stop(tooLarge());
    };
    onClose = () => {
      if (!req.complete) stop(new ValidationFailed({ [opts.fileField]: ['The upload was interrupted.'] }));
    };
    bb.on('file', (name, stream) => {
      if (name !== opts.fileField) addError(name, `The ${name} field is not allowed.`);
      else if (sawFile) addError(name, 'Send one file only.');
      if (name !== opts.fileField || sawFile) {
        stream.resume();
        return;
      }
      sawFile = true;
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => stop(tooLarge()));
    });
    bb.on('field', (name, value, info) => {
      if (!opts.fields.includes(name)) addError(name, `The ${name} field is not allowed.`);
      else if (info.valueTruncated) addError(name, `The ${name} field is too long.`);
      else fields[name] = value;
    });
    const tooMany = () => addError(opts.fileField, 'The form has too many parts.');
    bb.on('filesLimit', () => addError(opts.fileField, 'Send one file only.'));
    bb.on('fieldsLimit', tooMany);
    bb.on('partsLimit', tooMany);
    bb.on('error', () =>
      stop(new ValidationFailed({ [opts.fileField]: ['The body is not a valid multipart/form-data form.'] })),
    );
    bb.on('close', () => resolve());
    req.on('data', onData);
    req.on('close', onClose);
    req.pipe(bb);
  }).finally(() => {
    req.off('data', onData);
    req.off('close', onClose);
  });
  if (fatal) throw fatal;
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  return { fields, file: sawFile ? Buffer.concat(chunks) : null };
}
