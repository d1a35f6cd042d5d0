import type { Schema } from '../http/validation.js';
import { singleLine } from '../http/validation.js';
import { listEnvelope, pageQuery } from '../shared/schemas.js';
import { APK_APP_TYPES } from '../../jobs/apk/signing.js';

/**
 * JSON schemas of the app builder (issue 12; document 2 "Mobile app build configuration", "Mobile
 * app builder"). Cross-field rules (https in production, Java keywords in package_id, version_code
 * against successful builds) are in service.ts.
 */

/** An Android application id: two or more segments `[A-Za-z][A-Za-z0-9_]*` joined by dots. */
export const PACKAGE_ID_PATTERN = '^[A-Za-z][A-Za-z0-9_]*(\\.[A-Za-z][A-Za-z0-9_]*)+$';

/** Path `{appType}`: one of the four app types (else 422). */
export const appTypeParams: Schema = {
  type: 'object',
  required: ['appType'],
  additionalProperties: false,
  properties: { appType: { type: 'string', enum: [...APK_APP_TYPES] } },
};

const url = { type: 'string', format: 'uri', maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$' };

/** PUT /api/android-apk/configs/{appType}: every spec field required, api_url and enabled optional. */
export const configBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'app_name',
    'package_id',
    'version_name',
    'version_code',
    'base_url',
    'environment',
    'theme_color',
    'orientation',
    'signing_mode',
  ],
  properties: {
    app_name: { type: 'string', minLength: 1, maxLength: 50, ...singleLine },
    package_id: { type: 'string', minLength: 3, maxLength: 150, pattern: PACKAGE_ID_PATTERN },
    version_name: { type: 'string', minLength: 1, maxLength: 50, ...singleLine },
    version_code: { type: 'integer', minimum: 1, maximum: 2100000000 },
    base_url: url,
    api_url: { anyOf: [url, { type: 'null' }] },
    environment: { type: 'string', enum: ['sandbox', 'production'] },
    theme_color: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' },
    orientation: { type: 'string', enum: ['portrait', 'landscape', 'default'] },
    signing_mode: { type: 'string', enum: ['debug', 'release'] },
    enabled: { type: 'boolean' },
  },
};

/** A saved configuration as the API shows it. */
export const configShape: Schema = {
  type: 'object',
  required: ['app_type', 'app_name', 'package_id', 'version_name', 'version_code', 'base_url', 'enabled'],
  properties: {
    app_type: { type: 'string', enum: [...APK_APP_TYPES] },
    app_name: { type: 'string' },
    package_id: { type: 'string' },
    application_id: { type: 'string', description: 'package_id, plus `.sandbox` in the sandbox environment' },
    version_name: { type: 'string' },
    version_code: { type: 'integer' },
    base_url: { type: 'string' },
    api_url: { type: ['string', 'null'] },
    effective_api_url: { type: 'string', description: 'api_url, or `{base_url}/api` when null' },
    start_url: { type: 'string', description: 'what the app opens (absensi: `{base_url}/absensi/`)' },
    environment: { type: 'string' },
    theme_color: { type: 'string' },
    orientation: { type: 'string' },
    signing_mode: { type: 'string' },
    enabled: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** One build as the API shows it. */
export const buildShape: Schema = {
  type: 'object',
  required: ['id', 'app_type', 'build_type', 'status', 'progress', 'toolchain'],
  properties: {
    id: { type: 'integer' },
    app_type: { type: 'string', enum: [...APK_APP_TYPES] },
    build_type: { type: 'string', enum: ['debug', 'release'] },
    status: { type: 'string', enum: ['queued', 'running', 'successful', 'failed', 'cancelled'] },
    toolchain: { type: 'string', enum: ['real', 'stub'], description: '`stub`: a fake APK from the stub toolchain' },
    progress: { type: 'integer', minimum: 0, maximum: 100 },
    version_name: { type: 'string' },
    version_code: { type: 'integer' },
    config: { type: 'object', description: 'the configuration snapshot the build used' },
    error: { type: ['string', 'null'] },
    log_tail: { type: ['string', 'null'], description: 'the last lines of the build output (redacted)' },
    file_name: { type: ['string', 'null'] },
    size_bytes: { type: ['integer', 'null'] },
    sha256: { type: ['string', 'null'] },
    download_url: { type: ['string', 'null'], description: 'set while the APK can be downloaded' },
    cancel_requested_at: { type: ['string', 'null'], format: 'date-time' },
    started_at: { type: ['string', 'null'], format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
    file_deleted_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

/** The health data (jobs/apk/toolchain.ts ApkHealth). */
export const healthShape: Schema = {
  type: 'object',
  required: ['ready', 'toolchain', 'items'],
  properties: {
    ready: { type: 'boolean' },
    toolchain: { type: 'string', enum: ['real', 'stub'] },
    mode: { type: 'string', enum: ['real', 'stub', 'auto'] },
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'status'],
        properties: {
          name: { type: 'string', enum: ['node', 'npm', 'java', 'keytool', 'android_sdk', 'storage'] },
          status: { type: 'string', enum: ['ok', 'missing', 'unusable'] },
          version: { type: ['string', 'null'] },
          path: { type: ['string', 'null'] },
          hint: { type: ['string', 'null'] },
        },
      },
    },
  },
};

/** GET /api/android-apk. */
export const overviewShape: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      required: ['configs', 'builds', 'health'],
      properties: {
        configs: {
          type: 'object',
          description: 'app type -> its configuration, or null when none is saved',
          properties: Object.fromEntries(APK_APP_TYPES.map((t) => [t, { anyOf: [configShape, { type: 'null' }] }])),
        },
        builds: { type: 'array', items: buildShape, description: 'the last 20 builds, newest first' },
        health: healthShape,
      },
    },
  },
};

/** `{data: config}`. */
export const configOne: Schema = { type: 'object', properties: { data: configShape } };
/** `{data: build}`. */
export const buildOne: Schema = { type: 'object', properties: { data: buildShape } };
/** `{data: health}`. */
export const healthOne: Schema = { type: 'object', properties: { data: healthShape } };
/** Page of builds. */
export const buildList: Schema = listEnvelope(buildShape);

/** POST /api/android-apk/configs/{appType}/builds. */
export const buildBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['build_type'],
  properties: { build_type: { type: 'string', enum: ['debug', 'release'] } },
};

/** GET /api/android-apk/builds: page, per_page (20), app_type, status. */
export const buildListQuery: Schema = pageQuery(20, {
  app_type: { type: 'string', enum: [...APK_APP_TYPES] },
  status: { type: 'string', enum: ['queued', 'running', 'successful', 'failed', 'cancelled'] },
});
