import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Schema } from '../http/validation.js';
import type { AppContext } from '../context.js';
import { listEnvelope } from '../shared/schemas.js';
import { tenantParams } from '../platform/tenant-param.js';
import { dataOne } from '../platform/tenant-db-schemas.js';
import type { RoutedModule } from '../platform/tenant-db/write-plan.js';
import { smokeDemoFlow, smokeModule, smokeTenant, type SmokeDeps } from './smoke.js';

/**
 * Smoke routes of a tenant database (issue 15 item 9; admin-api.md "Tenant provisioning"):
 * `GET /api/tenant-db-pilot/tenants/{tenant}/customers|invoices|tickets|demo-flow`, for live pilot
 * tokens only (`auth: 'pilot'`, api/middleware/pilot-auth.ts): missing, expired, revoked or
 * non-pilot token 401; another tenant's pilot token 404.
 */
const BASE = '/api/tenant-db-pilot/tenants/:tenant';
type P = { tenant: string };
const SMOKE_MODULES: RoutedModule[] = ['customers', 'invoices', 'tickets'];

function depsOf(ctx: AppContext): SmokeDeps {
  const appKey = ctx.deps.config.appKey;
  if (!appKey) throw new Error('APP_KEY is not configured');
  return { knex: ctx.deps.knex, appKey };
}

const guards = { tag: 'tenant-db-pilot', auth: 'pilot' } as const;
const envelopeSchema = listEnvelope({ type: 'object', additionalProperties: true });
const moduleList: Schema = {
  ...envelopeSchema,
  properties: {
    ...(envelopeSchema.properties as Record<string, Schema>),
    module: { type: 'string' },
    source: { type: 'string', enum: ['tenant_db'] },
    fallback_reason: { type: 'null' },
    fallback_detail: { type: 'null' },
  },
};
const refusals = {
  404: { description: 'No such tenant, or not the pilot token’s tenant' },
  422: {
    description:
      'INVALID_TRANSITION: the tenant database does not serve reads (not copied, use_tenant_db_read off); tenant_db_unreachable',
  },
};

/** The tenant of the path, checked against the pilot token's. */
async function tenantOf(ctx: AppContext & { state: { params: P } }) {
  return smokeTenant(ctx.deps.knex, ctx.state.params.tenant, ctx.state.auth!.tenantId);
}

export const tenantDbPilotRoutes: AnyWebRoute[] = [
  ...SMOKE_MODULES.map((module) =>
    webRoute<P>({
      ...guards,
      method: 'get',
      path: `${BASE}/${module}`,
      params: tenantParams,
      summary: `Smoke read with a pilot token: the first page of ${module} from the tenant database (issue 6 read shape)`,
      responses: { 200: { description: 'The list envelope, source tenant_db', schema: moduleList }, ...refusals },
      async handler(ctx) {
        const tenant = await tenantOf(ctx);
        ctx.body = await smokeModule(depsOf(ctx), tenant.id, module);
      },
    }),
  ),
  webRoute<P>({
    ...guards,
    method: 'get',
    path: `${BASE}/demo-flow`,
    params: tenantParams,
    summary: 'Smoke read with a pilot token: DEMO- customers of the tenant database, their invoices and tickets',
    responses: { 200: { description: 'The demo-flow report', schema: dataOne }, ...refusals },
    async handler(ctx) {
      const tenant = await tenantOf(ctx);
      ctx.body = { data: await smokeDemoFlow(depsOf(ctx), tenant.id) };
    },
  }),
];
