import fs from 'node:fs/promises';
import path from 'node:path';
import { execa } from 'execa';
import { which } from '../../lib/infra/apt.js';
import { searchPath } from '../../lib/config.js';

/**
 * The Android builder's environment (issue 12 items 3, 10; document 2 "Mobile app builder" GET
 * /api/android-apk/health): what is installed, whether it is good enough, and which toolchain
 * builds run with. Probes run with short timeouts and are cached for {@link HEALTH_CACHE_MS} per
 * process, so the list endpoint stays fast.
 */

/** Compile SDK of templates/android-app (`platforms;android-34`, build-tools 34). */
export const ANDROID_API_LEVEL = 34;
/** Lowest Java major version the Android Gradle Plugin 8 accepts. */
export const MIN_JAVA_MAJOR = 17;
/** How long a health result is reused, in ms. */
export const HEALTH_CACHE_MS = 30_000;

/** One probed tool. `status`: ok, missing (not installed / not found) or unusable (found but not good enough). */
export interface HealthItem {
  name: 'node' | 'npm' | 'java' | 'keytool' | 'android_sdk' | 'storage';
  status: 'ok' | 'missing' | 'unusable';
  version: string | null;
  path: string | null;
  /** What to install or change; null when ok. */
  hint: string | null;
}

/** GET /api/android-apk/health's data. */
export interface ApkHealth {
  /** True when a build can run with `toolchain`. */
  ready: boolean;
  toolchain: 'real' | 'stub';
  /** APK_TOOLCHAIN as configured (real, stub, auto). */
  mode: 'real' | 'stub' | 'auto';
  items: HealthItem[];
}

/** What the probes look at (lib/config.ts ApkConfig plus the storage root). */
export interface ToolchainOptions {
  mode: 'real' | 'stub' | 'auto';
  androidHome?: string;
  javaHome?: string;
  /** `npm start`: auto falls back to the stub when Java or the SDK are not ready. */
  devLauncher?: boolean;
  /** Local storage root to check for writing and free space; undefined for S3 (reported ok, not probed). */
  storageRoot?: string;
  /** PATH to look tools up in (default this process's). */
  pathVar?: string;
}

const DOCS = 'docs/app-builder.md';

async function run(file: string, args: string[]): Promise<string | null> {
  try {
    const r = await execa(file, args, { timeout: 15_000, reject: false, all: true, stdin: 'ignore' });
    return r.exitCode === 0 ? (r.all ?? '') : null;
  } catch {
    return null;
  }
}

async function javaTool(name: string, opts: ToolchainOptions): Promise<string | null> {
  if (opts.javaHome) {
    const p = path.join(opts.javaHome, 'bin', name);
    try {
      await fs.access(p, fs.constants.X_OK);
      return p;
    } catch {
      return null;
    }
  }
  return which(name, opts.pathVar ?? searchPath());
}

/** The Java major version in `java -version` output ("17.0.15" -> 17, "1.8.0" -> 8), or null. */
export function javaMajor(output: string): number | null {
  const m = /version "(\d+)(?:\.(\d+))?/.exec(output);
  if (!m) return null;
  const first = Number(m[1]);
  return first === 1 && m[2] ? Number(m[2]) : first;
}

async function probeJava(opts: ToolchainOptions): Promise<HealthItem> {
  const p = await javaTool('java', opts);
  const item: HealthItem = { name: 'java', status: 'missing', version: null, path: p, hint: null };
  if (!p) {
    item.hint = `Install a JDK ${MIN_JAVA_MAJOR} (Debian: apt-get install -y openjdk-17-jdk-headless) or set JAVA_HOME; see ${DOCS}`;
    return item;
  }
  const out = await run(p, ['-version']);
  const major = out ? javaMajor(out) : null;
  item.version = out ? (/version "([^"]+)"/.exec(out)?.[1] ?? null) : null;
  if (major !== null && major >= MIN_JAVA_MAJOR) item.status = 'ok';
  else {
    item.status = 'unusable';
    item.hint = `Java ${MIN_JAVA_MAJOR} or newer is needed (found ${item.version ?? 'an unknown version'}); see ${DOCS}`;
  }
  return item;
}

async function probeKeytool(opts: ToolchainOptions, java: HealthItem): Promise<HealthItem> {
  const p = await javaTool('keytool', opts);
  return p
    ? { name: 'keytool', status: 'ok', version: java.version, path: p, hint: null }
    : {
        name: 'keytool',
        status: 'missing',
        version: null,
        path: null,
        hint: `keytool comes with the JDK: install openjdk-17-jdk-headless (a JRE alone may lack it); see ${DOCS}`,
      };
}

async function exists(p: string): Promise<boolean> {
  return fs.access(p).then(
    () => true,
    () => false,
  );
}

async function probeSdk(opts: ToolchainOptions): Promise<HealthItem> {
  const home = opts.androidHome;
  const item: HealthItem = { name: 'android_sdk', status: 'missing', version: null, path: home ?? null, hint: null };
  if (!home || !(await exists(home))) {
    item.hint = `Set ANDROID_HOME to an Android SDK with "platforms;android-${ANDROID_API_LEVEL}" and "build-tools;${ANDROID_API_LEVEL}.0.0" (sdkmanager), licences accepted; see ${DOCS}`;
    return item;
  }
  const missing: string[] = [];
  if (!(await exists(path.join(home, 'platforms', `android-${ANDROID_API_LEVEL}`))))
    missing.push(`platforms;android-${ANDROID_API_LEVEL}`);
  const tools = await fs.readdir(path.join(home, 'build-tools')).catch(() => [] as string[]);
  const bt = tools.filter((t) => t.startsWith(`${ANDROID_API_LEVEL}.`)).sort();
  if (!bt.length) missing.push(`build-tools;${ANDROID_API_LEVEL}.0.0`);
  if (!(await exists(path.join(home, 'licenses', 'android-sdk-license')))) missing.push('accepted licences');
  item.version = bt.length ? `android-${ANDROID_API_LEVEL}, build-tools ${bt[bt.length - 1]}` : null;
  if (missing.length) {
    item.status = 'unusable';
    item.hint = `The SDK at ANDROID_HOME lacks ${missing.join(', ')}: run sdkmanager "platforms;android-${ANDROID_API_LEVEL}" "build-tools;${ANDROID_API_LEVEL}.0.0" and sdkmanager --licenses; see ${DOCS}`;
  } else item.status = 'ok';
  return item;
}

async function probeStorage(root: string | undefined): Promise<HealthItem> {
  if (!root) return { name: 'storage', status: 'ok', version: 's3', path: null, hint: null };
  const item: HealthItem = { name: 'storage', status: 'ok', version: null, path: root, hint: null };
  try {
    await fs.mkdir(root, { recursive: true });
    const probe = path.join(root, `.health-${process.pid}-${Date.now()}`);
    await fs.writeFile(probe, 'ok');
    await fs.rm(probe, { force: true });
    const st = await fs.statfs(root);
    const freeMb = Math.floor((st.bavail * st.bsize) / 1024 / 1024);
    item.version = `${freeMb} MB free`;
    if (freeMb < 200) {
      item.status = 'unusable';
      item.hint = `Only ${freeMb} MB free under ${root}: free space (an APK build needs a few hundred MB) or point DATA_DIR / S3_BUCKET elsewhere`;
    }
  } catch (e) {
    item.status = 'unusable';
    item.hint = `The storage directory is not writable (${(e as NodeJS.ErrnoException).code ?? 'error'}): fix its permissions or set DATA_DIR / S3_BUCKET`;
  }
  return item;
}

/**
 * The toolchain builds use: `real` and `stub` as configured; `auto` picks real when Java, keytool
 * and the SDK are ready, else the stub under `npm start`, else real (not ready).
 */
export function resolveToolchain(mode: ToolchainOptions['mode'], items: HealthItem[], devLauncher = false) {
  if (mode !== 'auto') return mode;
  const ok = (n: HealthItem['name']) => items.find((i) => i.name === n)?.status === 'ok';
  if (ok('java') && ok('keytool') && ok('android_sdk')) return 'real' as const;
  return devLauncher ? ('stub' as const) : ('real' as const);
}

let cache: { key: string; at: number; value: Promise<ApkHealth> } | null = null;

/**
 * Probes node, npm, java, keytool, the Android SDK and the storage (cached for HEALTH_CACHE_MS).
 * Never throws: a failing probe is an item with status missing or unusable and a hint.
 * @param now ms clock for the cache (tests pass their own)
 */
export function checkHealth(opts: ToolchainOptions, now = Date.now()): Promise<ApkHealth> {
  const key = JSON.stringify(opts);
  if (cache && cache.key === key && now - cache.at < HEALTH_CACHE_MS) return cache.value;
  const value = probe(opts);
  cache = { key, at: now, value };
  return value;
}

/** Forgets the cached health (tests that change the environment). */
export function clearHealthCache(): void {
  cache = null;
}

async function probe(opts: ToolchainOptions): Promise<ApkHealth> {
  const npmPath = await which('npm', opts.pathVar ?? searchPath());
  const [npmOut, java, sdk, storage] = await Promise.all([
    npmPath ? run(npmPath, ['--version']) : Promise.resolve(null),
    probeJava(opts),
    probeSdk(opts),
    probeStorage(opts.storageRoot),
  ]);
  const keytool = await probeKeytool(opts, java);
  const items: HealthItem[] = [
    { name: 'node', status: 'ok', version: process.versions.node, path: process.execPath, hint: null },
    {
      name: 'npm',
      status: npmOut ? 'ok' : 'missing',
      version: npmOut?.trim() || null,
      path: npmPath,
      hint: npmOut ? null : 'npm comes with Node.js: install Node 20 with npm (the web/ step runs npm run build)',
    },
    java,
    keytool,
    sdk,
    storage,
  ];
  const toolchain = resolveToolchain(opts.mode, items, opts.devLauncher);
  const needed: HealthItem['name'][] =
    toolchain === 'real' ? ['node', 'npm', 'java', 'keytool', 'android_sdk', 'storage'] : ['node', 'npm', 'storage'];
  const ready = needed.every((n) => items.find((i) => i.name === n)?.status === 'ok');
  return { ready, toolchain, mode: opts.mode, items };
}
