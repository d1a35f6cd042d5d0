import { UnrecoverableError } from 'bullmq';
import type { JobLike } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { SCAN_BATCH_SIZE, reportProgress } from './platform-scan.js';
import { sendMessage, type SendJob, type WabotSendResult } from './wabot/send.js';
import { checkAccounts, type WabotCheckData, type WabotCheckResult } from './wabot/check.js';
import {
  CHECK_JOB,
  QUEUE,
  QUEUED_STALE_MS,
  SWEEP_JOB,
  addSendJob,
  scheduler,
  sendJobId,
  sendJobOptions,
} from './wabot/send-queue.js';

export { enqueueChatMessage, type ChatMessageInput, type EnqueuedChatMessage } from './wabot/enqueue.js';
export {
  CHECK_JOB,
  QUEUE,
  SEND_JOB,
  SWEEP_JOB,
  addCheckJob,
  scheduler,
  sendJobId,
  type WabotSendData,
} from './wabot/send-queue.js';
export type { AccountCheck, WabotCheckData, WabotCheckResult } from './wabot/check.js';
export type { WabotSendResult } from './wabot/send.js';

/**
 * Job `wabot-send` (issue 10 item 3): sends outbound chat messages (WhatsApp gateways, Messenger).
 * - `wabot-send`: one message, job id `wabot-send-<message id>`, data {tenant_id, message_id}; added
 *   by enqueueChatMessage after the row's transaction commits; the send itself is
 *   jobs/wabot/send.ts (at most once, the per-account limiter, classify()).
 * - `wabot-check`: a connection check of some accounts (POST /api/wabot/test without a message;
 *   jobs/wabot/check.ts), data {tenant_id, account_ids}; no message is sent.
 * - `wabot-send-sweep`, every minute (the scheduler): `queued` outbound chat rows queued more than
 *   a minute ago and not waiting for a later slot (available_at) get their job again when it is
 *   missing (an add that failed after the commit, Redis lost it) or finished (failed: run again,
 *   which writes the row's outcome); a job still waiting, delayed or running is left alone. Platform
 *   job: the one cross-tenant read is the list of such rows (ids only).
 */

/** What the sweep returns (bull-board shows it). */
export interface WabotSweepResult {
  kind: 'sweep';
  /** stale queued rows looked at */
  stale: number;
  /** jobs added again (missing from Redis) */
  enqueued: number;
  /** finished jobs run again */
  retried: number;
  /** jobs still in the queue, left alone */
  queued: number;
}

/**
 * BullMQ processor of the queue: the sweep for the sweep job, a connection check for the check
 * job, else one message's send.
 * @throws see sendMessage; UnrecoverableError for a sweep in a worker without queue producers
 */
export async function process(
  job: SendJob,
  token?: string,
  signal?: AbortSignal,
): Promise<WabotSendResult | WabotSweepResult | WabotCheckResult> {
  if (job.name === SWEEP_JOB) return sweep(job, signal);
  // a job named wabot-check carries WabotCheckData (addCheckJob); checkAccounts re-checks its fields
  if (job.name === CHECK_JOB) return checkAccounts(job as unknown as JobLike<WabotCheckData>, signal);
  return sendMessage(job, token, signal);
}

export { scheduler as sweepScheduler };

/** The sweep (see the file comment). */
async function sweep(job: JobLike<unknown>, signal?: AbortSignal): Promise<WabotSweepResult> {
  const { knex, queues } = jobDeps();
  if (!queues) throw new UnrecoverableError('wabot-send: the worker has no queue producers (JobDeps.queues)');
  const queue = queues.get(QUEUE);
  const cutoff = new Date(jobClock().now().getTime() - QUEUED_STALE_MS);
  // Cross-tenant on purpose (platform job, see the file comment): ids only.
  const stale = () =>
    knex('communication_messages')
      .where({ status: 'queued', direction: 'out' })
      .whereIn('channel', ['whatsapp', 'messenger'])
      .where('queued_at', '<', cutoff)
      .where((q) => q.whereNull('available_at').orWhere('available_at', '<', cutoff));
  const total = Number((await stale().count<{ n: string }[]>({ n: '*' }).first())?.n ?? 0);
  const result: WabotSweepResult = { kind: 'sweep', stale: 0, enqueued: 0, retried: 0, queued: 0 };
  let lastId = 0;
  for (;;) {
    signal?.throwIfAborted();
    const rows: { id: string | number; tenant_id: number }[] = await stale()
      .where('id', '>', lastId)
      .orderBy('id')
      .limit(SCAN_BATCH_SIZE)
      .select('id', 'tenant_id');
    if (!rows.length) break;
    for (const r of rows) {
      const data = { tenant_id: r.tenant_id, message_id: Number(r.id) };
      const existing = await queue.getJob(sendJobId(data.message_id));
      const state = existing ? await existing.getState() : 'unknown';
      if (!existing || state === 'unknown') {
        await addSendJob(queue, data);
        result.enqueued += 1;
      } else if (state === 'failed' || state === 'completed') {
        await existing.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
        result.retried += 1;
      } else result.queued += 1;
    }
    result.stale += rows.length;
    lastId = Number(rows[rows.length - 1].id);
    await reportProgress(job, result.stale, total);
    if (rows.length < SCAN_BATCH_SIZE) break;
  }
  await job.log(
    `done: ${result.stale} stale queued message(s), ${result.enqueued} job(s) added again, ` +
      `${result.retried} finished job(s) run again, ${result.queued} still queued`,
  );
  await job.updateProgress(100);
  return result;
}

/** Job options of a send (5 attempts, exponential backoff from 2 s). */
export { sendJobOptions };
