import type { Knex } from 'knex';
import { DemoGuardBlocked, InvalidTransition, NotFound, ValidationFailed } from '../../errors.js';
import type { Clock } from '../../../lib/clock.js';
import { resolvePlatformTenant } from '../tenant-param.js';
import { recordPlatformAudit } from '../audit.js';
import type { PlatformActor } from '../tenants-service.js';
import { tenantDbServer, TenantDbPermanentError } from './admin.js';
import { KEEP_ON_ROLLBACK, passPlan, syncPass, verifyPass, type PassDirection } from './cutover-passes.js';
import { lockExclusive } from './cutover-lock.js';
import { startIdBlocks } from './id-blocks.js';
import { startRun, type TenantDbRun } from './runs.js';
import { requirePhrase, type TenantDbDeps } from './service.js';
import { readTenantDb } from './state.js';
import { usableApproval } from './approval.js';
import { currentFingerprint } from './evidence.js';
import { cutoverGate } from './reconcile.js';
import type { CopyReporter } from './copy.js';

/**
 * Production cutover and its rollback (issue 15 items 3 and 5; admin-api.md "Tenant provisioning"):
 * the routes' checks (approval, fingerprint, master, status) and the jobs' work (passes, lock,
 * verification, id blocks, the switch).
 */

/** What the cutover and rollback routes need besides TenantDbDeps. */
export interface CutoverDeps extends TenantDbDeps {
  /** The clock of the approval window (default the system clock; tests: ManualClock). */
  clock?: Clock;
}

/** A tenant_db_approvals row (the columns the cutover reads). */
export interface ApprovalRow {
  id: number;
  tenant_id: number;
  fingerprint: string;
  status: 'approved' | 'used' | 'superseded' | 'rolled_back';
  window_start: Date;
  window_end: Date;
}

/** The cutover body (admin-api.md). */
export interface CutoverInput {
  approval_id?: number;
  fingerprint?: string;
  confirm_phrase?: string;
}

/** The production rollback body (admin-api.md). */
export interface RollbackInput {
  approval_id?: number;
  dry_run?: boolean;
  confirm_phrase?: string;
}

/** The approval of an id, this tenant's only. @throws NotFound (404) for another tenant's or a missing id */
async function approvalOf(knex: Knex, tenantId: number, id: number | undefined): Promise<ApprovalRow> {
  const row = (await knex('tenant_db_approvals')
    .where({ id: id ?? 0, tenant_id: tenantId })
    .first()) as ApprovalRow | undefined;
  if (!row) throw new NotFound('Approval');
  return row;
}

/**
 * The cutover's preconditions (item 3), checked by the route before it queues the run:
 * not the master tenant; the approval (this tenant's, else 404; `approved`, its window containing
 * now: usableApproval); the fingerprint equal to the approval's and to the current evidence's
 * (else 422 VALIDATION_FAILED `errors.fingerprint`); the evidence's gate passing (else 422
 * INVALID_TRANSITION naming the failing checks).
 * @returns the approval
 * @throws NotFound, ValidationFailed, InvalidTransition (422, the reason in the message)
 */
export async function cutoverPreconditions(
  deps: CutoverDeps,
  tenant: { id: number; is_master?: boolean },
  body: CutoverInput,
): Promise<ApprovalRow> {
  const master = (await deps.knex('tenants').where({ id: tenant.id }).first('is_master')) as { is_master: boolean };
  if (master?.is_master) throw new InvalidTransition('shared_db_master', 'cut over the master tenant');
  const approval = (await usableApproval(deps.knex, tenant.id, body.approval_id ?? 0, deps.clock)) as ApprovalRow;
  if ((body.fingerprint ?? '').toLowerCase() !== approval.fingerprint)
    throw new ValidationFailed({ fingerprint: ['The fingerprint is not the approved evidence fingerprint.'] });
  // the evidence's gate must pass now (it is part of the fingerprint: checked first, so the answer
  // names the failing checks), and the evidence must still be what was approved (a re-copy or a
  // schema run changes it)
  const gate = await cutoverGate(deps, tenant.id, { live: false });
  if (!gate.passed)
    throw new InvalidTransition(
      'gate failing',
      `cut over: ${gate.checks
        .filter((c) => !c.ok)
        .map((c) => `${c.name} (${c.detail})`)
        .join(', ')}`,
    );
  if ((await currentFingerprint(deps, tenant.id)) !== approval.fingerprint)
    throw new ValidationFailed({
      fingerprint: ['The evidence changed since the approval: take a new snapshot and approve it.'],
    });
  return approval;
}

async function audit(deps: TenantDbDeps, actor: PlatformActor, tenantId: number, run: TenantDbRun, approvalId: number) {
  await recordPlatformAudit(deps.knex, {
    userId: actor.userId,
    action: `platform.tenant_db_${run.kind}`,
    subject: { type: 'tenant', id: tenantId },
    after: { run_id: run.id, kind: run.kind, approval_id: approvalId },
    ip: actor.ip,
  });
}

/**
 * POST tenant-db/cutover-production: 202 with the queued `cutover_production` run.
 * @throws ValidationFailed (phrase, fingerprint), DemoGuardBlocked (403, a demo-mode tenant),
 *   NotFound (approval), InvalidTransition (master,
 *   approval status or window, tenant database status, unfinished run), 503 QUEUE_UNAVAILABLE
 */
export async function startCutover(deps: CutoverDeps, actor: PlatformActor, ref: string, body: CutoverInput) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  requirePhrase('cutover_production', body.confirm_phrase);
  if (tenant.demo_mode) throw new DemoGuardBlocked('provisioning.run');
  const approval = await cutoverPreconditions(deps, tenant, body);
  await tenantDbServer(deps.knex, deps.appKey);
  const run = await startRun(deps, tenant.id, 'cutover_production', actor.userId);
  await deps.knex('tenant_db_approvals').where({ id: approval.id }).update({ cutover_run_id: run.id });
  await audit(deps, actor, tenant.id, run, approval.id);
  return run;
}

/** The cutover's approval of a rollback: this tenant's (404), `used` by a cutover (422). */
async function rollbackApproval(deps: CutoverDeps, tenantId: number, body: RollbackInput) {
  const master = (await deps.knex('tenants').where({ id: tenantId }).first('is_master')) as { is_master: boolean };
  if (master?.is_master) throw new InvalidTransition('shared_db_master', 'roll back the master tenant');
  const approval = await approvalOf(deps.knex, tenantId, body.approval_id);
  if (approval.status !== 'used')
    throw new InvalidTransition(`approval ${approval.status}`, 'roll back production with this approval', ['used']);
  const db = await readTenantDb(deps.knex, tenantId);
  if (db.status !== 'production') throw new InvalidTransition(db.status, 'rollback_production', ['production']);
  return approval;
}

/**
 * POST tenant-db/rollback-production: `dry_run: true` answers the plan (per table rows to insert,
 * update and delete in the shared database) and writes nothing (no run, no audit row); otherwise
 * the phrase and a queued `rollback_production` run.
 * @returns `{plan}` for a dry run, `{run}` otherwise
 */
export async function startRollback(
  deps: CutoverDeps,
  actor: PlatformActor,
  ref: string,
  body: RollbackInput,
  tk: (tenantId: number) => Promise<Knex>,
): Promise<{ plan?: Record<string, unknown>; run?: TenantDbRun }> {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  if (!body.dry_run) requirePhrase('rollback_production', body.confirm_phrase);
  if (!body.dry_run && tenant.demo_mode) throw new DemoGuardBlocked('provisioning.run');
  const approval = await rollbackApproval(deps, tenant.id, body);
  if (body.dry_run) {
    const plan = await passPlan(deps.knex, 'to_shared');
    const tables = await syncPass(await tk(tenant.id), deps.knex, plan, tenant.id, {
      dryRun: true,
      keepExtras: KEEP_ON_ROLLBACK,
    });
    const total = (f: 'to_insert' | 'to_update' | 'to_delete') => tables.reduce((n, t) => n + t[f], 0);
    return {
      plan: {
        approval_id: approval.id,
        direction: 'tenant_db -> shared_db',
        tables,
        totals: { to_insert: total('to_insert'), to_update: total('to_update'), to_delete: total('to_delete') },
      },
    };
  }
  await tenantDbServer(deps.knex, deps.appKey);
  const run = await startRun(deps, tenant.id, 'rollback_production', actor.userId);
  await deps.knex('tenant_db_approvals').where({ id: approval.id }).update({ rollback_run_id: run.id });
  await audit(deps, actor, tenant.id, run, approval.id);
  return { run };
}

/** Test hooks of the jobs: called with the exclusive lock held, before the locked pass. */
let afterLock: ((tenantId: number) => Promise<void> | void) | undefined;
/** Sets (or clears) the after-lock hook (tests only). */
export function configureCutover(o: { afterLock?: (tenantId: number) => Promise<void> | void }): void {
  afterLock = o.afterLock;
}

/**
 * The job of `cutover_production` (item 3 a-f) or `rollback_production` (item 5): a pass, the
 * exclusive lock in both databases, the locked pass, the verification (counts, checksums, foreign
 * keys), the id blocks (cutover only), then the switch: db_mode in both databases, the status, the
 * approval. Any failure before the switch rolls the lock transactions back: nothing switched.
 * @param knex the shared database
 * @param tk the tenant database (the job's pool)
 * @throws TenantDbPermanentError when the verification fails
 */
export async function executeMove(
  knex: Knex,
  tk: Knex,
  run: { id: number; tenant_id: number },
  direction: PassDirection,
  rep: CopyReporter,
) {
  const tenantId = run.tenant_id;
  const [from, to] = direction === 'to_tenant' ? [knex, tk] : [tk, knex];
  const plan = await passPlan(knex, direction);
  const keep = { keepExtras: direction === 'to_shared' ? KEEP_ON_ROLLBACK : [] };
  const first = await syncPass(from, to, plan, tenantId, keep);
  await rep.log(`pass 1: ${summary(first)}`);
  await rep.progress({ step: 'pass', pass: 1, tables_total: plan.length });
  const lock = await lockExclusive(knex, tk, tenantId);
  try {
    if (afterLock) await afterLock(tenantId);
    const second = await syncPass(from, to, plan, tenantId, keep);
    await rep.log(`pass 2 (locked): ${summary(second)}`);
    await rep.progress({ step: 'verify', pass: 2, tables_total: plan.length });
    const verified = await verifyPass(from, to, plan, tenantId, keep.keepExtras);
    const blocks = direction === 'to_tenant' ? await startIdBlocks(knex, tk, tenantId, plan) : [];
    const mode = direction === 'to_tenant' ? 'tenant_db' : 'shared_db';
    await lock.tenant('tenants').where({ id: tenantId }).update({ db_mode: mode });
    await lock.shared('tenants').where({ id: tenantId }).update({ db_mode: mode });
    await lock
      .shared('tenant_databases')
      .where({ tenant_id: tenantId })
      .update({ status: direction === 'to_tenant' ? 'production' : 'data_copied', updated_at: knex.fn.now() });
    const approval = lock
      .shared('tenant_db_approvals')
      .where({ tenant_id: tenantId })
      .where(direction === 'to_tenant' ? 'cutover_run_id' : 'rollback_run_id', run.id);
    const marked =
      direction === 'to_tenant'
        ? await approval.where('status', 'approved').update({ status: 'used', used_at: knex.fn.now() })
        : await approval.where('status', 'used').update({ status: 'rolled_back', rolled_back_at: knex.fn.now() });
    if (marked !== 1) throw new TenantDbPermanentError(`the approval of run ${run.id} is no longer valid`);
    await lock.commit();
    await rep.log(`db_mode ${mode}`);
    return { db_mode: mode, passes: [first, second], verified, id_blocks: blocks };
  } catch (err) {
    await lock.rollback();
    throw err;
  }
}

const summary = (c: { table: string; to_insert: number; to_update: number; to_delete: number }[]) => {
  const n = (f: 'to_insert' | 'to_update' | 'to_delete') => c.reduce((s, t) => s + t[f], 0);
  return `${n('to_insert')} inserted, ${n('to_update')} updated, ${n('to_delete')} deleted`;
};
