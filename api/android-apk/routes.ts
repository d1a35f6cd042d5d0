import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import type { AppContext } from '../context.js';
import { idParams } from '../shared/schemas.js';
import { assertDemoAllowed } from '../middleware/demo-guard.js';
import { contentDisposition } from '../../lib/storage/index.js';
import { QUEUE as APK_BUILD } from '../../jobs/apk-build.js';
import type { ApkAppType, ApkBuildType, ApkSigningSource } from '../../jobs/apk/signing.js';
import { checkHealth, type ToolchainOptions } from '../../jobs/apk/toolchain.js';
import {
  appTypeParams,
  buildBody,
  buildList,
  buildListQuery,
  buildOne,
  configBody,
  configOne,
  healthOne,
  overviewShape,
} from './schemas.js';
import { configsByType, saveConfig, type ConfigInput } from './config-service.js';
import {
  buildById,
  buildShapeOf,
  cancelBuild,
  listBuilds,
  openApk,
  openLog,
  recentBuilds,
  startBuild,
  type BuildListQuery,
} from './build-service.js';

/**
 * The app builder (issue 12; document 2 "Mobile app builder"): admin login, permission
 * app_builder.manage, module app_builder (403 module_disabled), a login without a tenant 422
 * `errors.tenant` on every route.
 */
const base = {
  tag: 'app-builder',
  auth: 'login',
  tenant: 'validation',
  permission: 'app_builder.manage',
  module: 'app_builder',
} as const;
const notFound = { 404: { description: 'Not a build of the tenant' } };

/** What the routes take from AppDeps.config.apk (server.ts sets it; tests pass their own). */
export interface ApkApiOptions {
  toolchain: ToolchainOptions;
  signing: ApkSigningSource;
}

/** Without a configuration: stub toolchain, no release keystores. */
const FALLBACK: ApkApiOptions = {
  toolchain: { mode: 'stub' },
  signing: {
    hasReleaseKeystore: async () => false,
    writeKeystore: async () => {
      throw new Error('no keystore source');
    },
  },
};

const apkOf = (ctx: AppContext): ApkApiOptions => ctx.deps.config.apk ?? FALLBACK;
const actorOf = (ctx: AppContext) => ({ userId: ctx.state.auth!.userId, ip: ctx.ip });

/** The app builder's routes. */
export const androidApkRoutes: AnyWebRoute[] = [
  webRoute({
    ...base,
    method: 'get',
    path: '/api/android-apk',
    summary: 'Configurations of the four app types, the last 20 builds and the builder health',
    responses: { 200: { description: 'Overview', schema: overviewShape } },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const [configs, builds, health] = await Promise.all([
        configsByType(scope),
        recentBuilds(scope),
        checkHealth(apkOf(ctx).toolchain),
      ]);
      ctx.body = { data: { configs, builds, health } };
    },
  }),
  webRoute({
    ...base,
    method: 'get',
    path: '/api/android-apk/health',
    summary: 'Readiness of node, npm, java (JDK 17+), keytool, the Android SDK and the storage, with install hints',
    responses: { 200: { description: 'Health', schema: healthOne } },
    async handler(ctx) {
      ctx.body = { data: await checkHealth(apkOf(ctx).toolchain) };
    },
  }),
  webRoute<{ appType: ApkAppType }, Input, ConfigInput>({
    ...base,
    method: 'put',
    path: '/api/android-apk/configs/:appType',
    params: appTypeParams,
    body: configBody,
    summary:
      'Save the build configuration of an app type (portal, netadmin, partner, absensi); 422 for a bad field or a version code below a successful build',
    responses: { 200: { description: 'The saved configuration', schema: configOne } },
    async handler(ctx) {
      ctx.body = {
        data: await saveConfig(ctx.state.scope!, actorOf(ctx), ctx.state.params.appType, ctx.state.body),
      };
    },
  }),
  webRoute<{ appType: ApkAppType }, Input, { build_type: ApkBuildType }>({
    ...base,
    method: 'post',
    path: '/api/android-apk/configs/:appType/builds',
    params: appTypeParams,
    body: buildBody,
    summary:
      'Start a debug or release build (202 queued). 422 INVALID_TRANSITION naming build, enabled, keystore, signing_mode or version_code; release on a demo tenant 403',
    responses: {
      202: { description: 'The queued build', schema: buildOne },
      403: {
        description:
          'FORBIDDEN / module_disabled as for every route; `demo_guard_blocked` for a release build on a demo tenant (app_builder.release_build).',
      },
      503: { description: 'QUEUE_UNAVAILABLE: the job queue (Redis) is down; nothing was saved' },
    },
    async handler(ctx) {
      const { appType } = ctx.state.params;
      const buildType = ctx.state.body.build_type;
      if (buildType === 'release') assertDemoAllowed(ctx.state.tenant, 'app_builder.release_build');
      const apk = apkOf(ctx);
      const health = await checkHealth(apk.toolchain);
      ctx.status = 202;
      ctx.body = {
        data: await startBuild(
          ctx.state.scope!,
          {
            queue: ctx.deps.queues.get(APK_BUILD),
            signing: apk.signing,
            toolchain: health.toolchain,
            actor: actorOf(ctx),
          },
          appType,
          buildType,
        ),
      };
    },
  }),
  webRoute<Input, BuildListQuery>({
    ...base,
    method: 'get',
    path: '/api/android-apk/builds',
    query: buildListQuery,
    summary: 'Builds of the tenant, newest first; filters app_type and status',
    responses: { 200: { description: 'Page of builds', schema: buildList } },
    async handler(ctx) {
      ctx.body = await listBuilds(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/android-apk/builds/:id',
    params: idParams,
    summary: 'A build: status, progress, error, last log lines, file name, size and SHA-256',
    responses: { 200: { description: 'The build', schema: buildOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: buildShapeOf(await buildById(ctx.state.scope!, ctx.state.params.id)) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/android-apk/builds/:id/log',
    params: idParams,
    summary: 'The build log as text (redacted): the stored log once finished, else the lines so far',
    responses: {
      200: { description: 'The log', media: { 'text/plain': { type: 'string' } } },
      ...notFound,
    },
    async handler(ctx) {
      const log = await openLog(ctx.state.scope!, ctx.deps.storage, ctx.state.params.id);
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = log;
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'post',
    path: '/api/android-apk/builds/:id/cancel',
    params: idParams,
    summary: 'Cancel a build: queued -> cancelled (200); running -> cancel requested, stops within seconds (202)',
    responses: {
      200: { description: 'The cancelled build', schema: buildOne },
      202: { description: 'Cancel requested; the build stops shortly', schema: buildOne },
      ...notFound,
    },
    async handler(ctx) {
      const r = await cancelBuild(ctx.state.scope!, ctx.deps.queues.get(APK_BUILD), actorOf(ctx), ctx.state.params.id);
      ctx.status = r.status;
      ctx.body = { data: r.data };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/android-apk/builds/:id/download',
    params: idParams,
    summary:
      'Download the APK of a successful build (streamed, attachment {slug}-{appType}-{version_name}-{build_type}.apk)',
    responses: {
      200: {
        description: 'The APK',
        media: {
          'application/vnd.android.package-archive': {
            type: 'string',
            contentMediaType: 'application/vnd.android.package-archive',
          },
        },
      },
      404: { description: 'Not a successful build of the tenant, or its file was removed by retention' },
    },
    async handler(ctx) {
      if (!ctx.deps.storage) throw new Error('no storage driver configured');
      const { build, file } = await openApk(ctx.state.scope!, ctx.deps.storage, ctx.state.params.id);
      ctx.type = 'application/vnd.android.package-archive';
      ctx.length = file.size;
      ctx.set('Content-Disposition', contentDisposition(build.file_name ?? `build-${build.id}.apk`));
      if (build.sha256) ctx.set('X-Checksum-SHA256', build.sha256);
      ctx.body = file.stream;
    },
  }),
];
