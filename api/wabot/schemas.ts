import { singleLine, type Schema } from '../http/validation.js';
import { PROVIDERS } from '../../jobs/adapters/chat-providers/types.js';

/** At most this many sending accounts per tenant (decision, issue 10 item 2). */
export const MAX_ACCOUNTS = 20;
/** Account ids: letters, digits, `_` and `-`, 1 to 80 characters (decision). */
export const ACCOUNT_ID_PATTERN = '^[A-Za-z0-9_-]{1,80}$';
/** The routing strategies of the spec (only `auto`). */
export const ROUTING_STRATEGIES = ['auto'] as const;

/** Defaults of settings (spec: the limits; decision: the switches). */
export const SETTINGS_DEFAULTS = {
  enabled: false,
  auto_reply: false,
  base_url: null,
  ignore_groups: true,
  webhook_auto_register: false,
  reply_unknown_customers: false,
  max_messages_per_minute: 3,
  message_delay_seconds: 10,
  routing_strategy: 'auto',
} as const;

const provider: Schema = { type: 'string', enum: [...PROVIDERS] };
const secret = (what: string): Schema => ({
  type: ['string', 'null'],
  maxLength: 2048,
  ...singleLine,
  description: `Write-only ${what}: stored encrypted, never returned; absent or empty keeps the stored one, null clears it.`,
});
const baseUrl: Schema = {
  type: ['string', 'null'],
  maxLength: 2048,
  ...singleLine,
  description:
    'Manual API root (http or https, no credentials, query or fragment): required for wablas and waha, optional for ruangwa (its documented root when empty) and messenger (replaces the Graph API root), refused for fonnte, watzap and starsender. Empty or null: none.',
};
const perMinute = (nullable: boolean): Schema => ({
  type: nullable ? ['integer', 'null'] : 'integer',
  minimum: 0,
  maximum: 1000,
  description: 'Sends per 60 s per account; 0 = no cap.' + (nullable ? ' Null or absent: the settings value.' : ''),
});
const delay = (nullable: boolean): Schema => ({
  type: nullable ? ['integer', 'null'] : 'integer',
  minimum: 0,
  maximum: 3600,
  description:
    'Seconds between two sends of an account; 0 = no delay.' + (nullable ? ' Null or absent: the settings value.' : ''),
});

/** One entry of settings.accounts in PUT /api/wabot/config (document 2 "Chat-bot configuration", account entry). */
export const accountBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: {
      type: 'string',
      pattern: ACCOUNT_ID_PATTERN,
      description: 'Generated when absent; an existing id keeps that account (and its stored secrets).',
    },
    provider: { ...provider, description: 'Default: the top-level provider.' },
    label: { type: 'string', maxLength: 190, ...singleLine },
    token: secret('token (API key, device token or page access token)'),
    secret_key: secret('secret key (number key, session or page id)'),
    number: { type: ['string', 'null'], maxLength: 200, ...singleLine, description: "The account's own number." },
    base_url: baseUrl,
    enabled: { type: 'boolean', description: 'Default true.' },
    weight: { type: 'integer', minimum: 1, maximum: 100, description: 'Routing weight, default 1.' },
    max_messages_per_minute: perMinute(true),
    message_delay_seconds: delay(true),
  },
};

/** PUT /api/wabot/config body (document 2 "Chat-bot configuration"; issue 10 item 2). */
export const configBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['provider'],
  properties: {
    provider,
    wa_token: secret('API token (ruangwa: API key; messenger: page access token)'),
    wa_secret_key: secret('secret or number key (messenger: page id)'),
    wa_number: {
      type: ['string', 'null'],
      maxLength: 200,
      ...singleLine,
      description: 'Default test recipient: a phone number (messenger: a conversation id).',
    },
    settings: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean', description: 'Default false.' },
        auto_reply: { type: 'boolean', description: 'Default false.' },
        base_url: baseUrl,
        ignore_groups: { type: 'boolean', description: 'Default true.' },
        webhook_auto_register: { type: 'boolean', description: 'Default false.' },
        reply_unknown_customers: { type: 'boolean', description: 'Default false.' },
        max_messages_per_minute: { ...perMinute(false), description: 'Default 3; 0 = no cap.' },
        message_delay_seconds: { ...delay(false), description: 'Default 10; 0 = no delay.' },
        routing_strategy: { type: 'string', enum: [...ROUTING_STRATEGIES] },
        accounts: {
          type: 'array',
          maxItems: MAX_ACCOUNTS,
          items: accountBody,
          description:
            'The sending accounts, replacing the stored list (absent: none). Without accounts the top-level provider and credentials send as the account `default`.',
        },
      },
    },
  },
};

const settingsRead: Schema = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean' },
    auto_reply: { type: 'boolean' },
    base_url: { type: ['string', 'null'] },
    ignore_groups: { type: 'boolean' },
    webhook_auto_register: { type: 'boolean' },
    reply_unknown_customers: { type: 'boolean' },
    max_messages_per_minute: { type: 'integer' },
    message_delay_seconds: { type: 'integer' },
    routing_strategy: { type: 'string', enum: [...ROUTING_STRATEGIES] },
  },
};

const accountRead: Schema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    provider,
    label: { type: 'string' },
    number: { type: ['string', 'null'] },
    base_url: { type: ['string', 'null'] },
    enabled: { type: 'boolean' },
    weight: { type: 'integer' },
    max_messages_per_minute: { type: ['integer', 'null'], description: 'Null: the settings value.' },
    message_delay_seconds: { type: ['integer', 'null'], description: 'Null: the settings value.' },
    token_set: { type: 'boolean' },
    secret_key_set: { type: 'boolean' },
    webhook_url: {
      type: ['string', 'null'],
      description:
        'The inbound webhook naming this account (webhook_url + `&account=<id>`); null until the first save.',
    },
  },
};

/** The read shape of GET and PUT /api/wabot/config: never a secret, only whether one is set. */
export const configRead: Schema = {
  type: 'object',
  properties: {
    provider: { type: ['string', 'null'], enum: [...PROVIDERS, null] },
    wa_number: { type: ['string', 'null'] },
    credential_status: {
      type: 'object',
      properties: {
        configured: { type: 'boolean', description: 'A configuration was saved.' },
        token_set: { type: 'boolean', description: 'wa_token is stored.' },
        secret_key_set: { type: 'boolean', description: 'wa_secret_key is stored.' },
      },
    },
    webhook_url: {
      type: ['string', 'null'],
      description:
        'The inbound webhook to paste in the provider dashboard: {PUBLIC_BASE_URL}/api/wabot/inbound/{tenant_slug}?key=<secret>; null until the first save.',
    },
    settings: settingsRead,
    accounts: { type: 'array', items: accountRead },
  },
};

/** `{data}` around the read shape. */
export const configOne: Schema = { type: 'object', properties: { data: configRead } };

/** POST /api/wabot/test body (document 2 "Chat-bot configuration", test request; issue 10 item 4): all optional. */
export const testBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    phone: {
      type: 'string',
      maxLength: 200,
      ...singleLine,
      description:
        'Recipient: a phone number (messenger: a conversation id; wablas with is_group: a group id). Absent or empty: wa_number.',
    },
    message: {
      type: 'string',
      maxLength: 500,
      description: 'The text to send. Absent, empty or blank: a connection check of the account(s), nothing is sent.',
    },
    account_id: {
      type: 'string',
      maxLength: 80,
      ...singleLine,
      description:
        'The account to test. Absent or empty: each enabled account (connection check) or the routing (send).',
    },
    is_group: { type: 'boolean', description: 'wablas only: phone holds a group id.' },
  },
};

const accountCheck: Schema = {
  type: 'object',
  properties: {
    account_id: { type: 'string' },
    provider: { type: ['string', 'null'], enum: [...PROVIDERS, null] },
    label: { type: 'string' },
    enabled: { type: 'boolean' },
    ok: { type: 'boolean' },
    verified: {
      type: 'boolean',
      description: 'False when the provider documents no read-only call (ruangwa): the key was not verified.',
    },
    code: {
      type: ['string', 'null'],
      description:
        'Null when ok; else unreachable, rate_limited, provider_error, timeout, check_failed, account_unavailable, or the adapters’ permanent codes (auth_failed, device_disconnected, invalid_config, ...).',
    },
    detail: { type: 'string' },
  },
};

/** 200 of POST /api/wabot/test: a connection check (no message) or a send (message). */
export const testResult: Schema = {
  type: 'object',
  required: ['ok', 'data'],
  properties: {
    ok: { type: 'boolean', description: 'Check: every account ok. Send: not failed (sent, pending or still queued).' },
    data: {
      oneOf: [
        { type: 'array', items: accountCheck, description: 'Connection check: one entry per account.' },
        {
          type: 'object',
          description: 'Send: the outbox row after at most 15 s.',
          properties: {
            communication_id: { type: 'integer' },
            account_id: { type: ['string', 'null'] },
            status: { type: 'string', enum: ['queued', 'pending', 'sent', 'delivered', 'read', 'failed'] },
            message_id: { type: ['string', 'null'] },
            error: {
              type: ['object', 'null'],
              properties: { code: { type: 'string' }, message: { type: ['string', 'null'] } },
            },
            available_at: {
              type: ['string', 'null'],
              format: 'date-time',
              description: 'Still queued: when its slot comes (the account’s limits).',
            },
          },
        },
      ],
    },
  },
};
