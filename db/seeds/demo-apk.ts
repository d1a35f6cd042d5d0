import type { Knex } from 'knex';
import { TenantScope } from '../tenant-scope.js';

/**
 * The app builder's demo data (issue 12): the portal app's build configuration (debug signing, so
 * `npm start` can build it with the stub toolchain at once) and one earlier build that failed, so
 * the builds list and its log tail have something to show. Runs in the demo seed and on every
 * `npm start` (bin/dev.ts, a no-op once the tenant has a configuration), so an existing .data gets it.
 */

/** The demo portal configuration (PUT /api/android-apk/configs/portal's body). */
export const DEMO_APK_PORTAL = {
  app_name: 'Demo ISP Portal',
  package_id: 'id.demoisp.portal',
  version_name: '1.0.0',
  version_code: 1,
  base_url: 'https://portal.demo-isp.test',
  api_url: null,
  environment: 'sandbox',
  theme_color: '#0D6EFD',
  orientation: 'portrait',
  signing_mode: 'debug',
} as const;

/**
 * Seeds the tenant's app builder unless it has a configuration already.
 * @param opts.now the moment the earlier build is relative to (one day before)
 * @returns seeded or exists
 */
export async function seedDemoApk(
  knex: Knex,
  tenantId: number,
  opts: { now: Date; appName?: string },
): Promise<'seeded' | 'exists'> {
  const scope = new TenantScope(knex, tenantId);
  if (await scope.table('apk_app_configs').first('id')) return 'exists';
  const config = { ...DEMO_APK_PORTAL, app_name: opts.appName ?? DEMO_APK_PORTAL.app_name };
  await scope.insert('apk_app_configs', { app_type: 'portal', ...config });
  const at = new Date(opts.now.getTime() - 24 * 3600_000);
  const tail = [
    '> Task :app:processDebugResources',
    '> Task :app:compileDebugJavaWithJavac FAILED',
    '',
    'FAILURE: Build failed with an exception.',
    "Execution failed for task ':app:compileDebugJavaWithJavac'.",
    '> stub failure requested by APK_STUB_FAIL_AT (demo data)',
  ].join('\n');
  await scope.insert('apk_builds', {
    app_type: 'portal',
    build_type: 'debug',
    status: 'failed',
    toolchain: 'stub',
    progress: 62,
    config: JSON.stringify({ app_type: 'portal', ...config }),
    version_name: config.version_name,
    version_code: config.version_code,
    error: 'Gradle failed with exit code 1; see the last lines of the log.',
    log_tail: tail,
    task_count: 13,
    runs: 1,
    started_at: at,
    finished_at: new Date(at.getTime() + 40_000),
    created_at: at,
    updated_at: new Date(at.getTime() + 40_000),
  });
  return 'seeded';
}
