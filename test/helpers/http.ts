import http from 'node:http';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createApp } from '../../api/app.js';
import { handleWebClientErrors } from '../../api/middleware/errors.js';
import { createLogger } from '../../lib/logger.js';
import { createQueues, type Queues } from '../../jobs/queues.js';
import { createStorage, type Storage } from '../../lib/storage/index.js';
import type { AppDeps } from '../../api/context.js';
import { env, registerCleanup } from './env.js';

/** A response as the tests see it. */
export interface TestResponse {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

/** Options of a test request. */
export interface RequestOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  raw?: string;
}

/** A running app on a loopback port with a request helper and the log lines it wrote. */
export interface TestApp {
  url: string;
  logs: string[];
  queues: Queues;
  /** The app's storage driver (local disk under the test run's directory unless one was given). */
  storage: Storage;
  /** The APP_KEY the app seals credentials with (TEST_WEB_APP_KEY unless the config overrides it). */
  appKey: Buffer;
  request(method: string, path: string, opts?: RequestOptions): Promise<TestResponse>;
}

let counter = 0;

/** The APP_KEY of the web apps of this test run (startTestApp), so tests can open what they sealed. */
export const TEST_WEB_APP_KEY: Buffer = randomBytes(32);

/**
 * Starts the web app on an ephemeral port against the test database and Redis. Log lines are
 * captured in `logs` (tests check secrets never reach them).
 * @param config overrides of AppDeps.config (e.g. a small rate limit)
 * @param deps.storage the storage driver (default: local disk under `<test dir>/storage`)
 */
export async function startTestApp(
  config: Partial<AppDeps['config']> = {},
  deps: { storage?: Storage } = {},
): Promise<TestApp> {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const logger = createLogger('info', sink);
  const queues = createQueues(env.redisUrl, { prefix: `{test-${process.pid}-${++counter}}` });
  const storage = deps.storage ?? createStorage({ driver: 'local', root: path.join(env.dir, 'storage') });
  const { app } = createApp({
    knex: env.knex,
    redis: env.redis,
    logger,
    queues,
    storage,
    config: {
      publicBaseUrl: 'http://127.0.0.1',
      rateLimit: { points: 100000, durationSeconds: 60 },
      appKey: TEST_WEB_APP_KEY,
      ...config,
    },
  });
  const server = http.createServer(app.callback());
  handleWebClientErrors(server, logger);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  registerCleanup(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await queues.close();
  });
  return {
    url,
    logs,
    queues,
    storage,
    appKey: config.appKey ?? TEST_WEB_APP_KEY,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
      if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.raw !== undefined) {
        body = opts.raw;
        headers['content-type'] ??= 'application/json';
      } else if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body, redirect: 'manual' });
      const text = await res.text();
      let parsed: any;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      return { status: res.status, body: parsed, headers: res.headers, text };
    },
  };
}
