import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ApkKeystore } from '../../db/models/index.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { sealKeystore } from '../../db/apk-keystore-secrets.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import {
  generateKeystore,
  inspectKeystore,
  KeystoreRejected,
  KeytoolFailed,
  keystoreTypeOf,
  type KeystoreInfo,
  type KeytoolOptions,
} from '../../jobs/adapters/keytool.js';
import {
  randomPassword,
  releaseKeystore,
  validityDays,
  withPrivateDir,
  writePrivateFile,
} from '../../jobs/apk/keystores.js';
import type { ApkAppType } from '../../jobs/apk/signing.js';
import { recordAudit } from '../audit-logs/service.js';
import { AppError, Conflict, NotFound, ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';

/**
 * Release keystores of the Android app builder (issue 12 item 8): one per tenant and app type,
 * uploaded (JKS or PKCS12, checked with keytool) or generated (PKCS12, random passwords shown once),
 * sealed under APP_KEY (db/apk-keystore-secrets.ts), shown as metadata only, deleted on request.
 * Every write is audited in its transaction (`app_builder.keystore_*`), with the fingerprint and
 * never a password. A stored keystore is replaced only with `replace: true` (else 409 CONFLICT).
 */

/** What the keystore writes need from the process. */
export interface KeystoreDeps {
  /** APP_KEY (32 bytes); without it nothing can be stored */
  appKey: Buffer | undefined;
  keytool?: KeytoolOptions;
  /** notBefore of generated certificates (default systemClock) */
  clock?: Clock;
}

/** Who acts (audit). */
export interface KeystoreActor {
  userId: number | null;
  ip: string | null;
}

/** The upload form after validation. */
export interface KeystoreUploadInput {
  file: Buffer | null;
  store_password: string;
  key_alias: string;
  key_password?: string;
  replace?: 'true' | 'false';
}

/** Body of generate after validation (defaults applied). */
export interface KeystoreGenerateInput {
  key_alias: string;
  common_name: string;
  organization: string;
  country: string;
  validity_years: number;
  replace: boolean;
}

/** The read shape (schemas.ts keystoreRead). */
export function keystoreShape(r: ApkKeystore) {
  return {
    app_type: r.app_type as ApkAppType,
    type: r.store_type,
    alias: r.key_alias,
    sha256_fingerprint: r.sha256_fingerprint,
    valid_until: iso(r.valid_until),
    source: r.source,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** The audit summary of a keystore (no secret). */
const summary = (r: ApkKeystore | undefined) =>
  r
    ? {
        app_type: r.app_type,
        alias: r.key_alias,
        type: r.store_type,
        sha256_fingerprint: r.sha256_fingerprint,
        valid_until: iso(r.valid_until),
      }
    : null;

const taken = (appType: ApkAppType) =>
  new Conflict(`A release keystore is already stored for ${appType}; send replace=true to replace it.`);

function needKey(deps: KeystoreDeps): Buffer {
  if (!deps.appKey) throw new Error('APP_KEY is not configured: keystores cannot be stored');
  return deps.appKey;
}

/** keytool's refusals as 422 on the field; keytool itself failing as 503. */
function mapped(e: unknown): unknown {
  if (e instanceof KeystoreRejected) return new ValidationFailed({ [e.field]: [e.message] });
  if (e instanceof KeytoolFailed)
    return new AppError(503, 'KEYTOOL_UNAVAILABLE', 'The key tool is unavailable right now. Retry later.', {
      headers: { 'Retry-After': '30' },
      cause: e,
    });
  return e;
}

/**
 * GET .../keystore: the metadata of the app type's keystore.
 * @throws NotFound when none is stored for the tenant
 */
export async function getKeystore(scope: TenantScope, appType: ApkAppType) {
  const row = await releaseKeystore(scope, appType);
  if (!row) throw new NotFound('Keystore');
  return keystoreShape(row);
}

/**
 * Stores the checked keystore in one transaction: the old one (replace) goes, the new one is
 * inserted, the audit row written. A concurrent store without replace ends in the unique index (409).
 */
async function store(
  scope: TenantScope,
  appKey: Buffer,
  actor: KeystoreActor,
  appType: ApkAppType,
  replace: boolean,
  kept: { info: KeystoreInfo; bytes: Buffer; storePassword: string; keyPassword: string },
  source: 'uploaded' | 'generated',
): Promise<ApkKeystore> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const old = await releaseKeystore(s, appType).forUpdate();
    if (old && !replace) throw taken(appType);
    if (old) await s.query(ApkKeystore).where({ id: old.id }).delete();
    const row = await s.create(ApkKeystore, {
      kind: 'release',
      app_type: appType,
      store_type: kept.info.storeType,
      key_alias: kept.info.alias,
      sha256_fingerprint: kept.info.sha256Fingerprint,
      valid_until: kept.info.validUntil,
      source,
      secret_enc: sealKeystore(appKey, scope.tenantId, appType, {
        keystore: kept.bytes,
        storePassword: kept.storePassword,
        keyPassword: kept.keyPassword,
      }),
      created_by: actor.userId,
    });
    await recordAudit(s, {
      userId: actor.userId,
      action: `app_builder.keystore_${source}`,
      subject: { type: 'apk_keystores', id: row.id },
      before: summary(old),
      after: summary(row),
      ip: actor.ip,
    });
    return row;
  });
}

/**
 * POST .../keystore: checks the uploaded keystore with keytool (store password, alias, key
 * password; see jobs/adapters/keytool.ts inspectKeystore) and stores it sealed.
 * @returns the read shape
 * @throws ValidationFailed (no file, not JKS/PKCS12, a password or alias that does not open it);
 *   Conflict when one is stored and replace is not `true`; AppError 503 when keytool cannot run
 */
export async function uploadKeystore(
  scope: TenantScope,
  deps: KeystoreDeps,
  actor: KeystoreActor,
  appType: ApkAppType,
  input: KeystoreUploadInput,
) {
  const appKey = needKey(deps);
  if (!input.file || input.file.length === 0) throw new ValidationFailed({ file: ['The file field is required.'] });
  const type = keystoreTypeOf(input.file);
  if (!type) throw new ValidationFailed({ file: ['The file is not a JKS or PKCS12 keystore.'] });
  const replace = input.replace === 'true';
  if (!replace && (await releaseKeystore(scope, appType))) throw taken(appType);
  const keyPassword = input.key_password ?? input.store_password;
  const info = await withPrivateDir(async (dir) => {
    const file = path.join(dir, type === 'JKS' ? 'upload.jks' : 'upload.p12');
    await writePrivateFile(file, input.file!);
    return inspectKeystore(
      file,
      type,
      { storePassword: input.store_password, keyAlias: input.key_alias, keyPassword },
      deps.keytool,
    );
  }).catch((e: unknown) => {
    throw mapped(e);
  });
  const row = await store(
    scope,
    appKey,
    actor,
    appType,
    replace,
    { info, bytes: input.file, storePassword: input.store_password, keyPassword },
    'uploaded',
  );
  return keystoreShape(row);
}

/**
 * POST .../keystore/generate: a new PKCS12 keystore (RSA 2048, SHA256withRSA, CN/O/C from the body,
 * valid `validity_years` from now) with one random password for store and key, stored sealed.
 * @returns the read shape plus store_password and key_password (this answer only)
 * @throws Conflict when one is stored and replace is not true; AppError 503 when keytool cannot run
 */
export async function generateReleaseKeystore(
  scope: TenantScope,
  deps: KeystoreDeps,
  actor: KeystoreActor,
  appType: ApkAppType,
  input: KeystoreGenerateInput,
) {
  const appKey = needKey(deps);
  if (!input.replace && (await releaseKeystore(scope, appType))) throw taken(appType);
  const now = (deps.clock ?? systemClock).now();
  const password = randomPassword();
  const made = await withPrivateDir(async (dir) => {
    const file = path.join(dir, 'release.p12');
    const info = await generateKeystore(
      {
        file,
        alias: input.key_alias,
        password,
        dname: { commonName: input.common_name, organization: input.organization, country: input.country },
        start: now,
        validityDays: validityDays(now, input.validity_years),
      },
      deps.keytool,
    );
    return { info, bytes: await readFile(file) };
  }).catch((e: unknown) => {
    throw mapped(e);
  });
  const row = await store(
    scope,
    appKey,
    actor,
    appType,
    input.replace,
    { ...made, storePassword: password, keyPassword: password },
    'generated',
  );
  return { ...keystoreShape(row), store_password: password, key_password: password };
}

/**
 * DELETE .../keystore: removes the app type's keystore (release builds then answer 422 `keystore`).
 * @returns the metadata of the removed keystore
 * @throws NotFound when none is stored for the tenant
 */
export async function deleteKeystore(scope: TenantScope, actor: KeystoreActor, appType: ApkAppType) {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await releaseKeystore(s, appType).forUpdate();
    if (!row) throw new NotFound('Keystore');
    await s.query(ApkKeystore).where({ id: row.id }).delete();
    await recordAudit(s, {
      userId: actor.userId,
      action: 'app_builder.keystore_deleted',
      subject: { type: 'apk_keystores', id: row.id },
      before: summary(row),
      after: null,
      ip: actor.ip,
    });
    return keystoreShape(row);
  });
}
