import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ApkConfig } from '../../lib/config.js';
import type { ToolchainOptions } from './toolchain.js';

/** The checkout's root (templates/ lives there). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** templates/android-app: the Android project every build copies. */
export const TEMPLATE_DIR = path.join(ROOT, 'templates', 'android-app');
/** templates/android-stub: the stub toolchain's gradlew (and its node program). */
export const STUB_DIR = path.join(ROOT, 'templates', 'android-stub');

/** Settings of the apk-build processor (JobDeps.apkBuild); every field has a default. */
export interface ApkBuildOptions {
  /** What health looks at and which toolchain builds use (APK_TOOLCHAIN, ANDROID_HOME, JAVA_HOME). */
  toolchain: ToolchainOptions;
  /** Time limit of one build, in ms (APK_BUILD_TIMEOUT_MS, default 20 min). */
  timeoutMs?: number;
  /** SIGTERM -> SIGKILL delay of a stopped build's process group, in ms (default 10000). */
  forceKillAfterMs?: number;
  /** How often a running build reads cancel_requested_at, in ms (default 2000). */
  cancelPollMs?: number;
  /** Default TEMPLATE_DIR. */
  templateDir?: string;
  /** Default STUB_DIR. */
  stubDir?: string;
  /** Where work directories are made (default the OS temp directory). */
  workRoot?: string;
  /** Extra environment of the stub (APK_STUB_* switches; tests). */
  stubEnv?: Record<string, string>;
  /** Largest APK stored, in bytes (default 200 MB). */
  maxApkBytes?: number;
}

/** Defaults applied to ApkBuildOptions. */
export const APK_BUILD_DEFAULTS = {
  timeoutMs: 20 * 60_000,
  forceKillAfterMs: 10_000,
  cancelPollMs: 2_000,
  maxApkBytes: 200 * 1024 * 1024,
} as const;

/**
 * ApkBuildOptions from the process configuration (lib/config.ts ApkConfig).
 * @param apk config.apk
 * @param storageRoot the local storage root (health checks it), undefined for S3
 */
export function apkBuildOptionsFrom(apk: ApkConfig, storageRoot?: string): ApkBuildOptions {
  return {
    toolchain: {
      mode: apk.toolchain,
      androidHome: apk.androidHome,
      javaHome: apk.javaHome,
      devLauncher: apk.devLauncher,
      storageRoot,
    },
    timeoutMs: apk.timeoutMs,
    forceKillAfterMs: apk.forceKillAfterMs,
    stubEnv: apk.stubEnv,
  };
}

/** The work root: option or the OS temp directory. */
export function workRootOf(o: ApkBuildOptions): string {
  return o.workRoot ?? os.tmpdir();
}
