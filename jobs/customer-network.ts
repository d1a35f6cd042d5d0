import type { Knex } from 'knex';
import { forEachTenantDatabase } from '../db/tenant-routing.js';
import { UnrecoverableError, type JobsOptions, type Queue } from 'bullmq';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike, type JobSchedulerDef } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { SCAN_BATCH_SIZE, enqueueOrRetry, reportProgress, tally } from './platform-scan.js';
import {
  pushCustomerNetwork,
  type CustomerNetworkData,
  type CustomerNetworkPushResult,
  type PushJob,
} from './customer-network-push.js';

export {
  desiredState,
  sessionKey,
  type CustomerNetworkData,
  type CustomerNetworkPushResult,
} from './customer-network-push.js';

/**
 * Job `customer-network` (issue 8 item 2): pushes customers' network state to their NAS.
 * - `customer-network-push` (jobs/customer-network-push.ts): one customer, one version. Enqueued in
 *   the transaction of every network-relevant change (status, package, NAS, PPPoE login, MAC;
 *   api/customers/network-state.ts) with the fixed id `customer-network-<tenant>-<customer>-v<version>`
 *   and data {tenant_id, customer_id, version}: ids only.
 * - `customer-network-sweep`, every minute (the scheduler): customers whose sync is still pending 5
 *   minutes after it was asked for get their job again (a job Redis lost, an add that timed out but
 *   whose change committed, a job that finished without its outcome reaching the row). A job still in
 *   the queue (waiting, delayed for its backoff, running) is left alone; a finished one (failed or
 *   completed) is run again; a missing one is added. Their `network_requested_at` moves to now, so
 *   each is looked at once per 5 minutes. Platform job: the one cross-tenant read is the list of such
 *   customers (ids only).
 */
export const QUEUE = 'customer-network' as const;
/** Job name of one customer's push. */
export const PUSH_JOB = 'customer-network-push';
/** Job name of the scheduler's sweep. */
export const SWEEP_JOB = 'customer-network-sweep';
/** A pending sync older than this is re-requested by the sweep, in ms (5 minutes). */
export const PENDING_STALE_MS = 5 * 60_000;

/** Options of a push: 5 attempts, backoff 5 s, 10 s, 20 s, 40 s (a NAS that answers slowly gets time). */
export const pushJobOptions: JobsOptions = {
  ...DEFAULT_JOB_OPTIONS,
  attempts: 5,
  backoff: { type: 'exponential', delay: 5000 },
};

/** Every minute (BullMQ runs an `every` scheduler's first job at once), upserted by the worker. */
export const scheduler: JobSchedulerDef = {
  id: 'customer-network-sweep-every-minute',
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

/** Fixed id of the push of one version: `customer-network-<tenant>-<customer>-v<version>`. */
export function pushJobId(tenantId: number, customerId: number, version: number): string {
  return safeJobId(QUEUE, tenantId, customerId, `v${version}`);
}

/**
 * Enqueues the push of one customer's version, bounded (addOrUnavailable), for the transaction that
 * took the version: when Redis does not take it the caller's transaction fails and rolls back.
 * @param queue the customer-network producer queue (Queues.get(QUEUE))
 * @param timeoutMs how long to wait for Redis, in ms (Queues.enqueueTimeoutMs)
 * @returns the job id
 * @throws QueueUnavailableError (503 QUEUE_UNAVAILABLE over HTTP) when Redis does not take it in time
 */
export async function enqueuePush(
  queue: Queue,
  data: Required<CustomerNetworkData>,
  timeoutMs?: number,
): Promise<string> {
  const jobId = pushJobId(data.tenant_id, data.customer_id, data.version);
  const job = await addOrUnavailable(
    queue,
    PUSH_JOB,
    { tenant_id: data.tenant_id, customer_id: data.customer_id, version: data.version },
    { ...pushJobOptions, jobId },
    timeoutMs,
  );
  return job.id ?? jobId;
}

/** What the sweep returns (bull-board shows it). */
export interface CustomerNetworkSweepResult {
  kind: 'sweep';
  /** Pending syncs older than 5 minutes found. */
  stale: number;
  /** Jobs added again (missing from Redis). */
  enqueued: number;
  /** Finished jobs (failed, or completed without reaching the row) run again. */
  retried: number;
  /** Jobs still in the queue (waiting, delayed, running): left alone. */
  queued: number;
  /** Per tenant id: stale syncs found. */
  tenants: Record<string, number>;
}

/**
 * BullMQ processor of the queue: the sweep for the sweep job, else one customer's push.
 * @param signal passed to the adapter; the sweep stops between batches when it fires
 * @throws Error (retry) or UnrecoverableError (give up) from the push; UnrecoverableError for a
 *   push without ids or a sweep in a worker without queue producers
 */
export async function process(
  job: PushJob,
  _token?: string,
  signal?: AbortSignal,
): Promise<CustomerNetworkPushResult | CustomerNetworkSweepResult> {
  if (job.name === SWEEP_JOB) return sweep(job, signal);
  const d = job.data ?? {};
  if (!d.tenant_id || !d.customer_id || !d.version) {
    throw new UnrecoverableError('customer-network: a push needs tenant_id, customer_id and version');
  }
  return pushCustomerNetwork(job, { tenant_id: d.tenant_id, customer_id: d.customer_id, version: d.version }, signal);
}

/** The sweep (see the file comment). */
async function sweep(job: JobLike<CustomerNetworkData>, signal?: AbortSignal): Promise<CustomerNetworkSweepResult> {
  const { knex: shared, appKey, queues } = jobDeps();
  if (!queues) throw new UnrecoverableError('customer-network: the worker has no queue producers (JobDeps.queues)');
  const queue = queues.get(QUEUE);
  const now = jobClock().now();
  const cutoff = new Date(now.getTime() - PENDING_STALE_MS);
  // Cross-tenant on purpose (platform job, see the file comment): ids only, on the shared database
  // without the cut-over tenants, then on each cut-over tenant's database (issue 15 item 4).
  const staleIn = (k: Knex, exclude: number[]) => () => {
    const q = k('customers').where('network_sync_status', 'pending').where('network_requested_at', '<', cutoff);
    return exclude.length ? q.whereNotIn('tenant_id', exclude) : q;
  };
  let total = 0;
  await forEachTenantDatabase(shared, appKey, async (t) => {
    total += Number((await staleIn(t.knex, t.excludeTenantIds)().count<{ n: string }[]>({ n: '*' }).first())?.n ?? 0);
  });
  await job.log(`${total} pending network sync(s) asked for before ${cutoff.toISOString()}`);
  const result: CustomerNetworkSweepResult = {
    kind: 'sweep',
    stale: 0,
    enqueued: 0,
    retried: 0,
    queued: 0,
    tenants: {},
  };
  await forEachTenantDatabase(
    shared,
    appKey,
    async (t) => {
      const knex = t.knex;
      const stale = staleIn(knex, t.excludeTenantIds);
      let lastId = 0;
      for (;;) {
        signal?.throwIfAborted();
        const rows: { id: number; tenant_id: number; network_version: string }[] = await stale()
          .where('id', '>', lastId)
          .orderBy('id')
          .limit(SCAN_BATCH_SIZE)
          .select('id', 'tenant_id', 'network_version');
        if (!rows.length) break;
        for (const r of rows) {
          const data = { tenant_id: r.tenant_id, customer_id: r.id, version: Number(r.network_version) };
          const id = pushJobId(data.tenant_id, data.customer_id, data.version);
          result[await enqueueOrRetry(queue, id, () => queue.add(PUSH_JOB, data, { ...pushJobOptions, jobId: id }))] +=
            1;
          tally(result.tenants, r.tenant_id);
          await knex('customers')
            .where({ id: r.id, network_sync_status: 'pending' })
            .where('network_version', data.version)
            .update({ network_requested_at: now });
        }
        result.stale += rows.length;
        lastId = rows[rows.length - 1].id;
        await reportProgress(job, result.stale, total);
        if (rows.length < SCAN_BATCH_SIZE) break;
      }
    },
    (id) => void job.log(`tenant ${id}'s database could not be scanned`),
  );
  for (const [tenantId, n] of Object.entries(result.tenants)) {
    await job.log(`tenant ${tenantId}: ${n} stale sync(s) re-requested`);
  }
  await job.log(
    `done: ${result.stale} stale, ${result.enqueued} job(s) added again, ${result.retried} failed job(s) retried, ` +
      `${result.queued} still queued`,
  );
  await job.updateProgress(100);
  return result;
}
