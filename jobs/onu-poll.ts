import { UnrecoverableError, type JobsOptions, type Queue } from 'bullmq';
import type { Knex } from 'knex';
import { Olt, Onu } from '../db/models/index.js';
import type { TenantScope } from '../db/tenant-scope.js';
import { forEachTenantDatabase, tenantScopeOf } from '../db/tenant-routing.js';
import { openCredentials } from '../db/credentials.js';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike, type JobSchedulerDef } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { SCAN_BATCH_SIZE, reportProgress, tally } from './platform-scan.js';
import {
  OltAuthError,
  OltUnreachableError,
  UnknownOltDriverError,
  oltAdapterFor,
  type OltTarget,
  type OnuReading,
  type OnuStatus,
} from './adapters/olt/index.js';

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

/** What one OLT's poll returns (bull-board shows it). */
export interface OnuPollOltResult {
  kind: 'olt';
  olt_id: number;
  tenant_id: number;
  /**
   * polled: readings applied; unreachable: OLT offline; stale: a newer poll was applied first;
   * skipped: the OLT is gone or inactive.
   */
  outcome: 'polled' | 'unreachable' | 'stale' | 'skipped';
  /** The poll's moment (ISO 8601). */
  polled_at: string;
  /** Active ONUs of the OLT. */
  onus: number;
  /** ONUs whose row changed. */
  changed: number;
  /** ONUs per status after the poll. */
  statuses: Partial<Record<OnuStatus, number>>;
  /** Serials the OLT reported that are not active ONUs of it (ignored). */
  unknown: number;
  /** Known ONUs the OLT did not report (set offline). */
  missing: number;
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

/** Marks the OLT after a failed poll, unless a newer poll was applied already. */
async function markFailed(
  scope: TenantScope,
  olt: Olt,
  polledAt: Date,
  error: string,
  status: 'offline' | null,
): Promise<boolean> {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Olt).findById(olt.id).forUpdate().select('id', 'status', 'last_polled_at');
    if (!row || (row.last_polled_at && row.last_polled_at > polledAt)) return false;
    const newStatus = status ?? row.status;
    await s
      .query(Olt)
      .findById(olt.id)
      .patch({
        status: newStatus,
        last_polled_at: polledAt,
        last_poll_error: error,
        ...(newStatus !== row.status || olt.last_poll_error !== error ? { updated_at: new Date() } : {}),
      });
    return true;
  });
}

const UPDATE_ONUS = `UPDATE onus AS o
  SET status = v.status, rx_power = v.rx, tx_power = v.tx, uptime = v.up,
      last_seen = CASE WHEN v.status = 'online' THEN v.seen ELSE o.last_seen END, updated_at = now()
  FROM (VALUES %VALUES%) AS v(id, status, rx, tx, up, seen)
  WHERE o.id = v.id AND o.tenant_id = ?
    AND ((o.status, o.rx_power, o.tx_power, o.uptime) IS DISTINCT FROM (v.status, v.rx, v.tx, v.up)
      OR (v.status = 'online' AND o.last_seen IS DISTINCT FROM v.seen))
  RETURNING o.id`;

async function pollOlt(
  job: JobLike<OnuPollData>,
  oltId: number,
  tenantId: number,
  signal?: AbortSignal,
): Promise<OnuPollOltResult> {
  const deps = jobDeps();
  const { knex } = deps;
  const polledAt = jobClock().now();
  // the tenant's database after its cutover (issue 15 item 4), read fresh per run
  const scope = await tenantScopeOf(knex, tenantId, deps.appKey, 'job');
  const result: OnuPollOltResult = {
    kind: 'olt',
    olt_id: oltId,
    tenant_id: tenantId,
    outcome: 'skipped',
    polled_at: polledAt.toISOString(),
    onus: 0,
    changed: 0,
    statuses: {},
    unknown: 0,
    missing: 0,
  };
  const olt = await scope.query(Olt).findById(oltId);
  if (!olt || !olt.is_active) {
    await job.log(`OLT ${oltId} of tenant ${tenantId} ${olt ? 'is inactive' : 'no longer exists'}: nothing to poll`);
    return result;
  }
  const onus = await scope
    .query(Onu)
    .where({ olt_id: oltId, is_active: true })
    .orderBy('id')
    .select('id', 'serial_number');
  result.onus = onus.length;
  await job.log(
    `OLT ${olt.id} "${olt.name}" (tenant ${tenantId}, driver ${olt.driver}, ${olt.ip_address ?? 'no address'}): ` +
      `${onus.length} active ONU(s) to read`,
  );

  let readings: OnuReading[];
  try {
    const adapter = oltAdapterFor(olt.driver, deps.oltAdapters);
    const target: OltTarget = {
      id: olt.id,
      tenant_id: tenantId,
      name: olt.name,
      vendor: olt.vendor,
      model: olt.model,
      ip_address: olt.ip_address,
      pon_ports: olt.pon_ports,
      serials: onus.map((o) => o.serial_number),
      credentials: () => openOltCredentials(olt, deps.appKey),
    };
    readings = await adapter.poll(target, { now: polledAt, signal });
  } catch (err) {
    if (err instanceof OltUnreachableError) {
      const applied = await markFailed(scope, olt, polledAt, 'unreachable', 'offline');
      await job.log(
        applied
          ? `OLT ${olt.id} is unreachable: status offline; its ONUs keep their last readings`
          : `OLT ${olt.id} is unreachable, but a newer poll was applied already: nothing changed`,
      );
      await job.updateProgress(100);
      return { ...result, outcome: applied ? 'unreachable' : 'stale' };
    }
    if (err instanceof OltAuthError) {
      await markFailed(scope, olt, polledAt, 'authentication failed', null);
      await job.log(`OLT ${olt.id} refused the credentials (or they cannot be opened): giving up until they are fixed`);
      throw new UnrecoverableError(`OLT ${olt.id}: authentication failed`);
    }
    if (err instanceof UnknownOltDriverError) {
      await markFailed(scope, olt, polledAt, 'unknown driver', null);
      await job.log(`OLT ${olt.id} names driver "${olt.driver}", which this build does not have: giving up`);
      throw new UnrecoverableError(`OLT ${olt.id}: unknown driver ${olt.driver}`);
    }
    throw err;
  }
  await job.updateProgress(50);

  const bySerial = new Map<string, OnuReading>();
  for (const r of readings) bySerial.set(r.serial_number.toUpperCase(), r);
  const known = new Set(onus.map((o) => o.serial_number.toUpperCase()));
  result.unknown = [...bySerial.keys()].filter((s) => !known.has(s)).length;
  const rows = onus.map((o) => {
    const r = bySerial.get(o.serial_number.toUpperCase());
    if (!r) result.missing += 1;
    const status: OnuStatus = r?.status ?? 'offline';
    tally(result.statuses, status);
    const online = status === 'online';
    return {
      id: o.id,
      status,
      rx: online ? (r?.rx_power ?? null) : null,
      tx: online ? (r?.tx_power ?? null) : null,
      up: online ? (r?.uptime ?? null) : null,
    };
  });

  const applied = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(Olt).findById(olt.id).forUpdate().select('id', 'status', 'last_polled_at');
    if (!row || (row.last_polled_at && row.last_polled_at > polledAt)) return false;
    for (let i = 0; i < rows.length; i += SCAN_BATCH_SIZE) {
      const batch = rows.slice(i, i + SCAN_BATCH_SIZE);
      const values: Knex.RawBinding[] = [];
      for (const r of batch) values.push(r.id, r.status, r.rx, r.tx, r.up, polledAt);
      const sql = UPDATE_ONUS.replace(
        '%VALUES%',
        batch.map(() => '(?::int, ?::text, ?::numeric, ?::numeric, ?::bigint, ?::timestamptz)').join(', '),
      );
      const { rows: changed } = await trx.raw(sql, [...values, tenantId]);
      result.changed += changed.length;
    }
    const patch: Partial<Olt> = { status: 'online', last_polled_at: polledAt, last_poll_error: null };
    if (row.status !== 'online' || olt.last_poll_error !== null) patch.updated_at = new Date();
    await s.query(Olt).findById(olt.id).patch(patch);
    return true;
  });
  if (!applied) {
    await job.log(`a newer poll of OLT ${olt.id} was applied already: these readings are dropped`);
    await job.updateProgress(100);
    return { ...result, outcome: 'stale', changed: 0 };
  }
  const counts = Object.entries(result.statuses)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  await job.log(
    `OLT ${olt.id} online: ${readings.length} reading(s); ONUs ${counts || 'none'}; ${result.changed} row(s) changed` +
      (result.unknown ? `; ${result.unknown} unknown serial(s) ignored` : '') +
      (result.missing ? `; ${result.missing} known ONU(s) not reported, set offline` : ''),
  );
  await job.updateProgress(100);
  return { ...result, outcome: 'polled' };
}

/**
 * Opens an OLT's sealed credentials for its driver.
 * @returns null when none are stored
 * @throws OltAuthError when they cannot be opened (no APP_KEY in this process, another key, tampered)
 */
function openOltCredentials(olt: Olt, appKey: Buffer | undefined) {
  if (!olt.credentials_enc) return null;
  if (!appKey) throw new OltAuthError('APP_KEY is not configured in this worker: the credentials cannot be opened.');
  try {
    return openCredentials(appKey, 'olts', olt.tenant_id, olt.credentials_enc);
  } catch (cause) {
    throw new OltAuthError('The stored credentials cannot be opened with this APP_KEY.', { cause });
  }
}
