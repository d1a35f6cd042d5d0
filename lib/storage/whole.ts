import { Readable } from 'node:stream';
import type { PutResult, Storage } from './types.js';

/**
 * Whole-file helpers over a Storage driver, for files a job or a route writes and reads back in
 * one piece (the supplier import's preview rows and import items, issue 16).
 */

/**
 * A stored file's whole content.
 * @throws the driver's StorageNotFoundError when the key is absent, or its read error
 */
export async function readWhole(storage: Storage, key: string): Promise<Buffer> {
  const { stream } = await storage.get(key);
  const parts: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) parts.push(chunk);
  return Buffer.concat(parts);
}

/**
 * Stores `value` as JSON text (UTF-8) under `key`.
 * @param maxBytes the put's limit (default: the text's own size)
 * @throws the driver's StorageLimitError above maxBytes, or its write error
 */
export function putJson(storage: Storage, key: string, value: unknown, maxBytes?: number): Promise<PutResult> {
  const text = Buffer.from(JSON.stringify(value));
  return storage.put(key, Readable.from([text]), { maxBytes: maxBytes ?? text.length });
}
