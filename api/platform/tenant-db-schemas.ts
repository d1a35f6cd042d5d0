import { singleLine, type Schema } from '../http/validation.js';

/** Schemas of the tenant database routes (issue 14 items 1-6). */

/** The confirmation phrase of each phrase-gated step (admin-api.md "Tenant provisioning"). */
export const PHRASES = {
  pilot_run: 'RUN DB PILOT',
  pilot_rollback: 'ROLLBACK DB PILOT',
  schema_run: 'RUN TENANT SCHEMA',
  copy_run: 'COPY TENANT DATA PILOT',
  copy_rollback: 'ROLLBACK TENANT DATA PILOT',
  // issue 15 (admin-api.md "Tenant provisioning")
  demo_seed: 'SEED TENANT DB DEMO DATA',
  demo_seed_rollback: 'ROLLBACK TENANT DB DEMO DATA',
  dual_write_run: 'RUN TENANT DB DUAL WRITE PILOT',
  dual_write_rollback: 'ROLLBACK TENANT DB DUAL WRITE PILOT',
  cutover_production: 'CUTOVER TENANT DB PRODUCTION',
  rollback_production: 'ROLLBACK TENANT DB PRODUCTION',
  approve_production: 'APPROVE TENANT DB PRODUCTION',
  pilot_login: 'PILOT TENANT DB LOGIN',
  pilot_token_revoke: 'REVOKE TENANT DB PILOT TOKEN',
} as const;

const phrase = { type: 'string', maxLength: 100, ...singleLine, description: 'The step’s confirmation phrase.' };

/** The pilot database request (admin-api.md "pilot database request"). */
export const pilotBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    subdomain: { type: 'string', maxLength: 63, ...singleLine, description: 'DNS label (1-40); default the slug.' },
    domain: { type: 'string', maxLength: 253, ...singleLine, description: 'Hostname; default the primary domain.' },
    db_user_host: {
      type: 'string',
      maxLength: 64,
      ...singleLine,
      description: '`%` (default), `localhost`, an IP or a CIDR (printed as a pg_hba.conf line).',
    },
    confirm_phrase: phrase,
  },
};

/** Bodies besides the pilot request: the confirmation phrase only (decision). */
export const phraseBody: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { confirm_phrase: phrase },
};

/** Bodies of steps without a phrase (test, dry-run): empty. */
export const emptyBody: Schema = { type: 'object', additionalProperties: false, properties: {} };

const run: Schema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    tenant_id: { type: 'integer' },
    kind: { type: 'string' },
    status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'] },
    progress: { type: ['object', 'null'], additionalProperties: true },
    requested_by: { type: ['integer', 'null'] },
    result: { type: ['object', 'null'], additionalProperties: true },
    error: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    started_at: { type: ['string', 'null'], format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** 202 `{data: run}`. */
export const runOne: Schema = { type: 'object', properties: { data: run } };

/** A free-form `{data: {...}}` answer (previews, the connection test). */
export const dataOne: Schema = {
  type: 'object',
  properties: { data: { type: 'object', additionalProperties: true } },
};
