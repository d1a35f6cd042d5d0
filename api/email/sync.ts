import type { Job, Queue } from 'bullmq';
import type { TenantScope } from '../../db/tenant-scope.js';
import { ExternalEmailAccount } from '../../db/models/index.js';
import { enqueueSync, enqueueTest, type ImapTestResult } from '../../jobs/imap-sync.js';
import { ValidationFailed } from '../errors.js';

/**
 * Sync and connection test of the tenant's e-mail account (issue 9 items 2, 3): both run as
 * imap-sync jobs in the worker; the request only enqueues (sync) or enqueues and waits (test).
 */

/** How long POST .../test-incoming waits for its job, in ms (issue 9 item 2). */
export const TEST_WAIT_MS = 30_000;

/** The saved account, or 422 when nothing is saved. */
async function savedAccount(scope: TenantScope) {
  const a = await scope.query(ExternalEmailAccount).first();
  if (!a) throw new ValidationFailed({ email: ['No e-mail account is saved: save the settings first.'] });
  return a;
}

/**
 * POST /api/auth/email-settings/sync: enqueues a sync (one waiting or running is reused: BullMQ
 * deduplication id `imap-sync-<account id>`); marks the account `queued` unless a sync is running.
 * @returns {job_id, status} (status: the job's BullMQ state)
 * @throws ValidationFailed (422) when nothing is saved; QueueUnavailableError (503) when Redis is down
 */
export async function requestSync(scope: TenantScope, queue: Queue) {
  const a = await savedAccount(scope);
  const job = await enqueueSync(queue, a);
  await scope
    .query(ExternalEmailAccount)
    .findById(a.id)
    .whereNot('sync_status', 'running')
    .patch({ sync_status: 'queued', updated_at: new Date() });
  return { job_id: String(job.id), status: await job.getState() };
}

/**
 * Waits for a job to finish by polling its state (no QueueEvents connection needed).
 * @param queue the job's queue
 * @param ms longest wait in ms
 * @returns the finished job's return value, or undefined when it did not finish in time
 * @throws Error with the job's failure reason when it failed
 */
export async function waitForJob<T>(queue: Queue, job: Job, ms: number, stepMs = 100): Promise<T | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const state = await job.getState();
    if (state === 'completed') {
      const fresh = await queue.getJob(job.id!);
      return (fresh?.returnvalue ?? undefined) as T | undefined;
    }
    if (state === 'failed') {
      const fresh = await queue.getJob(job.id!);
      throw new Error(fresh?.failedReason ?? 'the job failed');
    }
    if (Date.now() >= until) return undefined;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/**
 * POST /api/auth/email-settings/test-incoming: runs an imap-sync test job on the saved account and
 * waits up to TEST_WAIT_MS for it.
 * @returns `{ok: true, data}` or `{ok: false, error: {code, message}}` (timeout when the job did not finish)
 * @throws ValidationFailed (422) when nothing is saved; QueueUnavailableError (503) when Redis is down
 */
export async function testIncoming(scope: TenantScope, queue: Queue, waitMs = TEST_WAIT_MS) {
  const a = await savedAccount(scope);
  const job = await enqueueTest(queue, a);
  let result: ImapTestResult | undefined;
  try {
    result = await waitForJob<ImapTestResult>(queue, job, waitMs);
  } catch {
    return { ok: false, error: { code: 'protocol_error', message: 'The connection test could not run.' } };
  }
  if (!result)
    return {
      ok: false,
      error: { code: 'timeout', message: `The connection test did not finish in ${waitMs / 1000} s.` },
    };
  return result.ok ? { ok: true, data: result.data } : { ok: false, error: result.error };
}
