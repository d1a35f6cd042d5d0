import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Loads a CommonJS package on first use instead of at import time.
 *
 * Every web, worker and mail process (and every test that starts one) imports the whole route and
 * job table; packages only some requests or jobs need (the S3 SDK, imapflow, mailparser, nodemailer,
 * ssh2, sanitize-html, bull-board) cost about 2 s of CPU per process start when imported eagerly.
 * Behind this getter they load the first time a request or job needs them, synchronously, so the
 * calling code keeps its shape. Types still come from `import type`.
 * @param id the package (or package subpath) to require, e.g. `'imapflow'`
 * @returns a getter answering the package's module.exports, loading it once
 * @throws whatever require() throws (a missing package) on the first call
 */
export function lazyRequire<T>(id: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= require(id) as T);
}
