import { UnrecoverableError } from 'bullmq';
import type { JobLike } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { sweepQueuedRows, type SweepResult } from './platform-scan.js';
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
export type WabotSweepResult = SweepResult;

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
  const { knex, appKey, queues } = jobDeps();
  if (!queues) throw new UnrecoverableError('wabot-send: the worker has no queue producers (JobDeps.queues)');
  const queue = queues.get(QUEUE);
  const cutoff = new Date(jobClock().now().getTime() - QUEUED_STALE_MS);
  return sweepQueuedRows(
    job,
    {
      queue,
      knex,
      appKey,
      stale: (db) =>
        db('communication_messages')
          .where({ status: 'queued', direction: 'out' })
          .whereIn('channel', ['whatsapp', 'messenger'])
          .where('queued_at', '<', cutoff)
          .where((q) => q.whereNull('available_at').orWhere('available_at', '<', cutoff)),
      jobIdOf: sendJobId,
      add: (r) => addSendJob(queue, { tenant_id: r.tenant_id, message_id: r.id }),
      noun: 'chat message(s)',
    },
    signal,
  );
}

/** Job options of a send (5 attempts, exponential backoff from 2 s). */
export { sendJobOptions };
