import { UnrecoverableError, type JobsOptions, type Queue } from 'bullmq';
import type { Knex } from 'knex';
import { forEachTenantDatabase } from '../db/tenant-routing.js';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike, type JobSchedulerDef } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { SCAN_BATCH_SIZE, reportProgress, tally } from './platform-scan.js';
import { pollOlt, type OnuPollOltResult } from './onu-poll/poll-olt.js';

export type { OnuPollOltResult } from './onu-poll/poll-olt.js';

/**
 * Job `onu-poll` (issue 8 item 3): ONU readings from the OLTs, every 5 minutes.
 * - The sweep (job name `onu-poll-sweep`, produced by the scheduler) enqueues one job per active OLT
 *   of every tenant, with a fixed id per OLT and 5-minute bucket (`onu-poll-olt-<id>-b<bucket>`)
 *   and ids-only data {olt_id, tenant_id}. Platform job: the one cross-tenant read is the list of
 *   active OLT ids (like ticket-sla's scan).
 * - The per-OLT job (`onu-poll-olt`; also enqueued by `POST /api/olts/{id}/poll`) re-reads the OLT,
 *   asks its OltAdapter (olts.driver) for the ONUs it sees, and updates every active ONU of that
 *   OLT by serial number: status, rx_power and tx_power (dBm), uptime (seconds), last_seen (the
 *   poll's moment, online ONUs only). Known ONUs the OLT does not report turn offline; serials the
 *   platform does not know are ignored. The OLT gets status online, last_polled_at, no error.
 * - Unreachable OLT (OltUnreachableError): status offline, last_poll_error "unreachable", its ONUs
 *   keep their last readings; the job completes (the next 5-minute run is the retry).
 *   Refused credentials (OltAuthError) or an unknown driver: last_poll_error set, UnrecoverableError.
 *   Anything else (database down): thrown, retried with backoff.
 * Idempotent: rows are written only where a value differs, and a poll older than the OLT's
 * last_polled_at is not applied (two polls of one OLT finishing out of order). "Now" is the job
 * clock (jobs/deps.ts). Credentials are opened only when the driver asks for them and never logged.
 * One OLT's poll is in jobs/onu-poll/poll-olt.ts.
 */
export const QUEUE = 'onu-poll' as const;
/** Job name of the scheduler's run (enqueues the per-OLT jobs). */
export const SWEEP_JOB = 'onu-poll-sweep';
/** Job name of one OLT's poll. */
export const OLT_JOB = 'onu-poll-olt';
/** The polling interval and bucket size, in ms (5 minutes). */
export const POLL_INTERVAL_MS = 5 * 60_000;

/** Job data: ids only (DESIGN.md §3). Empty for the sweep; {olt_id, tenant_id} for one OLT. */
export interface OnuPollData {
  olt_id?: number;
  tenant_id?: number;
}

/** What the sweep returns (bull-board shows it). */
export interface OnuPollSweepResult {
  kind: 'sweep';
  /** The 5-minute bucket of the run (ms since the epoch / POLL_INTERVAL_MS). */
  bucket: number;
  /** Per-OLT jobs handed to the queue (ids already in the bucket are deduplicated by BullMQ). */
  enqueued: number;
  /** Per tenant id: OLTs enqueued. */
  tenants: Record<string, number>;
}

/** Result of either kind of job. */
export type OnuPollResult = OnuPollSweepResult | OnuPollOltResult;

/** Options of the per-OLT jobs: a few quick retries for database trouble; the next run is the real retry. */
export const oltJobOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 3 };

/** Every 5 minutes (BullMQ runs an `every` scheduler's first job at once), upserted by the worker. */
export const scheduler: JobSchedulerDef = {
  id: 'onu-poll-every-5-minutes',
  repeat: { every: POLL_INTERVAL_MS },
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

/** The 5-minute bucket of a moment (ms since the epoch / POLL_INTERVAL_MS, floored). */
export function bucketOf(at: Date): number {
  return Math.floor(at.getTime() / POLL_INTERVAL_MS);
}

/** Fixed id of the scheduled poll of an OLT in the bucket of `at`: `onu-poll-olt-<id>-b<bucket>`. */
export function oltJobId(oltId: number, at: Date): string {
  return safeJobId(QUEUE, 'olt', oltId, `b${bucketOf(at)}`);
}

/** Fixed id of a requested poll of an OLT, one per OLT per UTC minute: `onu-poll-olt-<id>-m<minute>`. */
export function requestedJobId(oltId: number, at: Date): string {
  return safeJobId(QUEUE, 'olt', oltId, `m${Math.floor(at.getTime() / 60_000)}`);
}

/**
 * Enqueues a poll of one OLT for a request handler (`POST /api/olts/{id}/poll`); a second request
 * in the same minute gets the same job.
 * @param queue the onu-poll producer queue (Queues.get(QUEUE))
 * @param at the request's moment (default now)
 * @returns the job id
 * @throws QueueUnavailableError (503 QUEUE_UNAVAILABLE) when Redis does not take it in time
 */
export async function enqueueOltPoll(
  queue: Queue,
  olt: { id: number; tenant_id: number },
  at: Date = new Date(),
): Promise<string> {
  const data: OnuPollData = { olt_id: olt.id, tenant_id: olt.tenant_id };
  const job = await addOrUnavailable(queue, OLT_JOB, data, { ...oltJobOptions, jobId: requestedJobId(olt.id, at) });
  return job.id!;
}

/**
 * BullMQ processor of the queue: the sweep for data without olt_id, else one OLT's poll.
 * @param signal passed to the driver; the sweep stops between batches when it fires
 * @returns OnuPollSweepResult or OnuPollOltResult
 * @throws UnrecoverableError for refused credentials, an unknown driver, or a worker without queues
 */
export async function process(
  job: JobLike<OnuPollData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<OnuPollResult> {
  const data = job.data ?? {};
  if (data.olt_id && data.tenant_id) return pollOlt(job, data.olt_id, data.tenant_id, signal);
  return sweep(job, signal);
}

async function sweep(job: JobLike<OnuPollData>, signal?: AbortSignal): Promise<OnuPollSweepResult> {
  const { knex: shared, appKey, queues } = jobDeps();
  if (!queues) throw new UnrecoverableError('onu-poll: the worker has no queue producers (JobDeps.queues)');
  const q = queues;
  const at = jobClock().now();
  const bucket = bucketOf(at);
  // Cross-tenant on purpose (platform job, see the file comment): ids only, on the shared database
  // without the cut-over tenants, then on each cut-over tenant's database (issue 15 item 4).
  let total = 0;
  await forEachTenantDatabase(shared, appKey, async (t) => {
    const { n } = (await activeOlts(t.knex, t.excludeTenantIds).count<{ n: string }[]>({ n: '*' }).first())!;
    total += Number(n);
  });
  await job.log(`bucket ${bucket} (${at.toISOString()}): ${total} active OLT(s) to poll`);
  const tenants: Record<string, number> = {};
  let enqueued = 0;
  const failed: number[] = [];
  await forEachTenantDatabase(
    shared,
    appKey,
    async (t) => {
      let lastId = 0;
      for (;;) {
        signal?.throwIfAborted();
        const rows: { id: number; tenant_id: number }[] = await activeOlts(t.knex, t.excludeTenantIds)
          .where('id', '>', lastId)
          .orderBy('id')
          .limit(SCAN_BATCH_SIZE)
          .select('id', 'tenant_id');
        if (!rows.length) break;
        await q.get(QUEUE).addBulk(
          rows.map((r) => ({
            name: OLT_JOB,
            data: { olt_id: r.id, tenant_id: r.tenant_id } satisfies OnuPollData,
            opts: { ...oltJobOptions, jobId: oltJobId(r.id, at) },
          })),
        );
        for (const r of rows) tally(tenants, r.tenant_id);
        enqueued += rows.length;
        lastId = rows[rows.length - 1].id;
        await reportProgress(job, enqueued, total);
        if (rows.length < SCAN_BATCH_SIZE) break;
      }
    },
    (tenantId) => void failed.push(tenantId),
  );
  for (const id of failed) await job.log(`tenant ${id}'s database could not be scanned`);
  for (const [tenantId, count] of Object.entries(tenants)) {
    await job.log(`tenant ${tenantId}: ${count} OLT poll(s) enqueued`);
  }
  await job.log(`done: ${enqueued} OLT poll(s) enqueued for bucket ${bucket}`);
  await job.updateProgress(100);
  return { kind: 'sweep', bucket, enqueued, tenants };
}

/** Active OLTs of one scanned database, without the tenants whose rows are elsewhere. */
function activeOlts(knex: Knex, excludeTenantIds: number[]): Knex.QueryBuilder {
  const q = knex('olts').where('is_active', true);
  return excludeTenantIds.length ? q.whereNotIn('tenant_id', excludeTenantIds) : q;
}
