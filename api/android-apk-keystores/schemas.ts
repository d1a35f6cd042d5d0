import { singleLine, type Schema } from '../http/validation.js';
import { APK_APP_TYPES } from '../../jobs/apk/signing.js';

/**
 * Schemas of the release keystore endpoints (issue 12 item 8), mounted under
 * /api/android-apk/configs/{appType}/keystore.
 */

/** Largest keystore file: 1 MB = 1,048,576 bytes (issue 12 item 8). */
export const KEYSTORE_MAX_BYTES = 1024 * 1024;
/** Longest password accepted, in characters. */
export const KEYSTORE_PASSWORD_MAX = 128;

/** Path of every keystore route: appType one of APK_APP_TYPES (else 422). */
export const appTypeParams: Schema = {
  type: 'object',
  required: ['appType'],
  additionalProperties: false,
  properties: {
    appType: { type: 'string', enum: [...APK_APP_TYPES], description: 'portal, netadmin, partner or absensi.' },
  },
};

const password = (description: string): Schema => ({
  type: 'string',
  minLength: 1,
  maxLength: KEYSTORE_PASSWORD_MAX,
  pattern: '^[^\\u0000]*$',
  description,
});
const alias: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  ...singleLine,
  description: 'The key entry of the keystore the builds sign with.',
};

/** The text fields of the upload form, after parsing (validated like a body). */
export const keystoreUploadFields: Schema = {
  type: 'object',
  required: ['store_password', 'key_alias'],
  additionalProperties: false,
  properties: {
    store_password: password('Opens the keystore. Write-only: stored encrypted, never returned.'),
    key_alias: alias,
    key_password: password(
      'Opens the key of key_alias (default: store_password). PKCS12: must equal store_password. Write-only.',
    ),
    replace: { type: 'string', enum: ['true', 'false'], description: '`true` replaces a stored keystore (else 409).' },
  },
};

/** The multipart body of POST .../keystore as /openapi.json documents it. */
export const keystoreUpload: Schema = {
  ...keystoreUploadFields,
  required: ['file', 'store_password', 'key_alias'],
  properties: {
    file: {
      type: 'string',
      contentMediaType: 'application/octet-stream',
      description: 'A JKS or PKCS12 keystore (decided by content), at most 1 MB (1,048,576 bytes).',
    },
    ...(keystoreUploadFields.properties as Record<string, Schema>),
  },
};

/** Body of POST .../keystore/generate. */
export const keystoreGenerateBody: Schema = {
  type: 'object',
  required: ['key_alias', 'common_name', 'organization', 'country'],
  additionalProperties: false,
  properties: {
    key_alias: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
      description: 'Letters, digits, `.`, `_`, `-`; starts with a letter or digit.',
    },
    common_name: { type: 'string', minLength: 1, maxLength: 64, ...singleLine, description: "The certificate's CN." },
    organization: { type: 'string', minLength: 1, maxLength: 64, ...singleLine, description: "The certificate's O." },
    country: { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166 alpha-2 code, upper case (C).' },
    validity_years: { type: 'integer', minimum: 1, maximum: 50, default: 25, description: 'Default 25.' },
    replace: { type: 'boolean', default: false, description: '`true` replaces a stored keystore (else 409).' },
  },
};

/** Metadata of a stored keystore (never the file or a password). */
export const keystoreRead: Schema = {
  type: 'object',
  required: ['app_type', 'type', 'alias', 'sha256_fingerprint', 'valid_until', 'source', 'created_at', 'updated_at'],
  properties: {
    app_type: { type: 'string', enum: [...APK_APP_TYPES] },
    type: { type: 'string', enum: ['JKS', 'PKCS12'], description: 'The store type.' },
    alias: { type: 'string' },
    sha256_fingerprint: {
      type: 'string',
      description: "SHA-256 of the signing certificate, keytool's form (AA:BB:...).",
    },
    valid_until: { type: 'string', format: 'date-time', description: "The certificate's notAfter." },
    source: { type: 'string', enum: ['uploaded', 'generated'] },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** The answer of generate: the metadata plus the random passwords, shown this once. */
export const keystoreGenerated: Schema = {
  ...keystoreRead,
  required: [...(keystoreRead.required as string[]), 'store_password', 'key_password'],
  properties: {
    ...(keystoreRead.properties as Record<string, Schema>),
    store_password: { type: 'string', description: 'Random; shown in this answer only. PKCS12: same as key_password.' },
    key_password: { type: 'string', description: 'Random; shown in this answer only.' },
  },
};

/** `{data: ...}` around a read shape. */
export const dataOf = (s: Schema): Schema => ({ type: 'object', required: ['data'], properties: { data: s } });
