import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

/** A valid 1×1 PNG (70 bytes). */
export const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Random bytes, starting with 00 01 so that no file-type signature matches. */
export function bytes(n: number): Buffer {
  const b = randomBytes(n);
  if (n > 1) {
    b[0] = 0x00;
    b[1] = 0x01;
  }
  return b;
}

/** A stream of `data` in chunks of `chunk` bytes (as an HTTP request body arrives). */
export function chunked(data: Buffer, chunk = 16 * 1024): Readable {
  return Readable.from(
    (function* () {
      for (let i = 0; i < data.length; i += chunk) yield data.subarray(i, i + chunk);
    })(),
  );
}

/** Reads a stream to the end. */
export async function readAll(s: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}
