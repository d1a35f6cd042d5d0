import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { ApkSigningSource, SigningMaterial } from '../../../jobs/apk/signing.js';
import type { TenantFixture } from '../../helpers/fixtures.js';

/**
 * Helpers of the apk-build tests (not a spec file): an in-memory keystore source whose keystore
 * keytool made with a sentinel password, a build row, and a scan for processes left in a directory.
 */

/** The keystore password no log, row, Redis value or response may ever show. */
export const SENTINEL_PASSWORD = 'Sentinel-ks-pass-5f1c9e';

/** A keystore source over one keytool-made PKCS12 file (created once per test run). */
export interface FakeSigning extends ApkSigningSource {
  /** Tenants x app types with a "stored" release keystore. */
  release: Set<string>;
  /** writeKeystore calls, as `tenant/appType/buildType`. */
  calls: string[];
  /** Mode bits of every keystore file written. */
  modes: number[];
}

let keystore: Promise<string> | null = null;

/** keytool -genkeypair with SENTINEL_PASSWORD, once. */
function makeKeystore(): Promise<string> {
  keystore ??= (async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'apk-ks-'));
    const file = path.join(dir, 'test.p12');
    await execa(
      'keytool',
      [
        '-genkeypair',
        '-keystore',
        file,
        '-storetype',
        'PKCS12',
        '-storepass:env',
        'KS_PASS',
        '-keypass:env',
        'KS_PASS',
        '-alias',
        'testkey',
        '-keyalg',
        'RSA',
        '-keysize',
        '2048',
        '-validity',
        '365',
        '-dname',
        'CN=Test',
        '-noprompt',
      ],
      { env: { KS_PASS: SENTINEL_PASSWORD } },
    );
    return file;
  })();
  return keystore;
}

/** The in-memory keystore source of the tests. */
export function fakeSigning(): FakeSigning {
  const release = new Set<string>();
  const calls: string[] = [];
  const modes: number[] = [];
  return {
    release,
    calls,
    modes,
    async hasReleaseKeystore(tenantId, appType) {
      return release.has(`${tenantId}/${appType}`);
    },
    async writeKeystore(tenantId, appType, buildType, dir): Promise<SigningMaterial> {
      calls.push(`${tenantId}/${appType}/${buildType}`);
      const storeFile = path.join(dir, 'keystore.p12');
      await fs.copyFile(await makeKeystore(), storeFile);
      await fs.chmod(storeFile, 0o600);
      modes.push((await fs.stat(storeFile)).mode & 0o777);
      return {
        storeFile,
        storeType: 'PKCS12',
        storePassword: SENTINEL_PASSWORD,
        keyAlias: 'testkey',
        keyPassword: SENTINEL_PASSWORD,
      };
    },
  };
}

/** Inserts a queued build of the tenant's app type with a valid configuration snapshot. */
export async function queuedBuild(
  f: TenantFixture,
  opts: { appType?: string; buildType?: 'debug' | 'release'; appName?: string } = {},
): Promise<number> {
  const appType = opts.appType ?? 'portal';
  const config = {
    app_type: appType,
    app_name: opts.appName ?? 'Test App',
    package_id: 'id.test.app',
    version_name: '1.0.0',
    version_code: 1,
    base_url: 'https://app.test',
    api_url: null,
    environment: 'production',
    theme_color: '#123456',
    orientation: 'portrait',
    signing_mode: opts.buildType === 'release' ? 'release' : 'debug',
  };
  const row = await f.scope.insert('apk_builds', {
    app_type: appType,
    build_type: opts.buildType ?? 'debug',
    status: 'queued',
    toolchain: 'stub',
    config: JSON.stringify(config),
    version_name: '1.0.0',
    version_code: 1,
  });
  return row.id;
}

/**
 * Pids of the processes whose working directory is under `dir` (the build's process group lives in
 * its work directory): what must be empty once a build ended.
 */
export async function processesUnder(dir: string): Promise<number[]> {
  const out: number[] = [];
  for (const p of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    const cwd = await fs.readlink(`/proc/${p}/cwd`).catch(() => null);
    if (cwd && (cwd === dir || cwd.startsWith(dir + path.sep))) out.push(Number(p));
  }
  return out;
}

/** Pids of the processes whose parent is `pid` (e.g. a worker's sandboxed children). */
export async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const p of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    const stat = await fs.readFile(`/proc/${p}/stat`, 'utf8').catch(() => null);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")"
    const ppid = stat ? Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) : NaN;
    if (ppid === pid) out.push(Number(p));
  }
  return out;
}

/** Pid printed by the stub ("Starting Gradle stub worker (pid N)"), if any. */
export function stubWorkerPid(lines: string[]): number | null {
  for (const l of lines) {
    const m = /Starting Gradle stub worker \(pid (\d+)\)/.exec(l);
    if (m) return Number(m[1]);
  }
  return null;
}

/**
 * True while a process with this pid runs. A zombie (killed, not yet reaped: a container's init may
 * never reap orphans) counts as gone.
 */
export async function alive(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (!stat) return false;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}
