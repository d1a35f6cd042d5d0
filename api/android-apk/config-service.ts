import type { TenantScope } from '../../db/tenant-scope.js';
import { ApkAppConfig, ApkBuild } from '../../db/models/index.js';
import { recordAudit } from '../audit-logs/service.js';
import { ValidationFailed, type FieldErrors } from '../errors.js';
import { iso } from '../shared/schemas.js';
import { APK_APP_TYPES, type ApkAppType } from '../../jobs/apk/signing.js';
import { applicationId, effectiveApiUrl, startUrl } from '../../jobs/apk/values.js';

/**
 * The build configurations (issue 12 item 2; document 2 "Mobile app build configuration"): one per
 * tenant and app type, saved whole by PUT (every spec field required).
 */

/** PUT /api/android-apk/configs/{appType}'s body after schema validation. */
export interface ConfigInput {
  app_name: string;
  package_id: string;
  version_name: string;
  version_code: number;
  base_url: string;
  api_url?: string | null;
  environment: 'sandbox' | 'production';
  theme_color: string;
  orientation: 'portrait' | 'landscape' | 'default';
  signing_mode: 'debug' | 'release';
  enabled?: boolean;
}

/** Who acts, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

/** Java's reserved words and literals: none may be a segment of an application id (it names a Java package). */
export const JAVA_KEYWORDS: ReadonlySet<string> = new Set(
  (
    'abstract assert boolean break byte case catch char class const continue default do double else enum ' +
    'extends final finally float for goto if implements import instanceof int interface long native new ' +
    'package private protected public return short static strictfp super switch synchronized this throw ' +
    'throws transient try void volatile while true false null _'
  ).split(' '),
);

/** A saved configuration as the API shows it (schemas.ts configShape). */
export function configShapeOf(c: ApkAppConfig) {
  return {
    app_type: c.app_type as ApkAppType,
    app_name: c.app_name,
    package_id: c.package_id,
    application_id: applicationId(c),
    version_name: c.version_name,
    version_code: c.version_code,
    base_url: c.base_url,
    api_url: c.api_url,
    effective_api_url: effectiveApiUrl(c),
    start_url: startUrl(c.app_type as ApkAppType, c.base_url),
    environment: c.environment,
    theme_color: c.theme_color,
    orientation: c.orientation,
    signing_mode: c.signing_mode,
    enabled: c.enabled,
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}

/** The configurations of every app type (null where none is saved), in APK_APP_TYPES order. */
export async function configsByType(
  scope: TenantScope,
): Promise<Record<ApkAppType, ReturnType<typeof configShapeOf> | null>> {
  const rows = await scope.query(ApkAppConfig);
  const out = Object.fromEntries(APK_APP_TYPES.map((t) => [t, null])) as Record<
    ApkAppType,
    ReturnType<typeof configShapeOf> | null
  >;
  for (const r of rows) out[r.app_type as ApkAppType] = configShapeOf(r);
  return out;
}

/** Highest version_code of a successful build of the app type (0 when none). */
export async function highestSuccessfulVersion(
  scope: TenantScope,
  appType: ApkAppType,
  buildType?: 'debug' | 'release',
): Promise<number> {
  const q = scope.query(ApkBuild).where({ app_type: appType, status: 'successful' });
  if (buildType) q.where({ build_type: buildType });
  // max() of an Objection query resolves to the plain aggregate row, not a model
  const row = (await q.max('version_code as v').first()) as unknown as { v: number | null } | undefined;
  return Number(row?.v ?? 0);
}

/** Rules the schema cannot express; collects every failing field. */
function crossFieldErrors(input: ConfigInput, minVersion: number): FieldErrors {
  const errors: FieldErrors = {};
  const bad = input.package_id.split('.').filter((s) => JAVA_KEYWORDS.has(s));
  if (bad.length) errors.package_id = [`A segment of the package id is a Java keyword: ${bad.join(', ')}.`];
  if (input.environment === 'production') {
    for (const f of ['base_url', 'api_url'] as const) {
      const v = input[f];
      if (v && !/^https:/i.test(v)) errors[f] = ['Must be an https URL in the production environment.'];
    }
  }
  if (input.version_code < minVersion)
    errors.version_code = [`Must be at least ${minVersion}, the version code of a successful build.`];
  return errors;
}

/**
 * Saves (creates or replaces) the app type's configuration, with an audit entry.
 * @returns the saved configuration's read shape
 * @throws ValidationFailed (422) naming each field: a Java keyword in package_id, http URLs in
 *   production, version_code below a successful build's
 */
export async function saveConfig(scope: TenantScope, actor: Actor, appType: ApkAppType, input: ConfigInput) {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const current = await s.query(ApkAppConfig).where({ app_type: appType }).forUpdate().first();
    const errors = crossFieldErrors(input, await highestSuccessfulVersion(s, appType));
    if (Object.keys(errors).length) throw new ValidationFailed(errors);
    const values = {
      app_name: input.app_name,
      package_id: input.package_id,
      version_name: input.version_name,
      version_code: input.version_code,
      base_url: input.base_url,
      api_url: input.api_url ?? null,
      environment: input.environment,
      theme_color: input.theme_color.toUpperCase(),
      orientation: input.orientation,
      signing_mode: input.signing_mode,
      enabled: input.enabled ?? true,
    };
    let row: ApkAppConfig;
    if (current) {
      row = await s
        .query(ApkAppConfig)
        .patchAndFetchById(current.id, { ...values, updated_at: new Date() } as Partial<ApkAppConfig>);
    } else {
      row = await s.create(ApkAppConfig, { app_type: appType, ...values });
    }
    await recordAudit(s, {
      userId: actor.userId,
      action: 'app_builder.config_saved',
      subject: { type: 'apk_app_configs', id: row.id },
      before: current ? summary(current) : null,
      after: summary(row),
      ip: actor.ip,
    });
    return configShapeOf(row);
  });
}

function summary(c: ApkAppConfig) {
  return {
    app_type: c.app_type,
    package_id: c.package_id,
    version_name: c.version_name,
    version_code: c.version_code,
    environment: c.environment,
    signing_mode: c.signing_mode,
    enabled: c.enabled,
  };
}
