import { singleLine, type Schema } from '../http/validation.js';

/**
 * Schemas of the provisioning credentials routes (issue 13 items 3-5; admin-api.md "Tenant
 * provisioning payloads", credential request). Secrets are write-only: the answers carry
 * `<field>_set` flags instead.
 */

/** A hostname or IPv4 address (no scheme, no port). */
const host: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$',
  description: 'Hostname or IPv4 address, without scheme or port.',
};
const port: Schema = { type: 'integer', minimum: 1, maximum: 65535 };
const secret = (description: string): Schema => ({
  type: 'string',
  minLength: 1,
  maxLength: 4096,
  ...singleLine,
  writeOnly: true,
  description: `${description} Write-only; kept when omitted.`,
});

/** The sections of the credential request; each optional, `null` removes it. */
const sections: Record<string, Schema> = {
  tenant_db: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['host', 'port', 'admin_user'],
    properties: {
      host,
      port,
      admin_user: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[A-Za-z_][A-Za-z0-9_$-]*$' },
      admin_password: secret('PostgreSQL admin password.'),
    },
    description: 'PostgreSQL admin credential for tenant databases (CREATEDB, CREATEROLE).',
  },
  cloudflare: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['zone_id'],
    properties: {
      zone_id: { type: 'string', pattern: '^[a-f0-9]{32}$', description: 'Cloudflare zone id (32 hex digits).' },
      api_token: { ...secret('Cloudflare API token (Zone:DNS Edit, Zone:Read).'), pattern: '^[A-Za-z0-9_-]{1,200}$' },
    },
    description: 'DNS provider: Cloudflare API v4.',
  },
  mail_panel: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['type', 'host', 'port', 'user', 'ssl'],
    properties: {
      type: { type: 'string', enum: ['cpanel', 'directadmin', 'hestia'] },
      host,
      port,
      user: { type: 'string', minLength: 1, maxLength: 190, ...singleLine },
      password: secret('Panel password (cPanel: API token).'),
      ssh_key_path: { type: ['string', 'null'], maxLength: 1024, pattern: '^/[^\\u0000-\\u001f\\u007f]*$' },
      ssl: { type: 'boolean' },
      panel_user: { type: ['string', 'null'], maxLength: 64, ...singleLine },
      host_key_sha256: { type: ['string', 'null'], pattern: '^(SHA256:)?[A-Za-z0-9+/]{43}=?$' },
    },
    description: 'Mail panel (jobs/adapters/mail-panel): cPanel, DirectAdmin, or HestiaCP over SSH.',
  },
  storage: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['endpoint', 'region', 'bucket', 'access_key'],
    properties: {
      endpoint: { type: 'string', maxLength: 500, pattern: '^https?://[^\\s/?#]+/?$', description: 'S3 endpoint URL.' },
      region: { type: 'string', pattern: '^[a-z0-9-]{1,50}$' },
      bucket: { type: 'string', pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' },
      access_key: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9/+=_-]+$' },
      secret_key: secret('S3 secret access key.'),
    },
    description: 'S3-compatible storage for backups.',
  },
};

/** PUT /api/platform/provisioning/credentials (the spec's credential request). */
export const credentialsBody: Schema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    enabled: {
      type: 'boolean',
      description:
        'Provisioning switched on (the lock also needs tested credentials); the tenant-db cutover gate checks it as credentials_enabled. Default false.',
    },
    backup_ready: { type: 'boolean', description: 'Backups of the platform are in place.' },
    ...sections,
  },
};

const lastTest: Schema = {
  type: ['object', 'null'],
  properties: {
    ok: { type: 'boolean' },
    at: { type: 'string', format: 'date-time' },
    message: { type: 'string' },
  },
  description: 'The last check since the last change (null: untested).',
};
const meta: Record<string, Schema> = {
  fake: { type: 'boolean', description: 'A local demo fake (npm start), not a real service.' },
  changed_at: { type: 'string', format: 'date-time' },
  last_test: lastTest,
};
const masked = (props: Record<string, Schema>): Schema => ({
  type: ['object', 'null'],
  properties: { ...props, ...meta },
});

/** The masked credentials (GET and the PUT's answer). */
export const credentialsOne: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        enabled: { type: 'boolean' },
        backup_ready: { type: 'boolean' },
        backup: { type: 'object', properties: { last_test: lastTest } },
        tenant_db: masked({
          host: { type: 'string' },
          port: { type: 'integer' },
          admin_user: { type: 'string' },
          admin_password_set: { type: 'boolean' },
        }),
        cloudflare: masked({ zone_id: { type: 'string' }, api_token_set: { type: 'boolean' } }),
        mail_panel: masked({
          type: { type: 'string' },
          host: { type: 'string' },
          port: { type: 'integer' },
          user: { type: 'string' },
          ssl: { type: 'boolean' },
          ssh_key_path: { type: ['string', 'null'] },
          panel_user: { type: ['string', 'null'] },
          host_key_sha256: { type: ['string', 'null'] },
          password_set: { type: 'boolean' },
        }),
        storage: masked({
          endpoint: { type: 'string' },
          region: { type: 'string' },
          bucket: { type: 'string' },
          access_key: { type: 'string', description: 'Masked: the first 4 characters, then ***.' },
          secret_key_set: { type: 'boolean' },
        }),
      },
    },
  },
};

/** GET /api/platform/provisioning/readiness. */
export const readinessOne: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        ready: { type: 'boolean', description: 'Every check is ok.' },
        locked: { type: 'boolean', description: 'Runs and customer mailboxes answer 422 provisioning_locked.' },
        lock_reasons: { type: 'array', items: { type: 'string' } },
        checks: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              key: {
                type: 'string',
                enum: ['metadata_tables', 'tenant_db', 'cloudflare', 'mail_panel', 'storage', 'backup'],
              },
              status: { type: 'string', enum: ['ok', 'missing', 'untested', 'failed'] },
              message: { type: 'string' },
            },
          },
        },
      },
    },
  },
};

/** The providers of POST .../credentials/test/{provider}. */
export const CHECK_PROVIDERS = ['tenant_db', 'cloudflare', 'mail_panel', 'storage', 'backup'] as const;

/** Path of POST /api/platform/provisioning/credentials/test/{provider}. */
export const providerParams: Schema = {
  type: 'object',
  required: ['provider'],
  additionalProperties: false,
  properties: { provider: { type: 'string', enum: [...CHECK_PROVIDERS] } },
};

/** 200 of a check. */
export const checkResultOne: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        provider: { type: 'string' },
        ok: { type: 'boolean' },
        details: { type: 'object', additionalProperties: true },
      },
    },
  },
};
