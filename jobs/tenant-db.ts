import { UnrecoverableError, type Job } from 'bullmq';
import type { Knex } from 'knex';
import { jobClock, jobDeps } from './deps.js';
import { releaseTenantPools, tenantPools } from '../db/tenant-pools.js';
import { RUN_COLUMNS, type TenantDbJobData, type TenantDbRun } from '../api/platform/tenant-db/runs.js';
import { readTenantDb, STEPS, type RunKind } from '../api/platform/tenant-db/state.js';
import {
  isRetryable,
  tenantConnection,
  tenantDbServer,
  TenantDbPermanentError,
} from '../api/platform/tenant-db/admin.js';
import { executePilot, executePilotRollback } from '../api/platform/tenant-db/pilot.js';
import { executeSchemaRun } from '../api/platform/tenant-db/schema.js';
import { executeCopy, executeCopyRollback, executeDryRun, type CopyReporter } from '../api/platform/tenant-db/copy.js';
import { revokeTenantPilotTokens } from '../api/platform/tenant-db/pilot-tokens.js';
import { executeDemoSeed, executeDemoSeedRollback } from '../api/platform/tenant-db/demo-seed.js';
import { executeDualWrite, executeDualWriteRollback } from '../api/platform/tenant-db/dual-write.js';
import { executeMove } from '../api/platform/tenant-db/cutover.js';

/**
 * Job `tenant-db-run` on queue `tenant-db` (issue 14 item 2): one tenant_db_runs row (data `{runId}`,
 * job id `tdb-run-<id>`). The processor re-reads the run and the tenant database, checks the step is
 * still allowed, does the work, and records the result. Connection refused or timeout is retried
 * (5 attempts, backoff from 2 s); anything else (bad password, missing privilege, unexpected object,
 * collision) fails the run for good with its reason (UnrecoverableError), the status kept.
 */
export { QUEUE, JOB } from '../api/platform/tenant-db/runs.js';

/** Test knob: a hook the copy calls after each batch (a test fails the run after batch 3). */
let afterBatch: CopyReporter['afterBatch'];
/** Sets (or clears) the after-batch hook of this process (tests only). */
export function configureTenantDbJob(o: { afterBatch?: CopyReporter['afterBatch'] }): void {
  afterBatch = o.afterBatch;
}

/** Runs one step; returns its result for the run row. */
async function runStep(knex: Knex, appKey: Buffer, run: TenantDbRun, job: Job): Promise<Record<string, unknown>> {
  const tenantId = run.tenant_id;
  const pools = tenantPools();
  const reporter: CopyReporter = {
    async progress(p) {
      await job.updateProgress(p);
      await knex('tenant_db_runs')
        .where({ id: run.id })
        .update({ progress: JSON.stringify(p) });
    },
    async log(line) {
      await job.log(line);
    },
    async checkpoint(c) {
      await knex('tenant_db_runs')
        .where({ id: run.id })
        .update({ checkpoint: JSON.stringify(c) });
    },
    afterBatch,
  };
  const kind: RunKind = run.kind;
  // issue 15 item 8: both rollbacks of issue 14 revoke every pilot token of the tenant (after the work)
  const withPilotTokensRevoked = async (result: Record<string, unknown>) => ({
    ...result,
    pilot_tokens_revoked: await revokeTenantPilotTokens(knex, tenantId, jobClock().now()),
  });
  if (kind === 'pilot_run' || kind === 'pilot_rollback') {
    const server = await tenantDbServer(knex, appKey);
    const result =
      kind === 'pilot_run'
        ? await executePilot(knex, appKey, server, tenantId)
        : await withPilotTokensRevoked(
            await executePilotRollback(knex, server, tenantId, () => releaseTenantPools(tenantId)),
          );
    // names, OIDs and what was dropped or kept: no secret (the password is only in its sealed column)
    await reporter.log(`${kind}: ${JSON.stringify(result)}`);
    return result;
  }
  const row = await readTenantDb(knex, tenantId);
  const tenantKnex = pools.get(tenantId, tenantConnection(row, appKey));
  if (kind === 'schema_run') return executeSchemaRun(knex, tenantKnex, tenantId, reporter.log);
  const checkpoint = (
    (await knex('tenant_db_runs').where({ id: run.id }).first('checkpoint')) as {
      checkpoint: Record<string, number> | null;
    }
  ).checkpoint;
  if (kind === 'copy_dry_run') return executeDryRun(knex, tenantKnex, tenantId, reporter);
  if (kind === 'copy_run') return executeCopy(knex, tenantKnex, tenantId, reporter, checkpoint ?? {});
  if (kind === 'copy_rollback')
    return withPilotTokensRevoked(await executeCopyRollback(knex, tenantKnex, tenantId, reporter));
  if (kind === 'demo_seed') return executeDemoSeed(knex, tenantKnex, tenantId, run.id, reporter);
  if (kind === 'demo_seed_rollback') return executeDemoSeedRollback(knex, tenantKnex, tenantId, reporter);
  if (kind === 'dual_write_run') return executeDualWrite(knex, tenantKnex, tenantId, run.id, reporter);
  if (kind === 'dual_write_rollback') return executeDualWriteRollback(knex, tenantKnex, tenantId, reporter);
  if (kind === 'cutover_production') return executeMove(knex, tenantKnex, run, 'to_tenant', reporter);
  if (kind === 'rollback_production') return executeMove(knex, tenantKnex, run, 'to_shared', reporter);
  // Issue 15's steps (demo seed, dual write, cutover and its rollback) are added here as they are built;
  // until then a run of such a kind fails for good instead of doing another step's work.
  throw new TenantDbPermanentError(`${kind} is not available yet`);
}

const reasonOf = (err: unknown) => String((err as Error)?.message ?? err).slice(0, 500);

/**
 * BullMQ processor of `tenant-db`.
 * @throws UnrecoverableError for a permanent failure; the original error for a retryable one
 */
export async function process(job: Job<TenantDbJobData>): Promise<{ runId: number; status: string }> {
  const { knex, appKey, logger } = jobDeps();
  if (!appKey) throw new UnrecoverableError('tenant-db needs the APP_KEY');
  const run = (await knex('tenant_db_runs')
    .where({ id: job.data.runId })
    .first([...RUN_COLUMNS])) as TenantDbRun | undefined;
  if (!run || run.status === 'succeeded' || run.status === 'failed') return { runId: job.data.runId, status: 'gone' };
  await knex('tenant_db_runs')
    .where({ id: run.id })
    .update({ status: 'running', started_at: run.started_at ?? knex.fn.now() });
  try {
    const db = await readTenantDb(knex, run.tenant_id);
    const step = STEPS[run.kind];
    if (!step.from.includes(db.status))
      throw new TenantDbPermanentError(`the tenant database is ${db.status}: ${run.kind} is not allowed`);
    const result = await runStep(knex, appKey, run, job);
    await knex('tenant_db_runs')
      .where({ id: run.id })
      .update({ status: 'succeeded', result: JSON.stringify(result), error: null, finished_at: knex.fn.now() });
    logger?.info({ runId: run.id, tenantId: run.tenant_id, kind: run.kind }, 'tenant-db run succeeded');
    return { runId: run.id, status: 'succeeded' };
  } catch (err) {
    const reason = reasonOf(err);
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const permanent = err instanceof TenantDbPermanentError || !isRetryable(err);
    logger?.warn({ runId: run.id, kind: run.kind, reason, permanent, last }, 'tenant-db run attempt failed');
    if (permanent || last) {
      const result = (err as { result?: unknown }).result;
      await knex('tenant_db_runs')
        .where({ id: run.id })
        .update({
          status: 'failed',
          error: reason,
          finished_at: knex.fn.now(),
          ...(result ? { result: JSON.stringify(result) } : {}),
        });
      throw new UnrecoverableError(reason);
    }
    await knex('tenant_db_runs')
      .where({ id: run.id })
      .update({ error: `attempt ${job.attemptsMade + 1}: ${reason}` });
    throw err;
  }
}

/**
 * The queue's failure hook (workers/registry.ts): a job that ended failed without the processor
 * recording it (its worker died too often: stalled) fails its run, so the tenant is not blocked by
 * an unfinished run forever. Attempts that will be retried change nothing.
 */
export async function recordRunFailure(knex: Knex, job: Job<TenantDbJobData>, err: Error): Promise<void> {
  if ((await job.getState()) !== 'failed' || !job.data?.runId) return;
  await knex('tenant_db_runs')
    .where({ id: job.data.runId })
    .whereIn('status', ['queued', 'running'])
    .update({ status: 'failed', error: reasonOf(err), finished_at: knex.fn.now() });
}
