import type { Queue } from 'bullmq';
import type { TenantScope } from '../../db/tenant-scope.js';
import { ApkAppConfig, ApkBuild } from '../../db/models/index.js';
import { recordAudit } from '../audit-logs/service.js';
import { AppError, InvalidTransition, NotFound, type FieldErrors } from '../errors.js';
import { envelope, iso } from '../shared/schemas.js';
import { enqueueBuild, removeQueuedJob } from '../../jobs/apk-build.js';
import type { ApkAppType, ApkBuildType, ApkSigningSource } from '../../jobs/apk/signing.js';
import type { BuildConfig } from '../../jobs/apk/values.js';
import type { Storage, GetResult } from '../../lib/storage/index.js';
import { highestSuccessfulVersion, type Actor } from './config-service.js';

/**
 * Builds (issue 12 items 5, 7; document 2 "Mobile app builder", "Mobile app build" state rows):
 * start (202 queued), list, show, log, cancel, download.
 */

/** 422 INVALID_TRANSITION whose `errors` name the conditions that refuse a build (build, enabled, keystore, ...). */
export class BuildRefused extends AppError {
  constructor(errors: FieldErrors) {
    super(422, 'INVALID_TRANSITION', Object.values(errors)[0]?.[0] ?? 'The build cannot start.', { errors });
  }
}

/** A build as the API shows it (schemas.ts buildShape). */
export function buildShapeOf(b: ApkBuild) {
  const downloadable = b.status === 'successful' && !!b.file_key && !b.file_deleted_at;
  return {
    id: b.id,
    app_type: b.app_type as ApkAppType,
    build_type: b.build_type,
    status: b.status,
    toolchain: b.toolchain,
    progress: b.progress,
    version_name: b.version_name,
    version_code: b.version_code,
    config: b.config,
    error: b.error,
    log_tail: b.log_tail,
    file_name: b.file_name,
    size_bytes: b.size_bytes === null ? null : Number(b.size_bytes),
    sha256: b.sha256,
    download_url: downloadable ? `/api/android-apk/builds/${b.id}/download` : null,
    cancel_requested_at: iso(b.cancel_requested_at),
    started_at: iso(b.started_at),
    finished_at: iso(b.finished_at),
    file_deleted_at: iso(b.file_deleted_at),
    created_at: iso(b.created_at),
    updated_at: iso(b.updated_at),
  };
}

/** The newest builds of the tenant (GET /api/android-apk: 20). */
export async function recentBuilds(scope: TenantScope, limit = 20) {
  const rows = await scope.query(ApkBuild).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
  return rows.map(buildShapeOf);
}

/** GET /api/android-apk/builds's query. */
export interface BuildListQuery {
  page: number;
  per_page: number;
  app_type?: ApkAppType;
  status?: string;
}

/** A page of builds, newest first (DESIGN §4 envelope). */
export async function listBuilds(scope: TenantScope, q: BuildListQuery) {
  const base = () => {
    const b = scope.query(ApkBuild);
    if (q.app_type) b.where({ app_type: q.app_type });
    if (q.status) b.where({ status: q.status });
    return b;
  };
  const total = await base().resultSize();
  const rows = await base()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset((q.page - 1) * q.per_page)
    .limit(q.per_page);
  return envelope(rows.map(buildShapeOf), q.page, q.per_page, total);
}

/** One build. @throws NotFound for another tenant's or no build */
export async function buildById(scope: TenantScope, id: number): Promise<ApkBuild> {
  const b = await scope.query(ApkBuild).findById(id);
  if (!b) throw new NotFound('Build');
  return b;
}

/** What startBuild needs besides the scope. */
export interface StartBuildContext {
  queue: Queue;
  signing: ApkSigningSource;
  /** The toolchain builds run with now (labelled on the row; the worker confirms it). */
  toolchain: 'real' | 'stub';
  actor: Actor;
}

/**
 * Starts a build of the app type: checks the conditions, writes the queued row and its audit entry,
 * enqueues `apk-build-{id}` after the commit (the row is removed again when Redis refuses the job).
 * @returns the queued build
 * @throws BuildRefused (422 INVALID_TRANSITION) naming each failed condition: `config` (none saved),
 *   `build` (a build of the tenant is queued or running), `enabled`, `signing_mode` (release needs
 *   release), `keystore` (release without a stored keystore), `version_code` (release needs a code
 *   above every successful release build's); QueueUnavailableError (503)
 */
export async function startBuild(
  scope: TenantScope,
  ctx: StartBuildContext,
  appType: ApkAppType,
  buildType: ApkBuildType,
) {
  const created = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const config = await s.query(ApkAppConfig).where({ app_type: appType }).forUpdate().first();
    if (!config) throw new BuildRefused({ config: [`No ${appType} configuration is saved: save it first.`] });
    const errors: FieldErrors = {};
    const active = await s.query(ApkBuild).whereIn('status', ['queued', 'running']).first();
    if (active)
      errors.build = [`Build ${active.id} (${active.app_type}) is ${active.status}: one build per tenant at a time.`];
    if (!config.enabled) errors.enabled = [`The ${appType} app is disabled.`];
    if (buildType === 'release') {
      if (config.signing_mode !== 'release')
        errors.signing_mode = ['A release build needs signing_mode release in the configuration.'];
      if (!(await ctx.signing.hasReleaseKeystore(scope.tenantId, appType)))
        errors.keystore = [`No release keystore is stored for ${appType}: upload or generate one first.`];
      const highest = await highestSuccessfulVersion(s, appType, 'release');
      if (config.version_code <= highest)
        errors.version_code = [`A release build needs a version code above ${highest}, the last successful release's.`];
    }
    if (Object.keys(errors).length) throw new BuildRefused(errors);
    const snapshot: BuildConfig = {
      app_type: appType,
      app_name: config.app_name,
      package_id: config.package_id,
      version_name: config.version_name,
      version_code: config.version_code,
      base_url: config.base_url,
      api_url: config.api_url,
      environment: config.environment,
      theme_color: config.theme_color,
      orientation: config.orientation,
      signing_mode: config.signing_mode,
    };
    let row: ApkBuild;
    try {
      row = await s.create(ApkBuild, {
        app_type: appType,
        build_type: buildType,
        status: 'queued',
        toolchain: ctx.toolchain,
        progress: 0,
        config: { ...snapshot },
        version_name: config.version_name,
        version_code: config.version_code,
        requested_by: ctx.actor.userId,
      });
    } catch (e) {
      if ((e as { nativeError?: { code?: string } }).nativeError?.code === '23505' || /unique/i.test(String(e)))
        throw new BuildRefused({ build: ['Another build of the tenant was started just now: one at a time.'] });
      throw e;
    }
    const auditId = await recordAudit(s, {
      userId: ctx.actor.userId,
      action: 'app_builder.build_started',
      subject: { type: 'apk_builds', id: row.id },
      after: { app_type: appType, build_type: buildType, version_code: config.version_code, toolchain: ctx.toolchain },
      ip: ctx.actor.ip,
    });
    return { row, auditId };
  });
  try {
    await enqueueBuild(ctx.queue, created.row);
  } catch (e) {
    await scope.knex.transaction(async (trx) => {
      await scope.withTransaction(trx).query(ApkBuild).deleteById(created.row.id);
      await scope.withTransaction(trx).table('audit_log').where({ id: created.auditId }).delete();
    });
    throw e;
  }
  return buildShapeOf(created.row);
}

/**
 * Cancels a build: queued -> cancelled at once (its job removed; 200), running -> cancel requested
 * (the processor stops Gradle within ~2 s; 202). Audited.
 * @returns the build and the HTTP status to answer
 * @throws NotFound; InvalidTransition (422) for a finished build
 */
export async function cancelBuild(scope: TenantScope, queue: Queue, actor: Actor, id: number) {
  const out = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const b = await s.query(ApkBuild).findById(id).forUpdate();
    if (!b) throw new NotFound('Build');
    if (b.status !== 'queued' && b.status !== 'running')
      throw new InvalidTransition(b.status, 'cancel', ['queued', 'running']);
    const now = new Date();
    const patch: Partial<ApkBuild> =
      b.status === 'queued'
        ? { status: 'cancelled', cancel_requested_at: now, finished_at: now, updated_at: now }
        : { cancel_requested_at: b.cancel_requested_at ?? now, updated_at: now };
    const row = await s.query(ApkBuild).patchAndFetchById(id, patch);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'app_builder.build_cancelled',
      subject: { type: 'apk_builds', id },
      before: { status: b.status },
      after: { status: row.status, cancel_requested: true },
      ip: actor.ip,
    });
    return { row, was: b.status };
  });
  if (out.was === 'queued') await removeQueuedJob(queue, id);
  return { status: out.was === 'queued' ? 200 : 202, data: buildShapeOf(out.row) };
}

/**
 * Opens a successful build's APK for download.
 * @throws NotFound unless the build is the tenant's, successful, and its file is kept
 */
export async function openApk(
  scope: TenantScope,
  storage: Storage,
  id: number,
): Promise<{ build: ApkBuild; file: GetResult }> {
  const b = await buildById(scope, id);
  if (b.status !== 'successful' || !b.file_key || b.file_deleted_at) throw new NotFound('APK');
  try {
    return { build: b, file: await storage.get(b.file_key) };
  } catch {
    throw new NotFound('APK');
  }
}

/**
 * The build's log: the stored log once it finished, else the current tail.
 * @returns a stream or a string
 * @throws NotFound for another tenant's or no build
 */
export async function openLog(scope: TenantScope, storage: Storage | undefined, id: number) {
  const b = await buildById(scope, id);
  if (b.log_key && storage) {
    try {
      return (await storage.get(b.log_key)).stream;
    } catch {
      /* fall back to the tail */
    }
  }
  return b.log_tail ? b.log_tail + '\n' : '';
}
