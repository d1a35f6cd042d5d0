import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import type { AppContext } from '../context.js';
import { tenantParams } from './tenant-param.js';
import { platformTenantList, platformTenantOne, tenantCreateBody, tenantUpdateBody } from './tenants-schemas.js';
import {
  createPlatformTenant,
  listPlatformTenants,
  platformTenant,
  updatePlatformTenant,
  type PlatformActor,
  type PlatformTenantInput,
} from './tenants-service.js';

/** Guards of every /api/platform route (issue 13 item 1): a platform admin's login token; tenant users 403. */
export const platformBase = { tag: 'platform', auth: 'platform' } as const;
const notFound = { 404: { description: 'No tenant with that slug or id' } };

/** The platform admin acting, for the audit. */
export const platformActorOf = (ctx: AppContext): PlatformActor => ({ userId: ctx.state.auth!.userId!, ip: ctx.ip });

/** Tenants of the platform (issue 13 item 2; an addition to the spec). */
export const platformTenantRoutes: AnyWebRoute[] = [
  webRoute({
    ...platformBase,
    method: 'get',
    path: '/api/platform/tenants',
    summary: 'List all tenants (platform admins)',
    responses: { 200: { description: 'All tenants, by id', schema: platformTenantList } },
    async handler(ctx) {
      ctx.body = await listPlatformTenants(ctx.deps.knex);
    },
  }),
  webRoute<Input, Record<string, never>, PlatformTenantInput>({
    ...platformBase,
    method: 'post',
    path: '/api/platform/tenants',
    body: tenantCreateBody,
    summary: 'Create a tenant, optionally with its first Super Admin',
    responses: {
      201: { description: 'The new tenant', schema: platformTenantOne },
      409: { description: 'CONFLICT: slug, primary domain or admin e-mail taken' },
    },
    async handler(ctx) {
      ctx.status = 201;
      ctx.body = { data: await createPlatformTenant(ctx.deps.knex, platformActorOf(ctx), ctx.state.body) };
    },
  }),
  webRoute<{ tenant: string }>({
    ...platformBase,
    method: 'get',
    path: '/api/platform/tenants/:tenant',
    params: tenantParams,
    summary: 'Show a tenant by slug or id',
    responses: { 200: { description: 'The tenant', schema: platformTenantOne }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await platformTenant(ctx.deps.knex, ctx.state.params.tenant) };
    },
  }),
  webRoute<{ tenant: string }, Record<string, never>, PlatformTenantInput>({
    ...platformBase,
    method: 'put',
    path: '/api/platform/tenants/:tenant',
    params: tenantParams,
    body: tenantUpdateBody,
    summary: 'Update a tenant (name, demo_mode, modules, timezone, primary_domain; the slug is immutable)',
    responses: {
      200: { description: 'The updated tenant', schema: platformTenantOne },
      ...notFound,
      409: { description: 'CONFLICT: primary domain of another tenant' },
    },
    async handler(ctx) {
      const { tenant } = ctx.state.params;
      ctx.body = { data: await updatePlatformTenant(ctx.deps.knex, platformActorOf(ctx), tenant, ctx.state.body) };
    },
  }),
];
