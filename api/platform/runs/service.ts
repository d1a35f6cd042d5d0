import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import { DemoGuardBlocked, NotFound, ValidationFailed } from '../../errors.js';
import { recordPlatformAudit } from '../audit.js';
import { assertUnlocked } from '../readiness.js';
import { systemClock } from '../../../lib/clock.js';
import { resolvePlatformTenant, type PlatformTenantRow } from '../tenant-param.js';
import { platformActorOf } from '../tenants-routes.js';
import { resolveRuntime, type ResolvedRuntime } from '../../../jobs/provisioning/runtime.js';
import type { RunPlan, RunRequest, RunRow } from '../../../jobs/provisioning/steps.js';
import { enqueueRunFlow, flowJobIds, loadRun, stepsOf } from '../../../jobs/provisioning-run.js';
import { PHRASES } from './schemas.js';
import { livePlan, normalizeRequest, RefusedTransition, runPlanOf, zoneOf, type RunsConfig } from './request.js';

/**
 * Confirmed provisioning runs (issue 13 items 6-8): provision, change-apply, cleanup-old and resume.
 * Order of the checks: tenant (404), demo tenant (403 demo_guard_blocked), phrase (422), lock (422
 * provisioning_locked), fields and state rules (422); only then a run row and its flow. One open run
 * per tenant (partial unique index): the same request again answers that run, another 422.
 */

/** The runtime and settings of the runs from the app's configuration. */
export function runsDeps(ctx: AppContext): { rt: ResolvedRuntime; cfg: RunsConfig; backoffMs?: number } {
  const p = ctx.deps.config.provisioning ?? {};
  return {
    rt: resolveRuntime(ctx.deps.knex, ctx.deps.config.appKey, p.runtime),
    cfg: { mailDomain: p.mailDomain, dnsTarget: p.dnsTarget },
    backoffMs: p.backoffMs,
  };
}

/** A run as the API shows it (no secret is ever in a run). */
export function runView(r: RunRow & Record<string, unknown>) {
  return {
    id: Number(r.id),
    tenant_id: r.tenant_id,
    kind: r.kind,
    status: r.status,
    phrase: r.phrase,
    request: r.request,
    plan: r.plan,
    steps: r.steps,
    resumes: r.resumes,
    created_by: r.created_by ?? null,
    error: r.error ?? null,
    job_ids: flowJobIds(Number(r.id), r.resumes),
    created_at: r.created_at,
    updated_at: r.updated_at,
    finished_at: r.finished_at ?? null,
  };
}

/** JSON with sorted keys (jsonb does not keep key order): "the same request" compares these. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** Runs for a demo-mode tenant: 403 demo_guard_blocked (the guard's action `provisioning.run`). */
export function assertNotDemo(tenant: { demo_mode: boolean }): void {
  if (tenant.demo_mode) throw new DemoGuardBlocked('provisioning.run');
}

/** Refuses a wrong or missing phrase (422 `errors.confirm_phrase`). */
function assertPhrase(given: unknown, phrase: string): void {
  if (given !== phrase) throw new ValidationFailed({ confirm_phrase: [`Type exactly: ${phrase}`] });
}

/** The tenant's active subscriber domain, if any. */
export async function activeDomain(knex: Knex, tenantId: number) {
  return knex('tenant_subscriber_domains').where({ tenant_id: tenantId, status: 'active' }).first();
}

/**
 * Why a domain row may not be cleaned up (item 7), null when it may: it must be `replaced` by an
 * `active`, verified domain, not the tenant's primary_domain, and DNS-managed (records we created).
 */
export async function cleanupRefusal(knex: Knex, tenant: PlatformTenantRow, row: Record<string, unknown> | undefined) {
  if (!row) return 'The tenant has no such subscriber domain.';
  if (row.status !== 'replaced') return `The domain is ${String(row.status)}; only a replaced domain is cleaned up.`;
  const by = row.replaced_by_id
    ? await knex('tenant_subscriber_domains').where({ id: row.replaced_by_id }).first()
    : undefined;
  if (!by || by.status !== 'active' || !by.verified_at) return 'Its replacement is not active and verified.';
  if (tenant.primary_domain && String(row.domain).toLowerCase() === tenant.primary_domain.toLowerCase())
    return "The domain is the tenant's primary domain.";
  if (!((row.dns_record_ids as unknown[]) ?? []).length) return 'The domain is not DNS-managed (no records of ours).';
  return null;
}

/** Kind-specific request and plan of a new run, after the state rules. */
async function prepare(
  ctx: AppContext,
  tenant: PlatformTenantRow,
  kind: RunRow['kind'],
  body: Record<string, unknown>,
): Promise<{ request: Record<string, unknown>; plan: RunPlan }> {
  const knex = ctx.deps.knex;
  const { rt, cfg } = runsDeps(ctx);
  if (kind === 'cleanup') {
    const domain = String(body.domain).toLowerCase();
    const row = await knex('tenant_subscriber_domains')
      .where({ tenant_id: tenant.id })
      .whereRaw('lower(domain) = ?', [domain])
      .whereNot({ status: 'removed' })
      .orderBy('id', 'desc')
      .first();
    const refusal = await cleanupRefusal(knex, tenant, row);
    if (refusal) throw new RefusedTransition(`Cannot clean up ${domain}: ${refusal}`);
    return { request: { domain }, plan: { cleanup: { domain_id: Number(row.id), domain } } };
  }
  let fields: Record<string, unknown> = { ...body };
  delete fields.confirm_phrase;
  if (body.draft_id !== undefined) {
    const draft = await knex('provisioning_drafts').where({ id: body.draft_id, tenant_id: tenant.id }).first();
    if (!draft) throw new ValidationFailed({ draft_id: ['No such draft of this tenant.'] });
    delete fields.draft_id;
    fields = { ...(draft.request as Record<string, unknown>), ...fields };
  }
  const { dns, zone } = await zoneOf(rt);
  const request = normalizeRequest(tenant, fields as Partial<RunRequest>, zone, cfg);
  const plan = runPlanOf(tenant, request, cfg, kind === 'provision');
  const name = plan.record!.name;
  const active = await activeDomain(knex, tenant.id);
  if (kind === 'provision' && active && String(active.domain).toLowerCase() !== name)
    throw new RefusedTransition(`${active.domain} is active: change the subscriber domain with change-apply.`);
  if (kind === 'change' && !active)
    throw new RefusedTransition('No active subscriber domain to change: provision one.');
  if (kind === 'change' && String(active.domain).toLowerCase() === name)
    throw new RefusedTransition(`${name} is already the active subscriber domain.`);
  const live = await livePlan(knex, rt, dns, tenant, plan);
  if (live.record.action === 'conflict') throw new ValidationFailed({ domain: live.record.conflicts });
  if (live.mailbox?.action === 'conflict') throw new ValidationFailed({ mailbox_local_part: [live.mailbox.reason!] });
  return { request: { ...request }, plan };
}

/**
 * Starts a run (provision, change or cleanup) or answers the tenant's open run when it is the same
 * request.
 * @returns the run and whether it already existed
 * @throws NotFound, DemoGuardBlocked, ValidationFailed, ProvisioningLocked, RefusedTransition,
 *   QueueUnavailableError (503; the run is then marked failed)
 */
export async function startRun(ctx: AppContext, ref: string, kind: RunRow['kind'], body: Record<string, unknown>) {
  const knex = ctx.deps.knex;
  const tenant = await resolvePlatformTenant(knex, ref);
  assertNotDemo(tenant);
  const phrase = PHRASES[kind];
  assertPhrase(body.confirm_phrase, phrase);
  const { rt, backoffMs } = runsDeps(ctx);
  await assertUnlocked(rt.source);
  const open = await openRun(knex, tenant.id);
  if (open) return sameOrRefuse(open, kind, body);
  const { request, plan } = await prepare(ctx, tenant, kind, body);
  const actor = platformActorOf(ctx);
  let run: RunRow;
  try {
    run = await knex.transaction(async (trx) => {
      const [row] = await trx('provisioning_runs')
        .insert({
          tenant_id: tenant.id,
          kind,
          phrase,
          request: JSON.stringify(request),
          plan: JSON.stringify(plan),
          steps: JSON.stringify(Object.fromEntries(stepsOf(kind).map((s) => [s, { status: 'pending' }]))),
          created_by: actor.userId,
        })
        .returning('*');
      await recordPlatformAudit(trx, {
        userId: actor.userId,
        action: 'platform.provisioning_run_start',
        subject: { type: 'provisioning_run', id: Number(row.id) },
        after: { tenant: tenant.slug, kind, request },
        ip: actor.ip,
      });
      return { ...row, id: Number(row.id) } as RunRow;
    });
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
    const other = await openRun(knex, tenant.id);
    if (!other) throw err;
    return sameOrRefuse(other, kind, { ...body, ...request });
  }
  await enqueueOrFail(ctx, run, backoffMs);
  return { run: runView((await loadRun(knex, run.id)) as RunRow & Record<string, unknown>), existed: false };
}

/** The tenant's open (queued or running) run. */
async function openRun(knex: Knex, tenantId: number) {
  const r = await knex('provisioning_runs')
    .where({ tenant_id: tenantId })
    .whereIn('status', ['queued', 'running'])
    .first();
  return r ? ({ ...r, id: Number(r.id) } as RunRow & Record<string, unknown>) : undefined;
}

/** The open run when the request is the same (its fields as given or as defaulted), else 422. */
function sameOrRefuse(open: RunRow & Record<string, unknown>, kind: RunRow['kind'], body: Record<string, unknown>) {
  const given = { ...body };
  delete given.confirm_phrase;
  delete given.draft_id;
  const saved = open.request;
  const same =
    open.kind === kind &&
    Object.entries(given).every(
      ([k, v]) => canonical(saved[k]) === canonical(typeof v === 'string' ? v.toLowerCase() : v),
    );
  if (!same) throw new RefusedTransition(`Run ${open.id} (${open.kind}) of this tenant is still ${open.status}.`);
  return { run: runView(open), existed: true };
}

/** Adds the run's flow; when Redis does not take it, the run is failed and the 503 rethrown. */
async function enqueueOrFail(ctx: AppContext, run: RunRow, backoffMs?: number, steps = stepsOf(run.kind)) {
  try {
    await enqueueRunFlow(ctx.deps.queues, run, steps, backoffMs);
  } catch (err) {
    await ctx.deps
      .knex('provisioning_runs')
      .where({ id: run.id })
      .update({ status: 'failed', error: 'The run could not be queued.', finished_at: systemClock.now() });
    throw err;
  }
}

/**
 * POST .../runs/{run}/resume (decision): a partial or failed run again, with its own phrase; only its
 * unfinished steps run (a new flow, ids `-r{n}`).
 * @throws NotFound (not this tenant's run), DemoGuardBlocked, ValidationFailed (phrase),
 *   ProvisioningLocked, RefusedTransition (not partial or failed; another run open)
 */
export async function resumeRun(ctx: AppContext, ref: string, runId: number, body: Record<string, unknown>) {
  const knex = ctx.deps.knex;
  const tenant = await resolvePlatformTenant(knex, ref);
  const run = await loadRun(knex, runId);
  if (!run || run.tenant_id !== tenant.id) throw new NotFound('Run');
  assertNotDemo(tenant);
  assertPhrase(body.confirm_phrase, run.phrase);
  const { rt, backoffMs } = runsDeps(ctx);
  await assertUnlocked(rt.source);
  if (run.status !== 'partial' && run.status !== 'failed')
    throw new RefusedTransition(`Run ${run.id} is ${run.status}; only a partial or failed run is resumed.`);
  const todo = stepsOf(run.kind).filter((s) => run.steps[s]?.status !== 'succeeded');
  const steps = { ...run.steps };
  for (const s of todo) steps[s] = { status: 'pending' };
  const actor = platformActorOf(ctx);
  let resumed: RunRow;
  try {
    resumed = await knex.transaction(async (trx) => {
      const [row] = await trx('provisioning_runs')
        .where({ id: run.id })
        .whereIn('status', ['partial', 'failed'])
        .update({
          status: 'queued',
          resumes: run.resumes + 1,
          steps: JSON.stringify(steps),
          error: null,
          finished_at: null,
        })
        .returning('*');
      if (!row) throw new RefusedTransition(`Run ${run.id} changed meanwhile.`);
      await recordPlatformAudit(trx, {
        userId: actor.userId,
        action: 'platform.provisioning_run_resume',
        subject: { type: 'provisioning_run', id: run.id },
        after: { tenant: tenant.slug, kind: run.kind, steps: todo },
        ip: actor.ip,
      });
      return { ...row, id: Number(row.id) } as RunRow;
    });
  } catch (err) {
    if ((err as { code?: string }).code === '23505') throw new RefusedTransition('Another run of this tenant is open.');
    throw err;
  }
  await enqueueOrFail(ctx, resumed, backoffMs, todo);
  return runView((await loadRun(knex, run.id)) as RunRow & Record<string, unknown>);
}
