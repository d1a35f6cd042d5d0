import type { Schema } from '../../http/validation.js';
import { HOSTNAME_PATTERN } from '../tenants-schemas.js';

/**
 * Bodies and answers of the provisioning runs routes (issue 13 item 6; admin-api.md "Tenant
 * provisioning payloads": the provisioning request). Bounds and defaults are ours (docs/decisions.md).
 */

/** The exact confirmation phrases (admin-api.md "Tenant provisioning (platform admin)"). */
export const PHRASES = {
  provision: 'PROVISION SUBSCRIBER DOMAIN',
  change: 'CHANGE SUBSCRIBER DOMAIN',
  cleanup: 'DELETE OLD SUBSCRIBER DNS',
} as const;

/** A DNS label, lower case. */
export const LABEL_PATTERN = '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$';

/** The provisioning request's fields (all optional: defaults from the tenant, the zone and the config). */
export const requestFields: Record<string, Schema> = {
  subdomain: {
    type: 'string',
    maxLength: 63,
    pattern: LABEL_PATTERN,
    description: 'A DNS label (default the tenant slug).',
  },
  domain: {
    type: 'string',
    maxLength: 190,
    pattern: HOSTNAME_PATTERN,
    description: 'The Cloudflare zone or a name below it (default the zone).',
  },
  dns_target: {
    type: 'string',
    minLength: 1,
    maxLength: 253,
    pattern: '^[a-z0-9.-]+$',
    description: 'IPv4 address for A, hostname for CNAME (default PROVISIONING_DNS_TARGET).',
  },
  record_type: { type: 'string', enum: ['A', 'CNAME'], description: 'Default A.' },
  proxied: { type: 'boolean', description: 'Through the Cloudflare proxy (default true).' },
  mailbox_local_part: {
    type: 'string',
    maxLength: 64,
    pattern: '^[a-z0-9]([a-z0-9._+-]{0,62}[a-z0-9])?$',
    description: 'Mailbox local part (default the tenant slug).',
  },
  mailbox_quota_mb: { type: 'integer', minimum: 0, maximum: 102400, description: '0 unlimited (default 1024).' },
};

const phrase: Schema = {
  type: 'string',
  maxLength: 60,
  description: 'The exact confirmation phrase of the action.',
};

/** POST .../preview, .../draft, .../change-preview: the provisioning request. */
export const requestBody: Schema = { type: 'object', additionalProperties: false, properties: { ...requestFields } };

/** POST .../subscriber-domain/provision: the request (or a draft) and PROVISION SUBSCRIBER DOMAIN. */
export const provisionBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...requestFields,
    draft_id: { type: 'integer', minimum: 1, maximum: 9007199254740991, description: 'Run a saved draft.' },
    confirm_phrase: phrase,
  },
};

/** POST .../subscriber-domain/change-apply: the new domain's request and CHANGE SUBSCRIBER DOMAIN. */
export const changeBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...requestFields, confirm_phrase: phrase },
};

/** POST .../subscriber-domain/cleanup-old: the old domain and DELETE OLD SUBSCRIBER DNS. */
export const cleanupBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['domain'],
  properties: { domain: { type: 'string', maxLength: 253, pattern: HOSTNAME_PATTERN }, confirm_phrase: phrase },
};

/** POST .../subscriber-domain/regenerate-preview: optional parent domain. */
export const regenerateBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { domain: requestFields.domain },
};

/** POST .../runs/{run}/resume: the run's phrase. */
export const resumeBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { confirm_phrase: phrase },
};

/** Path of .../runs/{run}/resume. */
export const runParams: Schema = {
  type: 'object',
  required: ['tenant', 'run'],
  additionalProperties: false,
  properties: {
    tenant: { type: 'string', minLength: 1, maxLength: 63 },
    run: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
  },
};

const obj: Schema = { type: 'object' };
/** `{data: {...}}` answers (their fields in the route's description). */
export const dataOne: Schema = { type: 'object', required: ['data'], properties: { data: obj } };
