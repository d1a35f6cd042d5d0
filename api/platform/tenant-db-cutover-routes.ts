import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { AppContext } from '../context.js';
import { singleLine, type Schema } from '../http/validation.js';
import { platformActorOf } from './tenants-routes.js';
import { depsOf as stepDepsOf, queueUnavailable, runRouteBase } from './tenant-db-routes.js';
import { dataOne, runOne } from './tenant-db-schemas.js';
import { readTenantDb } from './tenant-db/state.js';
import { tenantConnection } from './tenant-db/admin.js';
import { tenantPools } from '../../db/tenant-pools.js';
import {
  startCutover,
  startRollback,
  type CutoverDeps,
  type CutoverInput,
  type RollbackInput,
} from './tenant-db/cutover.js';

/**
 * Production cutover and rollback (issue 15 items 3 and 5; admin-api.md "Tenant provisioning"):
 * `/api/platform/tenants/{tenant}/provisioning/tenant-db/...`, platform admins only.
 */
const BASE = '/api/platform/tenants/:tenant/provisioning/tenant-db';
type P = { tenant: string };

/** The step routes' dependencies and the approvals' clock. */
const depsOf = (ctx: AppContext): CutoverDeps => ({ ...stepDepsOf(ctx), clock: ctx.deps.config.tenantDbClock });

const phrase = { type: 'string', maxLength: 100, ...singleLine, description: 'The step’s confirmation phrase.' };
const approvalId = { type: 'integer', minimum: 1, maximum: 2147483647, description: 'tenant_db_approvals id.' };

/** POST tenant-db/cutover-production. */
const cutoverBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['approval_id', 'fingerprint', 'confirm_phrase'],
  properties: {
    approval_id: approvalId,
    fingerprint: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The approved evidence fingerprint.' },
    confirm_phrase: phrase,
  },
};

/** POST tenant-db/rollback-production. */
const rollbackBody: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['approval_id'],
  properties: {
    approval_id: { ...approvalId, description: 'The approval the cutover used.' },
    dry_run: { type: 'boolean', default: false, description: 'true: answer the plan, write nothing.' },
    confirm_phrase: phrase,
  },
};

const errors = {
  404: { description: 'No tenant with that slug or id, or no approval of this tenant with that id' },
  422: {
    description:
      'VALIDATION_FAILED (fields, confirm_phrase, fingerprint) or INVALID_TRANSITION (master tenant, approval used, ' +
      'expired, superseded or outside its window, tenant database status, unfinished run)',
  },
  ...queueUnavailable,
};

export const tenantDbCutoverRoutes: AnyWebRoute[] = [
  webRoute<P, Record<string, never>, CutoverInput>({
    ...runRouteBase,
    method: 'post',
    path: `${BASE}/cutover-production`,
    body: cutoverBody,
    summary:
      'Move the tenant to its own database for production (phrase CUTOVER TENANT DB PRODUCTION; an approval in its window)',
    responses: { 202: { description: 'The queued cutover_production run', schema: runOne }, ...errors },
    async handler(ctx) {
      const run = await startCutover(depsOf(ctx), platformActorOf(ctx), ctx.state.params.tenant, ctx.state.body ?? {});
      ctx.status = 202;
      ctx.body = { data: run };
    },
  }),
  webRoute<P, Record<string, never>, RollbackInput>({
    ...runRouteBase,
    method: 'post',
    path: `${BASE}/rollback-production`,
    body: rollbackBody,
    summary:
      'Move a cut-over tenant back to the shared database (dry_run: the plan only; else phrase ROLLBACK TENANT DB PRODUCTION)',
    responses: {
      200: { description: 'dry_run: per table rows to insert, update and delete; nothing written', schema: dataOne },
      202: { description: 'The queued rollback_production run', schema: runOne },
      ...errors,
    },
    async handler(ctx) {
      const deps = depsOf(ctx);
      const r = await startRollback(
        deps,
        platformActorOf(ctx),
        ctx.state.params.tenant,
        ctx.state.body ?? {},
        async (id) => tenantPools('request').get(id, tenantConnection(await readTenantDb(deps.knex, id), deps.appKey)),
      );
      if (r.plan) ctx.body = { data: r.plan };
      else {
        ctx.status = 202;
        ctx.body = { data: r.run };
      }
    },
  }),
];
