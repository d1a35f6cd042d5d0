import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { AppContext } from '../context.js';
import { tenantParams } from './tenant-param.js';
import { platformActorOf, platformBase } from './tenants-routes.js';
import { dataOne, emptyBody, phraseBody, pilotBody, runOne } from './tenant-db-schemas.js';
import { previewPilot, previewSchema, startPilot, startStep, testDb, type TenantDbDeps } from './tenant-db/service.js';
import { QUEUE } from './tenant-db/runs.js';
import type { PilotInput } from './tenant-db/pilot.js';
import type { RunKind } from './tenant-db/state.js';

/**
 * Tenant databases (issue 14 items 3-6; admin-api.md "Tenant provisioning (platform admin)"):
 * `/api/platform/tenants/{tenant}/provisioning/...`, platform admins only.
 */
const BASE = '/api/platform/tenants/:tenant/provisioning';
type P = { tenant: string };
type Phrase = { confirm_phrase?: string };

/**
 * The dependencies of a tenant-db step route (shared with the cutover routes).
 * @throws Error when APP_KEY is not configured
 */
export function depsOf(ctx: AppContext): TenantDbDeps {
  const appKey = ctx.deps.config.appKey;
  if (!appKey) throw new Error('APP_KEY is not configured');
  return {
    knex: ctx.deps.knex,
    appKey,
    queue: ctx.deps.queues.get(QUEUE),
    enqueueTimeoutMs: ctx.deps.queues.enqueueTimeoutMs,
  };
}

const common = {
  404: { description: 'No tenant with that slug or id' },
  422: {
    description:
      'VALIDATION_FAILED (fields, confirm_phrase) or INVALID_TRANSITION (status, unfinished run, no tenant_db credential)',
  },
};
/** The 503 of every route that queues a tenant-db run. */
export const queueUnavailable = {
  503: { description: 'QUEUE_UNAVAILABLE: Redis did not take the job; no run is kept' },
};
const queued = {
  202: { description: 'The queued run (job tdb-run-<id> on queue tenant-db)', schema: runOne },
  ...common,
  ...queueUnavailable,
};
/**
 * The options every route that starts a tenant-db run shares: platform admins, {tenant}, and the
 * demo guard (documents 403 demo_guard_blocked; the service checks the path's tenant, platform
 * admins have none).
 */
export const runRouteBase = { ...platformBase, params: tenantParams, demoAction: 'provisioning.run' } as const;

/** A phrase-gated (or phrase-less) step answered 202 with its run. */
export function stepRoute(path: string, kind: Exclude<RunKind, 'pilot_run'>, summary: string): AnyWebRoute {
  return webRoute<P, Record<string, never>, Phrase>({
    ...runRouteBase,
    method: 'post',
    path: `${BASE}/${path}`,
    body: kind === 'copy_dry_run' ? emptyBody : phraseBody,
    summary,
    responses: queued,
    async handler(ctx) {
      const run = await startStep(
        depsOf(ctx),
        platformActorOf(ctx),
        ctx.state.params.tenant,
        kind,
        ctx.state.body?.confirm_phrase,
      );
      ctx.status = 202;
      ctx.body = { data: run };
    },
  });
}

export const tenantDbRoutes: AnyWebRoute[] = [
  webRoute<P, Record<string, never>, PilotInput>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/pilot-db/preview`,
    params: tenantParams,
    body: pilotBody,
    summary: 'Preview the pilot database: names, SQL, pg_hba.conf line, rollback plan, name conflicts (saves nothing)',
    responses: { 200: { description: 'The preview', schema: dataOne }, ...common },
    async handler(ctx) {
      ctx.body = { data: await previewPilot(depsOf(ctx), ctx.state.params.tenant, ctx.state.body ?? {}) };
    },
  }),
  webRoute<P, Record<string, never>, PilotInput>({
    ...runRouteBase,
    method: 'post',
    path: `${BASE}/pilot-db/run`,
    body: pilotBody,
    summary: 'Create the pilot database and its role (phrase RUN DB PILOT; no DNS, no mailbox)',
    responses: queued,
    async handler(ctx) {
      const run = await startPilot(depsOf(ctx), platformActorOf(ctx), ctx.state.params.tenant, ctx.state.body ?? {});
      ctx.status = 202;
      ctx.body = { data: run };
    },
  }),
  stepRoute(
    'pilot-db/rollback',
    'pilot_rollback',
    'Drop the pilot database and role this pilot created (phrase ROLLBACK DB PILOT)',
  ),
  webRoute<P, Record<string, never>, Record<string, never>>({
    ...platformBase,
    method: 'post',
    path: `${BASE}/tenant-db/test`,
    params: tenantParams,
    body: emptyBody,
    summary: 'Read-only connection test as the tenant role: {ok, server_version, client_addr_allowed, schema_version}',
    responses: {
      200: { description: 'The test result', schema: dataOne },
      ...common,
      422: { description: 'tenant_db_unreachable with the reason, or INVALID_TRANSITION before a pilot' },
    },
    async handler(ctx) {
      ctx.body = { data: await testDb(depsOf(ctx), ctx.state.params.tenant) };
    },
  }),
  webRoute<P>({
    ...platformBase,
    method: 'get',
    path: `${BASE}/tenant-schema/preview`,
    params: tenantParams,
    summary: 'Applied and pending migrations of the tenant database, pilot tables present',
    responses: { 200: { description: 'The schema preview', schema: dataOne }, ...common },
    async handler(ctx) {
      ctx.body = { data: await previewSchema(depsOf(ctx), ctx.state.params.tenant) };
    },
  }),
  stepRoute(
    'tenant-schema/run',
    'schema_run',
    "Apply the shared database's migrations in the tenant database (phrase RUN TENANT SCHEMA)",
  ),
  stepRoute(
    'data-copy/dry-run',
    'copy_dry_run',
    'Compare the tenant’s rows with the tenant database (reads only): counts, inserts, updates, collisions',
  ),
  stepRoute(
    'data-copy/run',
    'copy_run',
    'Copy the tenant’s rows (phrase COPY TENANT DATA PILOT; needs a dry-run with zero collisions)',
  ),
  stepRoute(
    'data-copy/rollback',
    'copy_rollback',
    'Empty the tenant tables of the tenant database (phrase ROLLBACK TENANT DATA PILOT)',
  ),
];
