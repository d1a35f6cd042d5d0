import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { bodyAjv, validate } from '../http/validation.js';
import type { AppContext } from '../context.js';
import type { ApkAppType } from '../../jobs/apk/signing.js';
import { readSmallForm } from './form.js';
import {
  appTypeParams,
  dataOf,
  KEYSTORE_MAX_BYTES,
  KEYSTORE_PASSWORD_MAX,
  keystoreGenerateBody,
  keystoreGenerated,
  keystoreRead,
  keystoreUpload,
  keystoreUploadFields,
} from './schemas.js';
import {
  deleteKeystore,
  generateReleaseKeystore,
  getKeystore,
  uploadKeystore,
  type KeystoreActor,
  type KeystoreDeps,
  type KeystoreGenerateInput,
  type KeystoreUploadInput,
} from './service.js';

/**
 * Guards of every keystore route (issue 12 items 1, 8): an admin login with app_builder.manage, the
 * app_builder module on (403 module_disabled), a login without a tenant 422 `errors.tenant`.
 */
const base = {
  tag: 'app-builder',
  auth: 'login',
  tenant: 'validation',
  module: 'app_builder',
  permission: 'app_builder.manage',
} as const;

const PATH = '/api/android-apk/configs/:appType/keystore';
type P = { appType: ApkAppType };

const actorOf = (ctx: AppContext): KeystoreActor => ({ userId: ctx.state.auth!.userId, ip: ctx.ip });
const depsOf = (ctx: AppContext): KeystoreDeps => ({ appKey: ctx.deps.config.appKey });

const notFound = { 404: { description: 'No release keystore is stored for this app type of the tenant' } };
const conflict = {
  409: { description: 'CONFLICT: a keystore is stored for this app type and replace is not true; nothing changed' },
};
const unavailable = {
  503: { description: 'KEYTOOL_UNAVAILABLE: keytool could not run (Retry-After); nothing stored' },
};
const invalid = (what?: string) => ({
  422: {
    description: `VALIDATION_FAILED: ${what ? `${what}; ` : ''}\`tenant\` for a login without a tenant; \`appType\` not one of portal, netadmin, partner, absensi`,
  },
});

/**
 * Release keystores of the Android app builder (issue 12 item 8): upload, generate, read (metadata
 * only) and delete, per app type. Writes are refused on demo tenants (403 demo_guard_blocked):
 * release builds are blocked there, and a visitor's real signing key never belongs on a shared tenant.
 */
export const androidApkKeystoreRoutes: AnyWebRoute[] = [
  webRoute<P>({
    ...base,
    method: 'get',
    path: PATH,
    params: appTypeParams,
    summary: "Show the app type's release keystore: metadata only (alias, fingerprint, validity, type)",
    responses: { 200: { description: 'The keystore', schema: dataOf(keystoreRead) }, ...notFound, ...invalid() },
    async handler(ctx) {
      ctx.body = { data: await getKeystore(ctx.state.scope!, ctx.state.params.appType) };
    },
  }),
  webRoute<P>({
    ...base,
    method: 'post',
    path: PATH,
    params: appTypeParams,
    demoAction: 'app_builder.keystore.upload',
    upload: keystoreUpload,
    summary: 'Upload a JKS or PKCS12 keystore (multipart: file ≤ 1 MB, store_password, key_alias, key_password)',
    description:
      'keytool checks that store_password opens the file, key_alias names a private key and key_password (default store_password; PKCS12: must equal it) recovers it. Passwords are stored encrypted and never returned. Replacing a stored keystore needs replace=true.',
    responses: {
      201: { description: 'The stored keystore (metadata)', schema: dataOf(keystoreRead) },
      ...conflict,
      413: { description: 'PAYLOAD_TOO_LARGE: the file is larger than 1 MB; nothing stored' },
      ...invalid('no file, not a JKS or PKCS12 keystore, or a password or alias that does not open it (named field)'),
      ...unavailable,
    },
    async handler(ctx) {
      const form = await readSmallForm(ctx, {
        fileField: 'file',
        fields: ['store_password', 'key_alias', 'key_password', 'replace'],
        maxFileBytes: KEYSTORE_MAX_BYTES,
        maxFieldBytes: KEYSTORE_PASSWORD_MAX * 4,
      });
      const fields = validate<Omit<KeystoreUploadInput, 'file'>>(bodyAjv, keystoreUploadFields, form.fields);
      const data = await uploadKeystore(ctx.state.scope!, depsOf(ctx), actorOf(ctx), ctx.state.params.appType, {
        ...fields,
        file: form.file,
      });
      ctx.status = 201;
      ctx.body = { data };
    },
  }),
  webRoute<P, Input, KeystoreGenerateInput>({
    ...base,
    method: 'post',
    path: `${PATH}/generate`,
    params: appTypeParams,
    body: keystoreGenerateBody,
    demoAction: 'app_builder.keystore.generate',
    summary: 'Generate a PKCS12 release keystore (RSA 2048); its random passwords are shown in this answer only',
    responses: {
      201: {
        description: 'The new keystore with its passwords (shown once)',
        schema: dataOf(keystoreGenerated),
      },
      ...conflict,
      ...invalid('a field out of bounds'),
      ...unavailable,
    },
    async handler(ctx) {
      const data = await generateReleaseKeystore(
        ctx.state.scope!,
        depsOf(ctx),
        actorOf(ctx),
        ctx.state.params.appType,
        ctx.state.body,
      );
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 201;
      ctx.body = { data };
    },
  }),
  webRoute<P>({
    ...base,
    method: 'delete',
    path: PATH,
    params: appTypeParams,
    demoAction: 'app_builder.keystore.delete',
    summary: "Delete the app type's release keystore (release builds then need a new one)",
    responses: {
      200: { description: 'The deleted keystore (metadata)', schema: dataOf(keystoreRead) },
      ...notFound,
      ...invalid(),
    },
    async handler(ctx) {
      ctx.body = { data: await deleteKeystore(ctx.state.scope!, actorOf(ctx), ctx.state.params.appType) };
    },
  }),
];
