import { UnrecoverableError, type JobsOptions, type Queue } from 'bullmq';
import type { Knex } from 'knex';
import { BillingRun, Tenant } from '../db/models/index.js';
import { TenantScope } from '../db/tenant-scope.js';
import { tenantScopeOf } from '../db/tenant-routing.js';
import { recordAudit } from '../api/audit-logs/service.js';
import { BillingAborted, customersToConsider, runBilling, type BillingCounts } from '../api/invoices/billing.js';
import { dateIn, isValidTimeZone } from '../lib/clock.js';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike, type JobSchedulerDef } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { SCAN_BATCH_SIZE, reportProgress } from './platform-scan.js';

/**
 * Job `billing-cycle` (issue 8 item 4): subscription invoices, one run per tenant per local day.
 * - The hourly scheduler produces `billing-cycle-sweep`, which enqueues one `billing-cycle-tenant`
 *   job per tenant for the tenant's local date (tenants.timezone) at that moment, with the fixed id
 *   `billing-cycle-t<tenant>-<YYYYMMDD>` and data {tenant_id, as_of}: 24 sweeps a day give one job
 *   per tenant per local day (a tenant's day starts at its own midnight). Platform job: the one
 *   cross-tenant read is the list of tenants and their zones (like invoice-overdue).
 * - `POST /api/invoices/billing-runs` writes a billing_runs row and enqueues `billing-run` with the id
 *   `billing-run-<run id>` and data {run_id, tenant_id}.
 * - Both run api/invoices/billing.ts runBilling for the tenant and day, recorded in billing_runs
 *   (the scheduled job creates its row, keyed by its job id, so a retry or a second delivery reuses
 *   it): status queued -> running -> completed (failed between attempts), the counts after every
 *   batch, progress per batch and log lines naming the tenant, an audit entry
 *   `invoices.billing_run` when it completes. A completed run is not run again.
 * Job data carries ids and the day only. "Now" comes from the job clock (jobs/deps.ts).
 */
export const QUEUE = 'billing-cycle' as const;
/** Job name of the scheduler's hourly run (enqueues the per-tenant jobs). */
export const SWEEP_JOB = 'billing-cycle-sweep';
/** Job name of a tenant's scheduled daily run. */
export const TENANT_JOB = 'billing-cycle-tenant';
/** Job name of a run requested through the API. */
export const RUN_JOB = 'billing-run';

/** Job data: empty for the sweep; {tenant_id, as_of} for a scheduled run; {run_id, tenant_id} for a requested one. */
export interface BillingCycleData {
  tenant_id?: number;
  /** 'YYYY-MM-DD', the tenant's local date when the sweep ran. */
  as_of?: string;
  run_id?: number;
}

/** What the sweep returns. */
export interface BillingSweepResult {
  kind: 'sweep';
  /** The sweep's moment (ISO 8601). */
  at: string;
  /** Per-tenant jobs handed to the queue (ids already there are deduplicated by BullMQ). */
  enqueued: number;
  /** Tenants left out because their time zone is unknown here. */
  skipped: number;
}

/** What a tenant's run returns. */
export interface BillingRunResult extends Omit<BillingCounts, 'considered'> {
  kind: 'run';
  run_id: number | null;
  tenant_id: number;
  as_of: string | null;
  /** billed: this attempt ran; done: the run had completed before; gone: no such run or tenant. */
  outcome: 'billed' | 'done' | 'gone';
}

/** Options of the per-tenant jobs: retried with backoff (a retry only makes what is missing). */
export const runJobOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 5 };

/**
 * Hourly at minute 15 (UTC). No run at worker start: the next hour's sweep catches up after downtime
 * (a day's job id is the same all day), and a worker started by a test does not bill every tenant.
 */
export const scheduler: JobSchedulerDef = {
  id: 'billing-cycle-hourly',
  repeat: { pattern: '15 * * * *', tz: 'UTC' },
  template: {
    name: SWEEP_JOB,
    data: {},
    opts: {
      attempts: 3,
      backoff: DEFAULT_JOB_OPTIONS.backoff,
      removeOnComplete: DEFAULT_JOB_OPTIONS.removeOnComplete,
      removeOnFail: DEFAULT_JOB_OPTIONS.removeOnFail,
    },
  },
};

/** Fixed id of a tenant's scheduled run for a local day: `billing-cycle-t<tenant>-<YYYYMMDD>`. */
export function tenantJobId(tenantId: number, asOf: string): string {
  return safeJobId(QUEUE, `t${tenantId}`, asOf.replaceAll('-', ''));
}

/** Fixed id of a requested run: `billing-run-<run id>`. */
export function runJobId(runId: number): string {
  return safeJobId(RUN_JOB, runId);
}

/**
 * Enqueues a requested run for a request handler.
 * @param queue the billing-cycle producer queue (Queues.get(QUEUE))
 * @returns the job id
 * @throws QueueUnavailableError (503 QUEUE_UNAVAILABLE) when Redis does not take it in time
 */
export async function enqueueRun(queue: Queue, run: { id: number; tenant_id: number }): Promise<string> {
  const data: BillingCycleData = { run_id: run.id, tenant_id: run.tenant_id };
  const job = await addOrUnavailable(queue, RUN_JOB, data, { ...runJobOptions, jobId: runJobId(run.id) });
  return job.id!;
}

/**
 * BullMQ processor of the queue: the sweep for empty data, else one tenant's run.
 * @param signal checked between batches (the run throws BillingAborted and is retried)
 * @throws UnrecoverableError for a sweep in a worker without queue producers; the run's errors
 *   (retried with backoff)
 */
export async function process(
  job: JobLike<BillingCycleData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<BillingSweepResult | BillingRunResult> {
  const data = job.data ?? {};
  if (data.run_id && data.tenant_id) return requestedRun(job, data.run_id, data.tenant_id, signal);
  if (data.tenant_id && data.as_of) return scheduledRun(job, data.tenant_id, data.as_of, signal);
  return sweep(job);
}

async function sweep(job: JobLike<BillingCycleData>): Promise<BillingSweepResult> {
  const { knex, queues } = jobDeps();
  if (!queues) throw new UnrecoverableError('billing-cycle: the worker has no queue producers (JobDeps.queues)');
  const at = jobClock().now();
  // Cross-tenant on purpose (platform job, see the file comment): ids and zones only.
  let lastId = 0;
  let enqueued = 0;
  let skipped = 0;
  for (;;) {
    const rows: { id: number; timezone: string }[] = await knex('tenants')
      .where('id', '>', lastId)
      .orderBy('id')
      .limit(SCAN_BATCH_SIZE)
      .select('id', 'timezone');
    if (!rows.length) break;
    const jobs = [];
    for (const r of rows) {
      if (!isValidTimeZone(r.timezone)) {
        skipped += 1;
        await job.log(`tenant ${r.id}: time zone ${JSON.stringify(r.timezone)} is unknown here, not billed this hour`);
        continue;
      }
      const asOf = dateIn(r.timezone, at);
      const data: BillingCycleData = { tenant_id: r.id, as_of: asOf };
      jobs.push({ name: TENANT_JOB, data, opts: { ...runJobOptions, jobId: tenantJobId(r.id, asOf) } });
    }
    if (jobs.length) await queues.get(QUEUE).addBulk(jobs);
    enqueued += jobs.length;
    lastId = rows[rows.length - 1].id;
    if (rows.length < SCAN_BATCH_SIZE) break;
  }
  await job.log(`${at.toISOString()}: ${enqueued} tenant run(s) for their local day handed to the queue`);
  await job.updateProgress(100);
  return { kind: 'sweep', at: at.toISOString(), enqueued, skipped };
}

const gone = (tenantId: number, runId: number | null, asOf: string | null): BillingRunResult => ({
  kind: 'run',
  run_id: runId,
  tenant_id: tenantId,
  as_of: asOf,
  outcome: 'gone',
  created: 0,
  existing: 0,
  skipped: 0,
});

async function scheduledRun(job: JobLike<BillingCycleData>, tenantId: number, asOf: string, signal?: AbortSignal) {
  const { knex } = jobDeps();
  const tenant = await Tenant.query(knex).findById(tenantId).select('id', 'slug');
  if (!tenant) {
    await job.log(`tenant ${tenantId}: gone, nothing billed`);
    return gone(tenantId, null, asOf);
  }
  // issue 15: the tenant's rows where its db_mode says (a cut-over tenant's database), writes gated
  const scope = await tenantScopeOf(knex, tenantId, jobDeps().appKey, 'job');
  const jobId = tenantJobId(tenantId, asOf);
  await scope
    .knex('billing_runs')
    .insert({ tenant_id: tenantId, as_of: asOf, trigger: 'schedule', status: 'queued', job_id: jobId })
    .onConflict(['tenant_id', 'job_id'])
    .ignore();
  const run = (await scope.query(BillingRun).where({ job_id: jobId }).first())!;
  return execute(job, scope.knex as Knex, run, tenant.slug, signal);
}

async function requestedRun(job: JobLike<BillingCycleData>, runId: number, tenantId: number, signal?: AbortSignal) {
  const { knex } = jobDeps();
  const scope = await tenantScopeOf(knex, tenantId, jobDeps().appKey, 'job');
  const run = await scope.query(BillingRun).findById(runId);
  const tenant = run && (await Tenant.query(knex).findById(tenantId).select('slug'));
  if (!run || !tenant) {
    // the request's enqueue timed out and its row was removed, or the tenant is gone
    await job.log(`tenant ${tenantId}: billing run ${runId} does not exist, nothing billed`);
    return gone(tenantId, runId, null);
  }
  return execute(job, scope.knex as Knex, run, tenant.slug, signal);
}

/** Runs (or reports the finished) billing run `run` and records its outcome. */
async function execute(
  job: JobLike<BillingCycleData>,
  knex: Knex,
  run: BillingRun,
  slug: string,
  signal?: AbortSignal,
): Promise<BillingRunResult> {
  const who = `tenant ${run.tenant_id} (${slug})`;
  const result = (outcome: BillingRunResult['outcome'], c: Omit<BillingCounts, 'considered'>): BillingRunResult => ({
    kind: 'run',
    run_id: run.id,
    tenant_id: run.tenant_id,
    as_of: run.as_of,
    outcome,
    created: c.created,
    existing: c.existing,
    skipped: c.skipped,
  });
  if (run.status === 'completed') {
    await job.log(`${who}: billing run ${run.id} as of ${run.as_of} completed before, nothing to do`);
    await job.updateProgress(100);
    return result('done', run);
  }
  const scope = new TenantScope(knex, run.tenant_id); // knex: the routed knex of the caller
  const clock = jobClock();
  const rows = () => scope.table('billing_runs').where({ id: run.id });
  await rows().update({ status: 'running', started_at: clock.now(), finished_at: null, error: null });
  const total = await customersToConsider(knex, run.tenant_id);
  await job.log(
    `${who}: billing as of ${run.as_of} (${run.trigger} run ${run.id}), ${total} active or suspended customer(s)`,
  );
  let counts: BillingCounts;
  try {
    counts = await runBilling(knex, {
      tenantId: run.tenant_id,
      sharedKnex: jobDeps().knex,
      asOf: run.as_of,
      runId: run.id,
      now: clock.now(),
      signal,
      onBatch: (c) => reportProgress(job, c.considered, total),
    });
  } catch (err) {
    const stopped = err instanceof BillingAborted;
    const error = stopped
      ? 'Stopped by a worker shutdown; the job runs it again.'
      : 'The billing run failed; the job retries it (details in its bull-board log).';
    await rows().update({ status: 'failed', error, updated_at: clock.now() });
    await job.log(`${who}: ${stopped ? 'stopped' : 'failed'}: ${(err as Error).message}`);
    throw err;
  }
  const finished = clock.now();
  await knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await s.table('billing_runs').where({ id: run.id }).update({
      status: 'completed',
      created: counts.created,
      existing: counts.existing,
      skipped: counts.skipped,
      finished_at: finished,
      updated_at: finished,
    });
    await recordAudit(s, {
      userId: run.requested_by,
      action: 'invoices.billing_run',
      subject: { type: 'billing_runs', id: run.id },
      after: {
        as_of: run.as_of,
        trigger: run.trigger,
        created: counts.created,
        existing: counts.existing,
        skipped: counts.skipped,
      },
    });
  });
  await job.log(
    `${who}: ${counts.created} invoice(s) created, ${counts.existing} already there, ${counts.skipped} customer(s) not billable`,
  );
  await job.updateProgress(100);
  return result('billed', counts);
}
