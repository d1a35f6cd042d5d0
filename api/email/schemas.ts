import { singleLine, type Schema } from '../http/validation.js';

/** Encryption of a mail server connection: none = plaintext, ssl = implicit TLS, starttls = upgrade required. */
export const ENCRYPTIONS = ['none', 'ssl', 'starttls'] as const;
/** Incoming protocols (issue 9 item 1). */
export const PROTOCOLS = ['imap', 'pop3'] as const;
/** Sync states answered in `sync.status`. */
export const SYNC_STATUSES = ['never', 'queued', 'running', 'ok', 'failed', 'auth_failed'] as const;
/** Codes of a failed connection test (issue 9 item 2). */
export const TEST_ERROR_CODES = [
  'dns_failed',
  'connect_failed',
  'tls_failed',
  'auth_failed',
  'timeout',
  'protocol_error',
] as const;

const host: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  anyOf: [{ format: 'hostname' }, { format: 'ipv4' }, { format: 'ipv6' }],
  description: 'Host name or IP address.',
};
const port: Schema = { type: 'integer', minimum: 1, maximum: 65535 };
const encryption: Schema = { type: 'string', enum: [...ENCRYPTIONS] };
const username: Schema = { type: 'string', minLength: 1, maxLength: 190, ...singleLine };
const password = (which: string): Schema => ({
  type: 'string',
  maxLength: 1024,
  description: `Write-only ${which} password: stored encrypted, never returned; absent or empty keeps the stored one.`,
});

/** Required fields of PUT /api/auth/email-settings (document 2 "E-mail account setting"). */
export const SETTINGS_REQUIRED = [
  'email',
  'incoming_protocol',
  'incoming_host',
  'incoming_port',
  'incoming_encryption',
  'incoming_username',
  'outgoing_host',
  'outgoing_port',
  'outgoing_encryption',
  'outgoing_username',
] as const;

/** PUT /api/auth/email-settings body (issue 9 item 1). */
export const emailSettingsBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: [...SETTINGS_REQUIRED],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 190, ...singleLine },
    incoming_protocol: { type: 'string', enum: [...PROTOCOLS] },
    incoming_host: host,
    incoming_port: port,
    incoming_encryption: encryption,
    incoming_username: username,
    incoming_password: password('incoming (IMAP/POP3; also SMTP until an outgoing one is set)'),
    outgoing_host: host,
    outgoing_port: port,
    outgoing_encryption: encryption,
    outgoing_username: username,
    outgoing_password: password('outgoing (SMTP)'),
    leave_on_server: { type: 'boolean', description: 'Accepted and ignored: always stored and answered true.' },
  },
};

const nullable = (s: Schema): Schema => ({ ...s, type: [s.type as string, 'null'] });

/** The read shape of the account setting: never a password. */
export const emailSettingsRead: Schema = {
  type: 'object',
  properties: {
    email: nullable({ type: 'string' }),
    incoming_protocol: { type: 'string', enum: [...PROTOCOLS] },
    incoming_host: nullable({ type: 'string' }),
    incoming_port: nullable({ type: 'integer' }),
    incoming_encryption: { type: 'string', enum: [...ENCRYPTIONS] },
    incoming_username: nullable({ type: 'string', description: 'Masked (`in***@domain`) for mail-panel defaults.' }),
    outgoing_host: nullable({ type: 'string' }),
    outgoing_port: nullable({ type: 'integer' }),
    outgoing_encryption: { type: 'string', enum: [...ENCRYPTIONS] },
    outgoing_username: nullable({ type: 'string' }),
    leave_on_server: { type: 'boolean', enum: [true] },
    incoming_password_set: { type: 'boolean' },
    outgoing_password_set: { type: 'boolean' },
    source: { type: 'string', enum: ['saved', 'mail_panel', 'none'] },
    sync: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: [...SYNC_STATUSES] },
        last_synced_at: { type: ['string', 'null'], format: 'date-time' },
        last_error: { type: ['string', 'null'] },
      },
    },
  },
};

/** `{data}` around the read shape. */
export const emailSettingsOne: Schema = { type: 'object', properties: { data: emailSettingsRead } };

/** 202 of POST /api/auth/email-settings/sync. */
export const syncAccepted: Schema = {
  type: 'object',
  properties: {
    data: {
      type: 'object',
      properties: {
        job_id: { type: 'string' },
        status: { type: 'string', description: 'BullMQ state of the job: waiting, active, delayed, ...' },
      },
    },
  },
};

/** 200 of POST /api/auth/email-settings/test-incoming. */
export const testIncomingResult: Schema = {
  type: 'object',
  properties: {
    ok: { type: 'boolean' },
    data: {
      type: 'object',
      properties: {
        protocol: { type: 'string', enum: [...PROTOCOLS] },
        messages_on_server: { type: 'integer' },
        synced: { type: 'integer' },
        communication_id: { type: ['integer', 'null'] },
      },
    },
    error: {
      type: 'object',
      properties: { code: { type: 'string', enum: [...TEST_ERROR_CODES] }, message: { type: 'string' } },
    },
  },
};
