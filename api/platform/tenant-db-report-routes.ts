import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Schema } from '../http/validation.js';
import type { AppContext } from '../context.js';
import { tenantParams } from './tenant-param.js';
import { platformBase } from './tenants-routes.js';
import { dataOne } from './tenant-db-schemas.js';
import type { ReportDeps } from './tenant-db/report-base.js';
import { cutoverGate, reconciliation, shadowRead } from './tenant-db/reconcile.js';
import {
  demoFlow,
  moduleReport,
  pilotHealth,
  productionStatus,
  readSample,
  writePlanReport,
} from './tenant-db/reports.js';
import { moduleOf } from './tenant-db/module-read.js';
import { listEnvelope } from '../shared/schemas.js';
import { ROUTED_MODULES } from './tenant-db/write-plan.js';

/**
 * The read-only reports of a tenant database (issue 14 item 8; admin-api.md "Tenant provisioning
 * (platform admin)"): `GET /api/platform/tenants/{tenant}/provisioning/tenant-db/...`, platform
 * admins only, answered in the request (no job). An unreachable tenant database is a 200 with the
 * failing check `tenant_db.check`.
 */
const BASE = '/api/platform/tenants/:tenant/provisioning/tenant-db';
type P = { tenant: string };
type M = { tenant: string; module: string };

function depsOf(ctx: AppContext): ReportDeps {
  const appKey = ctx.deps.config.appKey;
  if (!appKey) throw new Error('APP_KEY is not configured');
  return { knex: ctx.deps.knex, appKey };
}

const common = { 404: { description: 'No tenant with that slug or id' } };

/** A module read: the list envelope plus `module`, `source` and `fallback_reason`. */
const envelopeSchema = listEnvelope({ type: 'object', additionalProperties: true });
const moduleList: Schema = {
  ...envelopeSchema,
  properties: {
    ...(envelopeSchema.properties as Record<string, Schema>),
    module: { type: 'string', enum: [...ROUTED_MODULES] },
    source: { type: 'string', enum: ['tenant_db', 'shared'] },
    fallback_reason: {
      type: ['string', 'null'],
      enum: ['not_migrated', 'not_copied', 'flag_off', 'tenant_db_unreachable', null],
    },
    fallback_detail: { type: ['string', 'null'] },
  },
};

const moduleParams: Schema = {
  type: 'object',
  required: ['tenant', 'module'],
  additionalProperties: false,
  properties: {
    ...(tenantParams.properties as Record<string, Schema>),
    module: { type: 'string', minLength: 1, maxLength: 40, description: 'users, customers, invoices or tickets.' },
  },
};

/** A report answered `{data: {...}}`. */
function report(path: string, summary: string, fn: (deps: ReportDeps, ref: string) => Promise<unknown>) {
  return webRoute<P>({
    ...platformBase,
    method: 'get',
    path: `${BASE}/${path}`,
    params: tenantParams,
    summary,
    responses: {
      200: { description: 'The report (unreachable tenant database: the failing check)', schema: dataOne },
      ...common,
    },
    async handler(ctx) {
      ctx.body = { data: await fn(depsOf(ctx), ctx.state.params.tenant) };
    },
  });
}

export const tenantDbReportRoutes: AnyWebRoute[] = [
  report('read-sample', 'Count and the 5 lowest-id rows of each pilot table in the tenant database', readSample),
  report('demo-flow', 'DEMO- customers of the tenant database, their invoices and tickets', demoFlow),
  report('pilot-health', 'Latency, version, schema, counts and last run of the tenant database', pilotHealth),
  report('shadow-read', 'Per module the 100 lowest ids on both sides: matched, mismatched, missing, extra', shadowRead),
  report(
    'reconciliation',
    'Per table counts, checksums, missing_in_tenant, changed, accepted pilot extras, blocking extras, 20 keys',
    reconciliation,
  ),
  report('cutover-gate', 'The cutover checks {name, ok, detail} and passed', cutoverGate),
  report('production-status', 'Status, db_mode, read flag, where reads come from, last 20 runs', productionStatus),
  report('write-plan', 'Per module where writes go now, in dual write and after cutover', writePlanReport),
  ...ROUTED_MODULES.map((module) =>
    webRoute<P>({
      ...platformBase,
      method: 'get',
      path: `${BASE}/${module}`,
      params: tenantParams,
      summary: `First page of ${module} (issue 6 read shape) from the tenant database, else shared with fallback_reason`,
      responses: { 200: { description: 'The list envelope with source', schema: moduleList }, ...common },
      async handler(ctx) {
        ctx.body = await moduleReport(depsOf(ctx), ctx.state.params.tenant, module);
      },
    }),
  ),
  webRoute<M>({
    ...platformBase,
    method: 'get',
    path: `${BASE}/module-read/:module`,
    params: moduleParams,
    summary: 'First page of a module from the tenant database, else shared with fallback_reason',
    responses: {
      200: { description: 'The list envelope with source', schema: moduleList },
      ...common,
      422: { description: 'VALIDATION_FAILED errors.module: not users, customers, invoices or tickets' },
    },
    async handler(ctx) {
      const module = moduleOf(ctx.state.params.module);
      ctx.body = await moduleReport(depsOf(ctx), ctx.state.params.tenant, module);
    },
  }),
];
