import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import { AppError, DemoGuardBlocked, InvalidTransition, ValidationFailed } from '../../errors.js';
import { tenantPools } from '../../../db/tenant-pools.js';
import { recordPlatformAudit } from '../audit.js';
import { resolvePlatformTenant } from '../tenant-param.js';
import type { PlatformActor } from '../tenants-service.js';
import { PHRASES } from '../tenant-db-schemas.js';
import { tenantConnection, tenantDbServer } from './admin.js';
import { pilotPreview, pilotRequest, savePilotRequest, type PilotInput } from './pilot.js';
import { startRun, type TenantDbRun } from './runs.js';
import { schemaPreview, testTenantDb } from './schema.js';
import { readTenantDb, STEPS, type RunKind } from './state.js';

/**
 * The tenant database steps as the routes call them (issue 14 items 3-6): the phrase first (a wrong
 * one changes nothing), then the tenant, the state and the run.
 */

/** What the routes pass in. */
export interface TenantDbDeps {
  knex: Knex;
  appKey: Buffer;
  queue: Queue;
  enqueueTimeoutMs?: number;
}

/**
 * Checks a step's confirmation phrase (exact, case-sensitive).
 * @throws ValidationFailed (422) `errors.confirm_phrase`
 */
export function requirePhrase(kind: keyof typeof PHRASES, given: string | undefined): void {
  if (given !== PHRASES[kind])
    throw new ValidationFailed({ confirm_phrase: [`The confirm_phrase must be exactly "${PHRASES[kind]}".`] });
}

/**
 * The demo guard of the runs and rollbacks (issue 14 item 9): a demo-mode tenant's database is never
 * created, migrated, copied or dropped (action `provisioning.run` of api/middleware/demo-guard.ts;
 * checked here because a platform route has no tenant of its own, the path names it).
 * @throws DemoGuardBlocked (403 demo_guard_blocked)
 */
function refuseDemo(tenant: { demo_mode: boolean }): void {
  if (tenant.demo_mode) throw new DemoGuardBlocked('provisioning.run');
}

/** 422 `tenant_db_unreachable`: the tenant database did not answer the test (reason in `errors.tenant_db`). */
export class TenantDbUnreachable extends AppError {
  constructor(reason: string) {
    super(422, 'tenant_db_unreachable', reason, { errors: { tenant_db: [reason] } });
  }
}

/** POST pilot-db/preview: 200, saves nothing. */
export async function previewPilot(deps: TenantDbDeps, ref: string, body: PilotInput) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  const req = pilotRequest(tenant, body);
  const server = await tenantDbServer(deps.knex, deps.appKey);
  return pilotPreview(deps.knex, server, tenant, req);
}

async function audit(deps: TenantDbDeps, actor: PlatformActor, tenantId: number, run: TenantDbRun) {
  await recordPlatformAudit(deps.knex, {
    userId: actor.userId,
    action: `platform.tenant_db_${run.kind}`,
    subject: { type: 'tenant', id: tenantId },
    after: { run_id: run.id, kind: run.kind },
    ip: actor.ip,
  });
}

/**
 * POST pilot-db/run: 202 with the queued run.
 * @throws DemoGuardBlocked (403 demo_guard_blocked, action provisioning.run) for a demo-mode tenant
 */
export async function startPilot(deps: TenantDbDeps, actor: PlatformActor, ref: string, body: PilotInput) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  const req = pilotRequest(tenant, body);
  requirePhrase('pilot_run', body.confirm_phrase);
  refuseDemo(tenant);
  const server = await tenantDbServer(deps.knex, deps.appKey);
  const run = await startRun(deps, tenant.id, 'pilot_run', actor.userId, (trx) =>
    savePilotRequest(trx, tenant, server, req),
  );
  await audit(deps, actor, tenant.id, run);
  return run;
}

/**
 * The other steps (pilot rollback, schema run, dry-run, copy, copy rollback): 202 with the run.
 * @throws ValidationFailed (phrase), DemoGuardBlocked (403, a demo-mode tenant: action provisioning.run),
 *   InvalidTransition (status, unfinished run, no tenant_db
 *   credential, data-copy/run without a clean dry-run since the last schema run), 503 QUEUE_UNAVAILABLE
 */
export async function startStep(
  deps: TenantDbDeps,
  actor: PlatformActor,
  ref: string,
  kind: Exclude<RunKind, 'pilot_run'>,
  phrase: string | undefined,
) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  if (kind !== 'copy_dry_run') requirePhrase(kind, phrase);
  refuseDemo(tenant);
  await tenantDbServer(deps.knex, deps.appKey);
  const run = await startRun(deps, tenant.id, kind, actor.userId, async (trx) => {
    if (kind !== 'copy_run') return;
    const db = await readTenantDb(trx, tenant.id);
    const dry = (await trx('tenant_db_runs')
      .where({ tenant_id: tenant.id, kind: 'copy_dry_run', status: 'succeeded' })
      .modify((q) => {
        if (db.schema_run_at) q.where('created_at', '>', db.schema_run_at);
      })
      .orderBy('id', 'desc')
      .first('result')) as { result: { collisions_total?: number } | null } | undefined;
    if (!dry) throw new InvalidTransition(db.status, 'copy data without a dry-run since the last schema run');
    if (dry.result?.collisions_total !== 0)
      throw new InvalidTransition(
        db.status,
        `copy data: the latest dry-run found ${dry.result?.collisions_total} collisions`,
      );
  });
  await audit(deps, actor, tenant.id, run);
  return run;
}

/** The tenant's pool after the status check of a read-only step. */
async function tenantKnexOf(deps: TenantDbDeps, ref: string, step: 'db_test' | 'schema_preview') {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  const row = await readTenantDb(deps.knex, tenant.id);
  const from = STEPS.db_test.from;
  if (!from.includes(row.status))
    throw new InvalidTransition(row.status, step === 'db_test' ? 'test' : 'preview the schema', from);
  return { row, tk: tenantPools('request').get(tenant.id, tenantConnection(row, deps.appKey)) };
}

/** POST tenant-db/test: read-only, as the tenant role; 422 tenant_db_unreachable with the reason. */
export async function testDb(deps: TenantDbDeps, ref: string) {
  const { row, tk } = await tenantKnexOf(deps, ref, 'db_test');
  try {
    return await testTenantDb(tk, row);
  } catch (err) {
    throw new TenantDbUnreachable(
      `The tenant database did not answer: ${String((err as Error).message).slice(0, 200)}`,
    );
  }
}

/** GET tenant-schema/preview: applied and pending migrations, pilot tables present. */
export async function previewSchema(deps: TenantDbDeps, ref: string) {
  const { tk } = await tenantKnexOf(deps, ref, 'schema_preview');
  try {
    return await schemaPreview(tk);
  } catch (err) {
    throw new TenantDbUnreachable(
      `The tenant database did not answer: ${String((err as Error).message).slice(0, 200)}`,
    );
  }
}
