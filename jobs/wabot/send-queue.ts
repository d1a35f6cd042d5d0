import { randomUUID } from 'node:crypto';
import type { Job, JobsOptions, Queue } from 'bullmq';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobSchedulerDef } from '../queues.js';

/**
 * The `wabot-send` queue (issue 10 item 3): its names, job ids and options, shared by the producer
 * (enqueueChatMessage, jobs/wabot/enqueue.ts) and the processor (jobs/wabot-send.ts).
 */
export const QUEUE = 'wabot-send' as const;
/** Job name of one message's send. */
export const SEND_JOB = 'wabot-send';
/** Job name of the scheduler's sweep (queued rows whose job went missing). */
export const SWEEP_JOB = 'wabot-send-sweep';

/** Job data of a send: ids only (never a token, a number's secret or the text). */
export interface WabotSendData {
  tenant_id: number;
  /** communication_messages.id */
  message_id: number;
}

/**
 * Options of a send: 5 attempts with exponential backoff 2 s, 4 s, 8 s, 16 s for `retry` outcomes
 * (the provider cannot have seen the request). Limiter and provider waits move the job to delayed
 * without using an attempt.
 */
export const sendJobOptions: JobsOptions = {
  ...DEFAULT_JOB_OPTIONS,
  attempts: 5,
  backoff: { type: 'exponential', delay: 2000 },
};

/** Fixed job id of a message's send: `wabot-send-<message id>`. */
export function sendJobId(messageId: number): string {
  return safeJobId(QUEUE, messageId);
}

/**
 * Adds the send job of a message (deduplicated by its fixed id while the job exists).
 * @param queue the wabot-send producer queue
 * @param timeoutMs how long to wait for Redis, in ms (addOrUnavailable's bound)
 * @returns the job id
 * @throws QueueUnavailableError when Redis does not take it in time
 */
export async function addSendJob(queue: Queue, data: WabotSendData, timeoutMs?: number): Promise<string> {
  const jobId = sendJobId(data.message_id);
  const job = await addOrUnavailable(
    queue,
    SEND_JOB,
    { tenant_id: data.tenant_id, message_id: data.message_id },
    { ...sendJobOptions, jobId },
    timeoutMs,
  );
  return job.id ?? jobId;
}

/** A queued row older than this (and not waiting for a later slot) is looked at by the sweep, in ms. */
export const QUEUED_STALE_MS = 60_000;

/** The sweep every minute, upserted by the worker (idempotent). */
export const scheduler: JobSchedulerDef = {
  id: 'wabot-send-sweep-every-minute',
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

/** Job name of a connection check (jobs/wabot/check.ts; POST /api/wabot/test without a message). */
export const CHECK_JOB = 'wabot-check';

/**
 * Adds a connection check of some accounts of a tenant (one attempt: the request waits at most
 * 15 s for it, a retry would answer nobody).
 * @param queue the wabot-send producer queue
 * @param data the tenant and account ids (never a secret)
 * @param timeoutMs how long to wait for Redis, in ms
 * @returns the added job (id `wabot-check-<uuid>`)
 * @throws QueueUnavailableError when Redis does not take it in time
 */
export async function addCheckJob(
  queue: Queue,
  data: { tenant_id: number; account_ids: string[] },
  timeoutMs?: number,
): Promise<Job> {
  return addOrUnavailable(
    queue,
    CHECK_JOB,
    { tenant_id: data.tenant_id, account_ids: [...data.account_ids] },
    { ...DEFAULT_JOB_OPTIONS, attempts: 1, jobId: safeJobId(CHECK_JOB, randomUUID()) },
    timeoutMs,
  );
}
