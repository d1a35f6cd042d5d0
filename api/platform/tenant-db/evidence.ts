import type { Knex } from 'knex';
import { createHash } from 'node:crypto';
import { canonical } from '../../middleware/idempotency.js';
import { systemClock, type Clock } from '../../../lib/clock.js';
import { resolvePlatformTenant } from '../tenant-param.js';
import { PHRASES } from '../tenant-db-schemas.js';
import { cutoverGate, reconciliation } from './reconcile.js';
import { withTenantDb, type ReportDeps } from './report-base.js';
import { readTenantDb } from './state.js';

/**
 * The readiness evidence of a tenant database (issue 15 item 1; admin-api.md "Tenant
 * provisioning"): `GET tenant-db/readiness-snapshot` and its `/verify`. The evidence (target, last
 * migration, the verified copy run, the gate's check names and results) is fingerprinted; the live
 * reconciliation goes to `observed`, unfingerprinted, so the counts moving with daily writes do not
 * change it. A snapshot never allows a cutover (`production_cutover.allowed` is always false).
 */

/** What the snapshot routes pass in (the clock dates `observed.at` and the commands' window). */
export interface EvidenceDeps extends ReportDeps {
  clock?: Clock;
}

/** The decisions of verify. */
export type VerifyDecision = 'ready_for_approval' | 'gate_failing' | 'evidence_changed' | 'master_tenant';

/** A 64-hex SHA-256 fingerprint (lower case). */
export const FINGERPRINT_PATTERN = '^[0-9a-fA-F]{64}$';

/** Evidence without its fingerprint (plain JSON: strings, numbers, booleans, null). */
type Evidence = Record<string, unknown>;

/**
 * SHA-256 hex of the canonical JSON (sorted keys, the idempotency middleware's serialiser) of the
 * evidence without its fingerprint.
 */
export function fingerprintOf(evidence: Evidence): string {
  const { fingerprint: _ignored, ...rest } = evidence;
  return createHash('sha256')
    .update(canonical(JSON.parse(JSON.stringify(rest))))
    .digest('hex');
}

/** The latest succeeded copy run: id, finish time, per-table count and checksum (shared side). */
async function verifiedCopy(knex: Knex, tenantId: number) {
  const run = (await knex('tenant_db_runs')
    .where({ tenant_id: tenantId, kind: 'copy_run', status: 'succeeded' })
    .orderBy('id', 'desc')
    .first('id', 'finished_at', 'result')) as
    | {
        id: number;
        finished_at: Date | null;
        result: { tables?: { table: string; count: number; checksum: string }[] };
      }
    | undefined;
  if (!run) return null;
  return {
    run_id: run.id,
    finished_at: run.finished_at ? new Date(run.finished_at).toISOString() : null,
    tables: (run.result?.tables ?? []).map((t) => ({ table: t.table, count: t.count, checksum: t.checksum })),
  };
}

/** The evidence, its gate and the tenant (one read of everything the snapshot and verify need). */
async function collect(deps: EvidenceDeps, ref: string | number) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  const row = await readTenantDb(deps.knex, tenant.id);
  const gate = await cutoverGate(deps, tenant.id, { live: false });
  const mig = await withTenantDb(deps, tenant.id, async (tk) => {
    const m = (await tk('knex_migrations').orderBy('id', 'desc').first('name')) as { name: string } | undefined;
    return m?.name ?? null;
  });
  const evidence: Evidence = {
    tenant: { id: tenant.id, slug: tenant.slug },
    status: row.status,
    target: {
      host: row.server_host,
      port: row.server_port,
      database: row.database_name,
      role: row.role_name,
      db_user_host: row.db_user_host,
    },
    last_migration: mig.value ?? null,
    copy: await verifiedCopy(deps.knex, tenant.id),
    gate: { passed: gate.passed, checks: gate.checks.map((c) => ({ name: c.name, ok: c.ok })) },
  };
  const fingerprint = fingerprintOf(evidence);
  return { tenant, row, gate, reach: mig.reach, evidence: { ...evidence, fingerprint }, fingerprint };
}

/**
 * The current evidence fingerprint of a tenant (for the approval and the cutover).
 * @param tenantId the tenant's id (or slug)
 * @throws NotFound (404) for an unknown tenant
 */
export async function currentFingerprint(deps: ReportDeps, tenantId: number | string): Promise<string> {
  return (await collect(deps, tenantId)).fingerprint;
}

/** `shared_db_master` for the master tenant, else tenants.db_mode (`shared_db` or `tenant_db`). */
export const dbModeOf = (tenant: { is_master?: boolean; db_mode?: string }): string =>
  tenant.is_master ? 'shared_db_master' : (tenant.db_mode ?? 'shared_db');

/** An ISO 8601 interval from now to +2 h (the commands' example maintenance window), whole minutes. */
function exampleWindow(clock: Clock): string {
  const start = Math.ceil(clock.now().getTime() / 60_000) * 60_000;
  const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
  return `${iso(start)}/${iso(start + 2 * 3600_000)}`;
}

/**
 * GET tenant-db/readiness-snapshot: `{db_mode, evidence, observed, production_cutover, commands}`.
 * @throws NotFound (404) for an unknown tenant
 */
export async function readinessSnapshot(deps: EvidenceDeps, ref: string) {
  const clock = deps.clock ?? systemClock;
  const c = await collect(deps, ref);
  const rec = c.reach.reachable ? await reconciliation(deps, c.tenant.slug) : null;
  // observed: the live gate (today's rows: missing, changed, blocking extras), not fingerprinted
  const liveGate = c.reach.reachable ? await cutoverGate(deps, c.tenant.id) : c.gate;
  const base = `/api/platform/tenants/${c.tenant.slug}/provisioning/tenant-db`;
  const master = dbModeOf(c.tenant) === 'shared_db_master';
  const commands = [
    {
      step: 'verify',
      method: 'GET',
      path: `${base}/readiness-snapshot/verify?fingerprint=${c.fingerprint}`,
    },
    ...(master
      ? []
      : [
          {
            step: 'approve',
            method: 'POST',
            path: `${base}/approve-production`,
            body: {
              fingerprint: c.fingerprint,
              approver: '<approver name>',
              maintenance_window: exampleWindow(clock),
              rollback_owner: '<rollback owner>',
              monitoring_owner: '<monitoring owner>',
              reason: '<why this tenant moves now (10-2000 characters)>',
              confirm_phrase: PHRASES.approve_production,
            },
          },
          {
            step: 'cutover',
            method: 'POST',
            path: `${base}/cutover-production`,
            body: {
              approval_id: '<id of the approval>',
              fingerprint: c.fingerprint,
              confirm_phrase: PHRASES.cutover_production,
            },
          },
        ]),
  ];
  return {
    db_mode: dbModeOf(c.tenant),
    evidence: c.evidence,
    observed: {
      at: clock.now().toISOString(),
      tenant_db: c.reach,
      gate: { passed: liveGate.passed, checks: liveGate.checks },
      reconciliation: rec ? { totals: rec.totals, tables: rec.tables } : null,
    },
    production_cutover: {
      allowed: false,
      reason: master
        ? 'the master tenant stays on the shared database'
        : 'a snapshot never cuts over: approve the fingerprint, then POST tenant-db/cutover-production',
    },
    commands,
  };
}

/**
 * GET tenant-db/readiness-snapshot/verify?fingerprint=: `{matched, decision, operator_action,
 * production_cutover_allowed: false}`. Decisions in order: master_tenant, evidence_changed (not the
 * current fingerprint), gate_failing, ready_for_approval.
 * @param fingerprint 64 hex digits (validated by the route)
 * @throws NotFound (404) for an unknown tenant
 */
export async function verifyFingerprint(deps: EvidenceDeps, ref: string, fingerprint: string) {
  const c = await collect(deps, ref);
  const matched = c.fingerprint === fingerprint.toLowerCase();
  const failing = c.gate.checks.filter((x) => !x.ok).map((x) => x.name);
  let decision: VerifyDecision;
  let operator_action: string;
  if (c.tenant.is_master) {
    decision = 'master_tenant';
    operator_action = 'None: the master tenant stays on the shared database (shared_db_master).';
  } else if (!matched) {
    decision = 'evidence_changed';
    operator_action = 'Read GET tenant-db/readiness-snapshot again and review the new evidence and its fingerprint.';
  } else if (failing.length) {
    decision = 'gate_failing';
    operator_action = `Fix the failing gate checks (${failing.join(', ')}), then take a new snapshot.`;
  } else {
    decision = 'ready_for_approval';
    operator_action = 'POST tenant-db/approve-production with this fingerprint and a maintenance window.';
  }
  return { matched, decision, operator_action, production_cutover_allowed: false as const };
}
