import type { Knex } from 'knex';
import type { Queue } from 'bullmq';
import { InvalidTransition } from '../../errors.js';
import { addOrUnavailable, safeJobId } from '../../../jobs/queues.js';
import { readTenantDb, STEPS, viewOf, type RunKind, type TenantDbView } from './state.js';

/**
 * Runs of a tenant database (issue 14 item 2): each run, dry-run and rollback is a tenant_db_runs
 * row and a job on queue `tenant-db` with job id `tdb-run-<id>` and data `{runId}` only. At most one
 * unfinished (queued or running) run per tenant: a partial unique index.
 */
export const QUEUE = 'tenant-db' as const;
export const JOB = 'tenant-db-run';

/** Attempts of a run's job: connection refused or timeout is retried (backoff from 2 s). */
export const RUN_ATTEMPTS = 5;
export const RUN_BACKOFF_MS = 2000;

/** The job id of a run. */
export const runJobId = (runId: number): string => safeJobId('tdb-run', runId);

/** Job data: the run id only (DESIGN.md §3: never a secret). */
export interface TenantDbJobData {
  runId: number;
}

/** A tenant_db_runs row, as answered by the API. */
export interface TenantDbRun {
  id: number;
  tenant_id: number;
  kind: RunKind;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  progress: Record<string, unknown> | null;
  requested_by: number | null;
  result: Record<string, unknown> | null;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** Columns of a run answered by the API (the checkpoint is internal). */
export const RUN_COLUMNS = [
  'id',
  'tenant_id',
  'kind',
  'status',
  'progress',
  'requested_by',
  'result',
  'error',
  'created_at',
  'started_at',
  'finished_at',
] as const;

/** What a request to start a run needs. */
export interface StartRunDeps {
  knex: Knex;
  queue: Queue;
  enqueueTimeoutMs?: number;
}

/**
 * Inserts a run and enqueues its job; when Redis does not take the job the run row is removed.
 * The status check and the insert share a transaction holding the tenant_databases row, and the
 * partial unique index refuses a second unfinished run.
 * @param check extra checks inside the transaction (e.g. the dry-run condition of data-copy/run)
 * @returns the queued run
 * @throws InvalidTransition (422) when the step is not allowed from the current status or another
 *   run is unfinished; QueueUnavailableError (503 QUEUE_UNAVAILABLE) when Redis does not take the job
 */
export async function startRun(
  deps: StartRunDeps,
  tenantId: number,
  kind: RunKind,
  requestedBy: number | null,
  prepare?: (trx: Knex.Transaction) => Promise<void>,
): Promise<TenantDbRun> {
  const run = await deps.knex.transaction(async (trx) => {
    await trx('tenants').where({ id: tenantId }).forUpdate().first('id');
    const db = await readTenantDb(trx, tenantId, { forUpdate: true });
    const step = STEPS[kind];
    if (!step.from.includes(db.status)) throw new InvalidTransition(db.status, kind, step.from);
    const busy = await trx('tenant_db_runs').where({ tenant_id: tenantId }).whereIn('status', ['queued', 'running']);
    if (busy.length) throw new InvalidTransition(`${db.status} with run ${busy[0].id} unfinished`, kind);
    if (prepare) await prepare(trx);
    const [row] = (await trx('tenant_db_runs')
      .insert({ tenant_id: tenantId, kind, status: 'queued', requested_by: requestedBy })
      .returning([...RUN_COLUMNS])) as TenantDbRun[];
    return row;
  });
  try {
    await addOrUnavailable<TenantDbJobData>(
      deps.queue,
      JOB,
      { runId: run.id },
      {
        jobId: runJobId(run.id),
        attempts: RUN_ATTEMPTS,
        backoff: { type: 'exponential', delay: RUN_BACKOFF_MS },
        removeOnComplete: { age: 7 * 24 * 3600, count: 1000 },
        removeOnFail: { age: 30 * 24 * 3600 },
      },
      deps.enqueueTimeoutMs,
    );
  } catch (err) {
    await deps.knex('tenant_db_runs').where({ id: run.id }).delete();
    throw err;
  }
  return run;
}

/**
 * A tenant's database state without secrets and its last 20 runs (newest first), for issue 13's
 * `GET .../provisioning` (issue 14 item 2).
 * @param knex the shared database
 */
export async function tenantDatabaseSummary(
  knex: Knex,
  tenantId: number,
): Promise<{ database: TenantDbView; runs: TenantDbRun[] }> {
  const database = viewOf(await readTenantDb(knex, tenantId));
  const runs = (await knex('tenant_db_runs')
    .where({ tenant_id: tenantId })
    .orderBy('id', 'desc')
    .limit(20)
    .select([...RUN_COLUMNS])) as TenantDbRun[];
  return { database, runs };
}
