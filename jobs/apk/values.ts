import fs from 'node:fs/promises';
import path from 'node:path';
import type { ApkAppType, ApkBuildType } from './signing.js';
import { androidResourceFile, propertiesFile } from './escape.js';

/**
 * What a build configuration becomes inside the template (issue 12 items 2, 4): the derived values
 * (application id, start URL, API URL) and the three files written through the escapers.
 */

/** The configuration fields a build uses (the snapshot kept in apk_builds.config). */
export interface BuildConfig {
  app_type: ApkAppType;
  app_name: string;
  package_id: string;
  version_name: string;
  version_code: number;
  base_url: string;
  api_url: string | null;
  environment: 'sandbox' | 'production';
  theme_color: string;
  orientation: 'portrait' | 'landscape' | 'default';
  signing_mode: 'debug' | 'release';
}

const trim = (u: string) => u.replace(/\/+$/, '');

/** The URL the app opens: `{base_url}/`, for absensi `{base_url}/absensi/` (document 2). */
export function startUrl(appType: ApkAppType, baseUrl: string): string {
  return appType === 'absensi' ? `${trim(baseUrl)}/absensi/` : `${trim(baseUrl)}/`;
}

/** api_url, or `{base_url}/api` when it is null (issue 12 item 2). */
export function effectiveApiUrl(c: { api_url: string | null; base_url: string }): string {
  return c.api_url ?? `${trim(c.base_url)}/api`;
}

/** The Android applicationId: package_id, plus `.sandbox` in the sandbox environment. */
export function applicationId(c: { package_id: string; environment: string }): string {
  return c.environment === 'sandbox' ? `${c.package_id}.sandbox` : c.package_id;
}

/** Android's android:screenOrientation value of an orientation setting. */
export function screenOrientation(o: BuildConfig['orientation']): string {
  return o === 'default' ? 'unspecified' : o;
}

/**
 * The download's file name: `{slug}-{appType}-{version_name}-{build_type}.apk`, `-stub` before the
 * extension for stub builds; characters outside `[A-Za-z0-9._-]` become `_`.
 */
export function apkFileName(
  slug: string,
  appType: ApkAppType,
  versionName: string,
  buildType: ApkBuildType,
  toolchain: 'real' | 'stub',
): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');
  return `${safe(slug)}-${appType}-${safe(versionName)}-${buildType}${toolchain === 'stub' ? '-stub' : ''}.apk`;
}

/** The JSON the web step turns into `assets/app-config.json` (web/config.json). */
export function webConfig(c: BuildConfig) {
  return {
    app_type: c.app_type,
    app_name: c.app_name,
    application_id: applicationId(c),
    version_name: c.version_name,
    version_code: c.version_code,
    environment: c.environment,
    start_url: startUrl(c.app_type, c.base_url),
    base_url: c.base_url,
    api_url: effectiveApiUrl(c),
    theme_color: c.theme_color,
  };
}

/**
 * Writes the configuration into a copy of templates/android-app:
 * - `apk.properties` (Properties-escaped): application id, version, orientation;
 * - `app/src/main/res/values/config.xml` (XML + Android escaping): app name, URLs, colour;
 * - `web/config.json` (JSON).
 * @param dir the work directory (the template's copy)
 */
export async function writeTemplateValues(dir: string, c: BuildConfig): Promise<void> {
  await fs.writeFile(
    path.join(dir, 'apk.properties'),
    propertiesFile({
      application_id: applicationId(c),
      version_code: c.version_code,
      version_name: c.version_name,
      screen_orientation: screenOrientation(c.orientation),
      app_name: c.app_name,
    }),
  );
  const values = path.join(dir, 'app', 'src', 'main', 'res', 'values');
  await fs.mkdir(values, { recursive: true });
  await fs.writeFile(
    path.join(values, 'config.xml'),
    androidResourceFile(
      { app_name: c.app_name, start_url: startUrl(c.app_type, c.base_url), api_url: effectiveApiUrl(c) },
      { theme_color: c.theme_color },
    ),
  );
  await fs.writeFile(path.join(dir, 'web', 'config.json'), JSON.stringify(webConfig(c), null, 2) + '\n');
}
