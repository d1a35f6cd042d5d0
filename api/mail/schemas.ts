import { singleLine, type Schema } from '../http/validation.js';
import {
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  REAL_NAME_MAX_LENGTH,
} from '../../jobs/adapters/mail-panel/validate.js';

/**
 * JSON schemas of the Mailbox API (document 3 "Resources and their fields"). They validate the
 * requests (ajv, compiled once) and feed /openapi.json. Field names exactly as document 3 writes them.
 */

/** Default and maximum of the `limit` query parameter (DESIGN.md §6 "mailbox list limit"). */
export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

const NO_CRLF = '^[^\\r\\n]*$';

/**
 * Longest mailbox password accepted (header or body field; issue 7): longer ones are 422
 * invalid_request before any IMAP/SMTP login (Dovecot refuses them, which read as a 502).
 */
export const MAILBOX_PASSWORD_MAX_LENGTH = 1024;

export const mailboxParam: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 320,
  ...singleLine,
  description:
    'The mailbox address, URL-encoded (the at sign becomes %40), e.g. `info%40example.com`. Case-insensitive.',
};

export const mailboxParams: Schema = {
  type: 'object',
  required: ['mailbox'],
  properties: { mailbox: mailboxParam },
};

export const emailParams: Schema = {
  type: 'object',
  required: ['mailbox', 'id'],
  properties: {
    mailbox: mailboxParam,
    id: {
      type: 'string',
      pattern: '^[1-9][0-9]{0,9}$',
      description: 'The e-mail id: its IMAP UID in INBOX, a positive integer as a string.',
    },
  },
};

const domainParam: Schema = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  ...singleLine,
  description: "The mail domain, e.g. `example.com`; it must be the API key's domain.",
};

export const domainParams: Schema = { type: 'object', required: ['domain'], properties: { domain: domainParam } };

export const requestParams: Schema = {
  type: 'object',
  required: ['domain', 'job_id'],
  properties: {
    domain: domainParam,
    job_id: {
      type: 'string',
      maxLength: 64,
      ...singleLine,
      description: 'The job_id of a 202 answer of POST /api/v1/domains/{domain}/mailboxes (`mailbox-create-<n>`).',
    },
  },
};

export const listQuery: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: LIST_LIMIT_MAX,
      default: LIST_LIMIT_DEFAULT,
      description: `How many e-mails, newest first: 1 to ${LIST_LIMIT_MAX}, default ${LIST_LIMIT_DEFAULT}.`,
    },
    unseen: {
      type: 'string',
      enum: ['1', '0', 'true', 'false'],
      description: '`1` (or `true`) lists only unseen e-mails; `0`/`false` or absent lists all.',
    },
  },
};

const mailboxPasswordField: Schema = {
  type: 'string',
  maxLength: MAILBOX_PASSWORD_MAX_LENGTH,
  description:
    'The mailbox password, when not sent in the X-Mailbox-Password header (the header wins when both are present). Used for this request only; never stored.',
};

export const replyBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['body'],
  properties: {
    mailbox_password: mailboxPasswordField,
    body: {
      type: 'string',
      minLength: 1,
      maxLength: 1_000_000,
      pattern: '\\S',
      description: 'Plain-text body of the reply.',
    },
  },
};

export const sendBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['to', 'subject', 'body'],
  properties: {
    mailbox_password: mailboxPasswordField,
    to: { type: 'string', format: 'email', maxLength: 254, description: 'One recipient address.' },
    subject: {
      type: 'string',
      minLength: 1,
      maxLength: 998,
      pattern: NO_CRLF,
      description: 'Subject line (one line).',
    },
    body: { type: 'string', minLength: 1, maxLength: 1_000_000, pattern: '\\S', description: 'Plain-text body.' },
  },
};

/**
 * Create mailbox payload. Types and bounds here; validateCreateMailbox (jobs/adapters/mail-panel/
 * validate.ts, shared with the panel adapters) checks the same rules again and more (no `..`, no
 * control characters).
 */
export const createMailboxBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['local_part', 'password'],
  properties: {
    local_part: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      pattern: '^[A-Za-z0-9](?:[A-Za-z0-9._+-]{0,62}[A-Za-z0-9])?$',
      description: 'The part before the at sign: letters, digits and . _ + -; stored lowercase.',
    },
    password: {
      type: 'string',
      minLength: PASSWORD_MIN_LENGTH,
      maxLength: PASSWORD_MAX_LENGTH,
      description: `Initial password, ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters. Handed to the panel sealed; never stored.`,
    },
    real_name: {
      type: ['string', 'null'],
      maxLength: REAL_NAME_MAX_LENGTH,
      ...singleLine,
      description: 'Optional display name.',
    },
    quota: {
      type: ['string', 'null'],
      maxLength: 20,
      pattern: '^[0-9]+[MG]$',
      description:
        "Optional quota: a number followed by M (MiB) or G (GiB), e.g. `500M`; absent or null = the panel's default.",
    },
  },
};

// ---- responses ----

export const indexResult: Schema = {
  type: 'object',
  required: ['ok', 'service', 'version', 'base_url', 'docs', 'openapi', 'authentication', 'endpoints'],
  properties: {
    ok: { type: 'boolean' },
    service: { type: 'string' },
    version: { type: 'string' },
    base_url: { type: 'string' },
    docs: { type: 'string' },
    openapi: { type: 'string' },
    authentication: { type: 'string' },
    endpoints: {
      type: 'array',
      items: {
        type: 'object',
        required: ['method', 'path', 'scope'],
        properties: { method: { type: 'string' }, path: { type: 'string' }, scope: { type: ['string', 'null'] } },
      },
    },
  },
};

export const mailboxListResult: Schema = {
  type: 'object',
  required: ['data'],
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['email', 'imap_host', 'smtp_host'],
        properties: { email: { type: 'string' }, imap_host: { type: 'string' }, smtp_host: { type: 'string' } },
      },
    },
  },
};

const str = { type: 'string' };

export const emailSummary: Schema = {
  type: 'object',
  required: ['id', 'from', 'to', 'subject', 'date', 'message_id'],
  properties: {
    id: str,
    from: str,
    to: str,
    subject: str,
    date: { type: 'string', description: 'RFC 2822 style date.' },
    message_id: str,
    seen: { type: 'boolean' },
  },
};

export const emailListResult: Schema = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: emailSummary } },
};

export const emailDetail: Schema = {
  type: 'object',
  required: ['id', 'from', 'subject', 'message_id', 'references', 'body_raw'],
  properties: {
    id: str,
    from: str,
    to: str,
    cc: str,
    subject: str,
    date: str,
    message_id: str,
    references: str,
    in_reply_to: str,
    reply_to: str,
    body_raw: { type: 'string', description: 'The raw RFC 5322 source.' },
    text: { type: ['string', 'null'] },
    html: { type: ['string', 'null'] },
    attachments: {
      type: 'array',
      items: {
        type: 'object',
        required: ['filename', 'content_type', 'size', 'content_id'],
        properties: {
          filename: { type: ['string', 'null'] },
          content_type: str,
          size: { type: 'integer', description: 'bytes' },
          content_id: { type: ['string', 'null'] },
        },
      },
    },
  },
};

export const emailDetailResult: Schema = { type: 'object', required: ['data'], properties: { data: emailDetail } };

export const sentResult: Schema = {
  type: 'object',
  required: ['ok', 'message_id'],
  properties: {
    ok: { type: 'boolean', const: true },
    message_id: { type: 'string', description: 'Message-ID of the sent e-mail.' },
  },
};

export const createdMailbox: Schema = {
  type: 'object',
  required: ['email', 'username', 'domain', 'imap_host', 'imap_port', 'smtp_host', 'smtp_port'],
  properties: {
    email: str,
    username: str,
    domain: str,
    imap_host: str,
    imap_port: { type: 'integer' },
    smtp_host: str,
    smtp_port: { type: 'integer' },
  },
};

export const createResult: Schema = {
  type: 'object',
  required: ['ok', 'data'],
  properties: {
    ok: { type: 'boolean', const: true },
    status: { type: 'string', const: 'created' },
    data: createdMailbox,
  },
};

export const pendingResult: Schema = {
  type: 'object',
  required: ['ok', 'status', 'job_id'],
  properties: {
    ok: { type: 'boolean', const: true },
    status: { type: 'string', const: 'pending' },
    job_id: { type: 'string' },
  },
};

/** The error body of every Mailbox API error. */
export const mailErrorBody: Schema = {
  type: 'object',
  required: ['ok', 'error', 'message'],
  properties: {
    ok: { type: 'boolean', const: false },
    error: { type: 'string', description: 'Error code (see the table in the API description).' },
    message: { type: 'string' },
    errors: {
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
      description: 'invalid_request: field -> reasons.',
    },
    request_id: { type: 'string', description: 'server_error: the id of the log line.' },
    job_id: { type: 'string' },
  },
};
