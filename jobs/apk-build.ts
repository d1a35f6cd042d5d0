import type { Job, JobsOptions, Queue } from 'bullmq';
import type { Knex } from 'knex';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike } from './queues.js';
import { jobDeps } from './deps.js';
import { tenantScopeOf } from '../db/tenant-routing.js';
import { runBuild, type BuildOutcome } from './apk/processor.js';

/**
 * The `apk-build` queue (issue 12 item 6): one job per apk_builds row, id `apk-build-{id}`, data
 * `{build_id, tenant_id}` only, attempts 1 (a failed Gradle build is not retried). Run by the
 * sandboxed processor workers/sandboxed/apk-build.ts (its own process, APK_BUILD_CONCURRENCY per
 * worker process); the work itself is jobs/apk/processor.ts runBuild. Fairness between tenants:
 * FIFO, and at most one queued-or-running build per tenant (a partial unique index), so one tenant's
 * builds never hold the queue while another tenant waits: builds of busy tenants alternate.
 */
export const QUEUE = 'apk-build' as const;
/** Job name. */
export const JOB = 'apk-build';

/** Job data: ids only (DESIGN.md §3). */
export interface ApkBuildData {
  build_id: number;
  tenant_id: number;
}

/** Options of every build job: one attempt; failed jobs kept a week, completed ones trimmed. */
export const buildJobOptions: JobsOptions = {
  attempts: 1,
  removeOnComplete: DEFAULT_JOB_OPTIONS.removeOnComplete,
  removeOnFail: DEFAULT_JOB_OPTIONS.removeOnFail,
};

/** `apk-build-{id}`. */
export function buildJobId(buildId: number): string {
  return safeJobId(QUEUE, buildId);
}

/**
 * Enqueues a build for a request handler (after its row committed).
 * @throws QueueUnavailableError (503 QUEUE_UNAVAILABLE) when Redis does not take it in time
 */
export async function enqueueBuild(queue: Queue, build: { id: number; tenant_id: number }): Promise<string> {
  const data: ApkBuildData = { build_id: build.id, tenant_id: build.tenant_id };
  const job = await addOrUnavailable(queue, JOB, data, { ...buildJobOptions, jobId: buildJobId(build.id) });
  return job.id!;
}

/**
 * Removes a queued build's job (cancel before it started). Best effort: a job a worker took already
 * finds its row cancelled and does nothing.
 */
export async function removeQueuedJob(queue: Queue, buildId: number): Promise<void> {
  try {
    const job = (await queue.getJob(buildJobId(buildId))) as Job | undefined;
    if (job && (await job.isWaiting())) await job.remove();
  } catch {
    /* see above */
  }
}

/**
 * BullMQ processor (in-process form; the sandboxed file calls it too, with its own deps).
 * @returns the outcome (bull-board shows it)
 * @throws UnrecoverableError when the build failed (its row says why); Error "worker shut down"
 *   when the signal stopped it
 */
export async function process(
  job: JobLike<ApkBuildData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<BuildOutcome> {
  return runBuild(job, jobDeps(), signal);
}

/**
 * Marks a build failed when its job ended without the processor doing so (the sandboxed child
 * crashed, or BullMQ gave the job up after it stalled too often): the row never stays `running`.
 * @returns true when a row was changed
 */
export async function failOrphanedBuild(knex: Knex, data: Partial<ApkBuildData>, reason: string): Promise<boolean> {
  if (!data.build_id || !data.tenant_id) return false;
  // the tenant's database after its cutover (issue 15 item 4)
  const scope = await tenantScopeOf(knex, data.tenant_id, jobDeps().appKey, 'job');
  const n = await scope
    .table('apk_builds')
    .where({ id: data.build_id })
    .whereIn('status', ['queued', 'running'])
    .update({
      status: 'failed',
      error: `The build job ended without a result: ${reason.slice(0, 500)}`,
      finished_at: new Date(),
      updated_at: new Date(),
    });
  return n > 0;
}
