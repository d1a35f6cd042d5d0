import type { Queue } from 'bullmq';
import type { TenantScope } from '../../db/tenant-scope.js';
import { BillingRun } from '../../db/models/index.js';
import { todayIn, type Clock } from '../../lib/clock.js';
import { enqueueRun, runJobId } from '../../jobs/billing-cycle.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';
import { settingsOf } from '../settings/service.js';
import type { Actor, TenantFacts } from './service.js';
import { EARLIEST_AS_OF } from './schemas.js';

/**
 * Billing runs of the admin API (issue 8 item 4): `POST /api/invoices/billing-runs` asks the
 * billing-cycle job to bill the tenant as of a day; `GET /api/invoices/billing-runs/{id}` shows the
 * run's status and counts. The work itself is jobs/billing-cycle.ts and api/invoices/billing.ts.
 */

/** Row -> read shape (api/invoices/schemas.ts billingRunRead). */
function runShape(r: BillingRun) {
  return {
    id: r.id,
    as_of: r.as_of,
    trigger: r.trigger,
    status: r.status,
    created: r.created,
    existing: r.existing,
    skipped: r.skipped,
    error: r.error,
    job_id: r.job_id,
    requested_by: r.requested_by,
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/**
 * GET /api/invoices/billing-runs/{id}: the run's read shape.
 * @throws NotFound when the id is not a billing run of the scope's tenant
 */
export async function billingRunById(scope: TenantScope, id: number) {
  const row = await scope.query(BillingRun).findById(id);
  if (!row) throw new NotFound('Billing run');
  return runShape(row);
}

/**
 * POST /api/invoices/billing-runs: writes a queued run (trigger manual) and enqueues its job
 * (`billing-run-<id>`). When Redis does not take the job the row is deleted again, so a 503 leaves
 * nothing behind. The run is audited by the job when it completes (`invoices.billing_run`).
 * @param queue the billing-cycle producer queue
 * @param tenant the tenant's zone (today, the default as_of)
 * @param asOf 'YYYY-MM-DD' or undefined for today in the tenant's zone
 * @param clock "today" (default the system clock)
 * @returns the run's read shape (status queued)
 * @throws ValidationFailed (422) for an as_of after today or before 2000-01-01; QueueUnavailableError
 *   (503 QUEUE_UNAVAILABLE) when Redis does not take the job
 */
export async function requestBillingRun(
  scope: TenantScope,
  queue: Queue,
  actor: Actor,
  tenant: TenantFacts,
  asOf: string | undefined,
  clock?: Clock,
) {
  const today = todayIn(settingsOf(tenant).timezone, clock);
  const day = asOf ?? today;
  if (day > today)
    throw new ValidationFailed({ as_of: ["The as_of day must not be after today in the tenant's zone."] });
  if (day < EARLIEST_AS_OF)
    throw new ValidationFailed({ as_of: [`The as_of day must not be before ${EARLIEST_AS_OF}.`] });
  const run = await scope.knex.transaction(async (trx) => {
    const row = await scope.create(
      BillingRun,
      { as_of: day, trigger: 'manual', status: 'queued', requested_by: actor.userId },
      trx,
    );
    return scope.query(BillingRun, { trx }).patchAndFetchById(row.id, { job_id: runJobId(row.id) });
  });
  try {
    await enqueueRun(queue, run);
  } catch (err) {
    await scope.query(BillingRun).deleteById(run.id);
    throw err;
  }
  return runShape(run);
}
