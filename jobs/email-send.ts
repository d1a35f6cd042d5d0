import type { Knex } from 'knex';
import { tenantScopeOf } from '../db/tenant-routing.js';
import { UnrecoverableError, type JobsOptions, type Queue } from 'bullmq';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike, type JobSchedulerDef } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { sweepQueuedRows, type SweepResult } from './platform-scan.js';
import { sendQueuedEmail, type EmailSendResult, type SendJob } from './email/send.js';

export type { EmailSendResult } from './email/send.js';

/**
 * Job `email-send` (issue 9 item 5): outbound e-mails of communication_messages sent over the
 * tenant account's SMTP server.
 * - `email-send-message` {tenant_id, communication_id}: one row (jobs/email/send.ts), ids only,
 *   fixed id `email-send-<row id>` so a second enqueue of the same row (the sweeper, a retry of
 *   the request) is deduplicated; 5 attempts, backoff 2 s, 4 s, 8 s, 16 s for "known not sent".
 * - `email-send-sweep`, every minute (the scheduler): `queued` e-mail rows (not deleted) queued more
 *   than a minute ago get their job again: missing from Redis (the enqueue after the commit failed:
 *   Redis was down, the request got 503) -> added; finished (completed or failed) while the row is
 *   still queued -> run again (the run re-reads the row: one that started sending becomes
 *   `delivery_unknown`, never a second send); waiting, delayed or running -> left alone. Platform
 *   job: the one cross-tenant read is the list of such rows (ids only).
 */
export const QUEUE = 'email-send' as const;
/** Job name of one message's send. */
export const SEND_JOB = 'email-send-message';
/** Job name of the scheduler's sweep. */
export const SWEEP_JOB = 'email-send-sweep';
/** A queued row older than this is looked at by the sweep, in ms (1 minute). */
export const QUEUED_STALE_MS = 60_000;

/** Job data: ids only (DESIGN.md §3). */
export interface EmailSendData {
  tenant_id?: number;
  communication_id?: number;
}

/** Options of a send: 5 attempts, exponential backoff from 2 s. */
export const sendJobOptions: JobsOptions = {
  ...DEFAULT_JOB_OPTIONS,
  attempts: 5,
  backoff: { type: 'exponential', delay: 2000 },
};

/** Every minute (BullMQ runs an `every` scheduler's first job at once), upserted by the worker. */
export const scheduler: JobSchedulerDef = {
  id: 'email-send-sweep-every-minute',
  repeat: { every: 60_000 },
  template: {
    name: SWEEP_JOB,
    data: {},
    opts: {
      attempts: 2,
      backoff: DEFAULT_JOB_OPTIONS.backoff,
      removeOnComplete: DEFAULT_JOB_OPTIONS.removeOnComplete,
      removeOnFail: DEFAULT_JOB_OPTIONS.removeOnFail,
    },
  },
};

/** Fixed id of a row's send: `email-send-<communication id>`. */
export function sendJobId(communicationId: number): string {
  return safeJobId(QUEUE, communicationId);
}

/**
 * Enqueues the send of one queued row, bounded (addOrUnavailable). Call it after the row's
 * transaction committed: when Redis does not take the job the row stays `queued` for the sweep.
 * @param timeoutMs how long to wait for Redis, in ms (Queues.enqueueTimeoutMs)
 * @returns the job id
 * @throws QueueUnavailableError (503 QUEUE_UNAVAILABLE over HTTP) when Redis does not take it in time
 */
export async function enqueueSend(
  queue: Queue,
  data: { tenant_id: number; communication_id: number },
  timeoutMs?: number,
): Promise<string> {
  const jobId = sendJobId(data.communication_id);
  const job = await addOrUnavailable<EmailSendData>(
    queue,
    SEND_JOB,
    { tenant_id: data.tenant_id, communication_id: data.communication_id },
    { ...sendJobOptions, jobId },
    timeoutMs,
  );
  return job.id ?? jobId;
}

/** What the sweep returns (bull-board shows it). */
export type EmailSendSweepResult = SweepResult;

/**
 * BullMQ processor of the queue: the sweep for the sweep job, else one message's send.
 * @param signal closes the SMTP or IMAP connection of a running send; stops the sweep between batches
 * @throws UnrecoverableError (the row is `failed`, or the job carries no ids); MailServerError (retry)
 */
export async function process(
  job: SendJob,
  _token?: string,
  signal?: AbortSignal,
): Promise<EmailSendResult | EmailSendSweepResult> {
  if (job.name === SWEEP_JOB) return sweep(job, signal);
  const d = (job.data ?? {}) as EmailSendData;
  if (!d.tenant_id || !d.communication_id) {
    throw new UnrecoverableError('email-send: a send needs tenant_id and communication_id');
  }
  const { knex: shared, appKey, logger } = jobDeps();
  // the tenant's database after its cutover (issue 15 item 4), read fresh per run
  const knex = (await tenantScopeOf(shared, d.tenant_id, appKey, 'job')).knex as Knex;
  return sendQueuedEmail({ knex, appKey, logger, clock: jobClock(), signal }, job, d.tenant_id, d.communication_id);
}

/** The sweep (see the file comment). */
async function sweep(job: JobLike<unknown>, signal?: AbortSignal): Promise<EmailSendSweepResult> {
  const { knex, appKey, queues } = jobDeps();
  if (!queues) throw new UnrecoverableError('email-send: the worker has no queue producers (JobDeps.queues)');
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
          .where({ channel: 'email', direction: 'out', status: 'queued' })
          .whereNull('deleted_at')
          .where('queued_at', '<', cutoff),
      jobIdOf: sendJobId,
      add: (r) =>
        queue.add(
          SEND_JOB,
          { tenant_id: r.tenant_id, communication_id: r.id },
          { ...sendJobOptions, jobId: sendJobId(r.id) },
        ),
      noun: `e-mail(s) (queued before ${cutoff.toISOString()})`,
    },
    signal,
  );
}
