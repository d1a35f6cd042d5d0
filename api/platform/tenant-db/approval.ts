import type { Knex } from 'knex';
import { InvalidTransition, NotFound, ValidationFailed } from '../../errors.js';
import { systemClock, type Clock } from '../../../lib/clock.js';
import { recordPlatformAudit } from '../audit.js';
import { resolvePlatformTenant } from '../tenant-param.js';
import type { PlatformActor } from '../tenants-service.js';
import { requirePhrase } from './service.js';
import { currentFingerprint, type EvidenceDeps } from './evidence.js';
import { cutoverGate } from './reconcile.js';
import { readTenantDb } from './state.js';

/**
 * Production approvals of a tenant database (issue 15 item 2; admin-api.md "approve production
 * (tenant DB)"): `POST tenant-db/approve-production` records a `tenant_db_approvals` row against
 * the current evidence fingerprint and nothing else. An approval is usable once, inside its
 * maintenance window; a newer approval of the tenant supersedes the older `approved` ones.
 */

/** Longest maintenance window (12 h) and latest start (14 days ahead), in ms. */
export const MAX_WINDOW_MS = 12 * 3600_000;
export const MAX_START_AHEAD_MS = 14 * 86_400_000;

/** The body of approve-production. */
export interface ApproveInput {
  fingerprint: string;
  approver: string;
  maintenance_window: string;
  rollback_owner: string;
  monitoring_owner: string;
  reason: string;
  confirm_phrase?: string;
}

/** A tenant_db_approvals row. */
export interface ApprovalRow {
  id: number;
  tenant_id: number;
  fingerprint: string;
  approver: string;
  rollback_owner: string;
  monitoring_owner: string;
  reason: string;
  window_start: Date;
  window_end: Date;
  status: 'approved' | 'used' | 'superseded' | 'rolled_back';
  approved_by: number | null;
  cutover_run_id: number | null;
  rollback_run_id: number | null;
  used_at: Date | null;
  superseded_at: Date | null;
  rolled_back_at: Date | null;
  created_at: Date;
}

/** A date-time with a zone (Z or ±hh:mm), seconds and fractions optional. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses an ISO 8601 interval `start/end` (two date-times with a zone; decision: no durations).
 * @returns start and end in epoch ms
 * @throws ValidationFailed (422) `errors.maintenance_window`
 */
export function parseWindow(value: string): { start: number; end: number } {
  const parts = value.split('/');
  const bad = (why: string) => new ValidationFailed({ maintenance_window: [why] });
  if (parts.length !== 2 || !parts.every((p) => DATE_TIME.test(p)))
    throw bad('The maintenance_window must be an ISO 8601 interval start/end of two date-times with a time zone.');
  const [start, end] = parts.map((p) => Date.parse(p));
  if (!Number.isFinite(start) || !Number.isFinite(end)) throw bad('The maintenance_window has an invalid date.');
  if (end <= start) throw bad('The maintenance_window must end after it starts.');
  return { start, end };
}

/**
 * The window rules against the clock: at most 12 h long, ending in the future, starting within 14 days.
 * @throws ValidationFailed (422) `errors.maintenance_window`
 */
export function checkWindow(w: { start: number; end: number }, now: Date): void {
  const bad = (why: string) => new ValidationFailed({ maintenance_window: [why] });
  if (w.end - w.start > MAX_WINDOW_MS) throw bad('The maintenance_window may last at most 12 hours.');
  if (w.end <= now.getTime()) throw bad('The maintenance_window has already ended.');
  if (w.start > now.getTime() + MAX_START_AHEAD_MS) throw bad('The maintenance_window must start within 14 days.');
}

/**
 * POST tenant-db/approve-production: 201 with the approval. Order: tenant (404), phrase, window,
 * master (INVALID_TRANSITION), status data_copied, fingerprint (the current one, else 422
 * `errors.fingerprint` evidence_changed), gate passed (INVALID_TRANSITION naming the failing checks).
 * Supersedes the tenant's older `approved` rows in the same transaction; audited
 * `platform.tenant_db_approve_production`.
 * @throws NotFound, ValidationFailed, InvalidTransition
 */
export async function approveProduction(deps: EvidenceDeps, actor: PlatformActor, ref: string, body: ApproveInput) {
  const clock = deps.clock ?? systemClock;
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  requirePhrase('approve_production', body.confirm_phrase);
  const w = parseWindow(body.maintenance_window);
  checkWindow(w, clock.now());
  if (tenant.is_master)
    throw new InvalidTransition('shared_db_master', 'approve production for the master tenant (it stays shared)');
  const db = await readTenantDb(deps.knex, tenant.id);
  if (db.status !== 'data_copied') throw new InvalidTransition(db.status, 'approve production', ['data_copied']);
  const current = await currentFingerprint(deps, tenant.id);
  if (current !== body.fingerprint.toLowerCase())
    throw new ValidationFailed({
      fingerprint: ['evidence_changed: not the current evidence fingerprint; take a new readiness snapshot.'],
    });
  const gate = await cutoverGate(deps, tenant.id, { live: false });
  if (!gate.passed) {
    const failing = gate.checks.filter((c) => !c.ok).map((c) => `${c.name} (${c.detail})`);
    throw new InvalidTransition(`${db.status}, gate failing: ${failing.join('; ')}`, 'approve production');
  }
  return deps.knex.transaction(async (trx) => {
    await trx('tenants').where({ id: tenant.id }).forUpdate().first('id');
    const now = clock.now();
    const superseded = (await trx('tenant_db_approvals')
      .where({ tenant_id: tenant.id, status: 'approved' })
      .update({ status: 'superseded', superseded_at: now })
      .returning('id')) as { id: number }[];
    const [row] = (await trx('tenant_db_approvals')
      .insert({
        tenant_id: tenant.id,
        fingerprint: current,
        approver: body.approver,
        rollback_owner: body.rollback_owner,
        monitoring_owner: body.monitoring_owner,
        reason: body.reason,
        window_start: new Date(w.start),
        window_end: new Date(w.end),
        status: 'approved',
        approved_by: actor.userId,
        created_at: now,
      })
      .returning('*')) as ApprovalRow[];
    await recordPlatformAudit(trx, {
      userId: actor.userId,
      action: 'platform.tenant_db_approve_production',
      subject: { type: 'tenant', id: tenant.id },
      after: {
        approval_id: row.id,
        fingerprint: current,
        window_start: row.window_start,
        window_end: row.window_end,
        superseded: superseded.map((s) => s.id),
      },
      ip: actor.ip,
    });
    return approvalView(row, now);
  });
}

/** The answer's shape of an approval: the row plus `maintenance_window` and `expired` (from the clock). */
export function approvalView(row: ApprovalRow, now: Date) {
  const iso = (d: Date) => new Date(d).toISOString();
  return {
    ...row,
    maintenance_window: `${iso(row.window_start)}/${iso(row.window_end)}`,
    expired: new Date(row.window_end).getTime() <= now.getTime(),
  };
}

/**
 * The tenant's approval a cutover may use (issue 15 items 2-3): `approved`, inside its window by the clock.
 * @param knex the shared database or a transaction (the caller may lock the row first)
 * @returns the row
 * @throws NotFound (404) when the tenant has no approval with that id; InvalidTransition (422) when it
 *   was used, superseded or rolled back, has expired (window ended) or its window has not started
 */
export async function usableApproval(
  knex: Knex | Knex.Transaction,
  tenantId: number,
  approvalId: number,
  clock: Clock = systemClock,
): Promise<ApprovalRow> {
  const row = (await knex('tenant_db_approvals').where({ id: approvalId, tenant_id: tenantId }).first()) as
    ApprovalRow | undefined;
  if (!row) throw new NotFound('Approval');
  const why: Record<string, string> = {
    used: 'approval already used by a cutover',
    superseded: 'approval superseded by a newer approval',
    rolled_back: 'approval rolled back',
  };
  if (row.status !== 'approved') throw new InvalidTransition(row.status, `cut over with it: ${why[row.status]}`);
  const now = clock.now().getTime();
  if (new Date(row.window_end).getTime() <= now)
    throw new InvalidTransition('expired', 'cut over with it: the approval expired (its maintenance window ended)');
  if (new Date(row.window_start).getTime() > now)
    throw new InvalidTransition('approved', 'cut over with it: its maintenance window has not started');
  return row;
}
