import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import { singleLine, type Schema } from '../http/validation.js';
import type { AppContext } from '../context.js';
import { tenantParams } from './tenant-param.js';
import { platformActorOf, platformBase } from './tenants-routes.js';
import { dataOne } from './tenant-db-schemas.js';
import { stepRoute } from './tenant-db-routes.js';
import { FINGERPRINT_PATTERN, readinessSnapshot, verifyFingerprint, type EvidenceDeps } from './tenant-db/evidence.js';
import { approveProduction, type ApproveInput } from './tenant-db/approval.js';

/**
 * Issue 15 items 1, 2, 6, 7 (admin-api.md "Tenant provisioning (platform admin)"): the readiness
 * snapshot and its verify, the production approval, the demo seed and the dual write pilot with
 * their rollbacks, under `/api/platform/tenants/{tenant}/provisioning/tenant-db/`, platform admins only.
 */
const BASE = '/api/platform/tenants/:tenant/provisioning/tenant-db';
type P = { tenant: string };

function depsOf(ctx: AppContext): EvidenceDeps {
  const appKey = ctx.deps.config.appKey;
  if (!appKey) throw new Error('APP_KEY is not configured');
  return { knex: ctx.deps.knex, appKey, clock: ctx.deps.config.tenantDbClock };
}

const common = { 404: { description: 'No tenant with that slug or id' } };

const fingerprint: Schema = {
  type: 'string',
  pattern: FINGERPRINT_PATTERN,
  description: 'The evidence fingerprint: SHA-256, 64 hex digits.',
};
const person = (description: string): Schema => ({
  type: 'string',
  minLength: 2,
  maxLength: 190,
  ...singleLine,
  description,
});

/** The body of approve-production (admin-api.md "approve production (tenant DB)"). */
const approveBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['fingerprint', 'approver', 'maintenance_window', 'rollback_owner', 'monitoring_owner', 'reason'],
  properties: {
    fingerprint,
    approver: person('Who approves (2-190 characters).'),
    maintenance_window: {
      type: 'string',
      maxLength: 100,
      ...singleLine,
      description:
        'ISO 8601 interval start/end of two date-times with a zone; at most 12 h, ending in the future, starting within 14 days.',
    },
    rollback_owner: person('Who rolls back if needed (2-190 characters).'),
    monitoring_owner: person('Who watches the tenant after the cutover (2-190 characters).'),
    reason: { type: 'string', minLength: 10, maxLength: 2000, description: 'Why (10-2000 characters).' },
    confirm_phrase: {
      type: 'string',
      maxLength: 100,
      ...singleLine,
      description: 'APPROVE TENANT DB PRODUCTION',
    },
  },
};

const verifyQuery: Schema = {
  type: 'object',
  required: ['fingerprint'],
  additionalProperties: false,
  properties: { fingerprint },
};

export const tenantDbProductionRoutes: AnyWebRoute[] = [
  webRoute<P>({
    ...platformBase,
    method: 'get',
    path: `${BASE}/readiness-snapshot`,
    params: tenantParams,
    summary:
      'Read-only evidence snapshot: {db_mode, evidence (fingerprinted), observed, production_cutover (allowed false), commands}',
    responses: { 200: { description: 'The snapshot', schema: dataOne }, ...common },
    async handler(ctx) {
      ctx.body = { data: await readinessSnapshot(depsOf(ctx), ctx.state.params.tenant) };
    },
  }),
  webRoute<P, { fingerprint: string }>({
    ...platformBase,
    method: 'get',
    path: `${BASE}/readiness-snapshot/verify`,
    params: tenantParams,
    query: verifyQuery,
    summary:
      'Compare a fingerprint with the current evidence: {matched, decision, operator_action, production_cutover_allowed: false}',
    responses: {
      200: { description: 'The verdict', schema: dataOne },
      ...common,
      422: { description: 'VALIDATION_FAILED: fingerprint missing or not 64 hex digits' },
    },
    async handler(ctx) {
      ctx.body = { data: await verifyFingerprint(depsOf(ctx), ctx.state.params.tenant, ctx.state.query.fingerprint) };
    },
  }),
  webRoute<P, Record<string, never>, ApproveInput>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/approve-production`,
    params: tenantParams,
    body: approveBody,
    summary: 'Record a production approval of the current evidence (phrase APPROVE TENANT DB PRODUCTION); runs nothing',
    responses: {
      201: { description: 'The approval (older approved ones superseded)', schema: dataOne },
      ...common,
      422: {
        description:
          'VALIDATION_FAILED (fields, window, phrase, fingerprint not current) or INVALID_TRANSITION (master tenant, status, gate failing)',
      },
    },
    async handler(ctx) {
      const data = await approveProduction(depsOf(ctx), platformActorOf(ctx), ctx.state.params.tenant, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data };
    },
  }),
  stepRoute(
    'tenant-db/demo-seed',
    'demo_seed',
    'Write fixed DEMO- customers, invoices and a ticket into the tenant database only (phrase SEED TENANT DB DEMO DATA)',
  ),
  stepRoute(
    'tenant-db/demo-seed/rollback',
    'demo_seed_rollback',
    'Remove the demo seed rows from the tenant database (phrase ROLLBACK TENANT DB DEMO DATA)',
  ),
  stepRoute(
    'tenant-db/dual-write/run',
    'dual_write_run',
    'Write then update a DEMO- customer, invoice and ticket in both databases and compare row hashes (phrase RUN TENANT DB DUAL WRITE PILOT)',
  ),
  stepRoute(
    'tenant-db/dual-write/rollback',
    'dual_write_rollback',
    'Delete the dual-write DEMO- rows from both databases (phrase ROLLBACK TENANT DB DUAL WRITE PILOT)',
  ),
];
