import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { forEachTenantDatabase, tenantScopeOf } from '../db/tenant-routing.js';
import type { Job, Queue } from 'bullmq';
import { UnrecoverableError } from 'bullmq';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike, type JobSchedulerDef } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { loadChatSendConfig } from './wabot/load-config.js';
import type { ChatSendConfig } from './wabot/send-config.js';
import {
  syncDeviceStatus,
  syncStatus,
  SYNC_DEFAULT_LIMIT,
  type DeviceStatusItem,
  type SyncOptions,
  type SyncStatusResult,
} from './wabot/status-sync.js';

/**
 * Job `wabot-status` (issue 11 item 3; document 2 "Chat bot" sync-status, sync-device-status):
 * - `wabot-status-report` {tenant_id, limit}: Wablas's realtime report for the tenant's pending
 *   and sent outbox rows (jobs/wabot/status-sync.ts syncStatus); returns `{ok, checked, updated}`
 *   or `{ok: false, warning: true, message}`.
 * - `wabot-status-device` {tenant_id}: each enabled Wablas account's device status, stored per
 *   account; returns `{ok: true, data: [...]}`.
 * - `wabot-status-tick` (the scheduler, every 5 minutes): one report job per tenant with an
 *   enabled wablas account, and every third tick (15 minutes) one device job per such tenant.
 *   Platform job: the one cross-tenant read is the list of such tenants (ids only). Tenants in
 *   demo mode or with the wabot module off are skipped (the routes refuse them too).
 * The routes add their own job (a fresh id) and wait for it at most 30 s. One attempt: a report or
 * a device check is only a read, and the next tick runs again; provider errors are results, not
 * failures.
 */
export const QUEUE = 'wabot-status' as const;
export const REPORT_JOB = 'wabot-status-report';
export const DEVICE_JOB = 'wabot-status-device';
export const TICK_JOB = 'wabot-status-tick';

/** Tick period, in ms (report every 5 minutes; the device every third tick, 15 minutes). */
export const TICK_MS = 5 * 60_000;
/** How many ticks between two scheduled device checks. */
export const DEVICE_EVERY_TICKS = 3;

/** Data of a report job. */
export interface ReportData {
  tenant_id: number;
  limit: number;
}
/** Data of a device job. */
export interface DeviceData {
  tenant_id: number;
}

/** What the device job returns. */
export interface DeviceJobResult {
  ok: true;
  data: DeviceStatusItem[];
}
/** What the tick returns. */
export interface TickResult {
  tenants: number;
  reports: number;
  devices: number;
}

const JOB_OPTIONS = {
  attempts: 1,
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: DEFAULT_JOB_OPTIONS.removeOnFail,
};

/** The scheduler, upserted by the worker. */
export const scheduler: JobSchedulerDef = {
  id: 'wabot-status-every-5-minutes',
  repeat: { every: TICK_MS },
  template: { name: TICK_JOB, data: {}, opts: JOB_OPTIONS },
};

/**
 * Adds a report job for a request (a fresh job id each time).
 * @throws QueueUnavailableError when Redis does not take it in time
 */
export function addReportJob(queue: Queue, tenantId: number, limit: number, timeoutMs?: number): Promise<Job> {
  const data: ReportData = { tenant_id: tenantId, limit };
  return addOrUnavailable(
    queue,
    REPORT_JOB,
    data,
    { ...JOB_OPTIONS, jobId: safeJobId(REPORT_JOB, tenantId, 'req', randomUUID()) },
    timeoutMs,
  );
}

/**
 * Adds a device job for a request (a fresh job id each time).
 * @throws QueueUnavailableError when Redis does not take it in time
 */
export function addDeviceJob(queue: Queue, tenantId: number, timeoutMs?: number): Promise<Job> {
  const data: DeviceData = { tenant_id: tenantId };
  return addOrUnavailable(
    queue,
    DEVICE_JOB,
    data,
    { ...JOB_OPTIONS, jobId: safeJobId(DEVICE_JOB, tenantId, 'req', randomUUID()) },
    timeoutMs,
  );
}

function options(signal?: AbortSignal): SyncOptions {
  const d = jobDeps();
  return {
    clock: jobClock(),
    call: { signal, timeoutMs: d.chatSend?.timeoutMs, rootOverride: d.chatSend?.rootOverride, clock: jobClock() },
  };
}

async function configOf(tenantId: number): Promise<ChatSendConfig | null> {
  const d = jobDeps();
  return d.chatConfig ? d.chatConfig(tenantId) : loadChatSendConfig(d.knex, d.appKey, tenantId);
}

function tenantOf(data: unknown): number {
  const t = Number((data as { tenant_id?: unknown })?.tenant_id);
  if (!Number.isSafeInteger(t) || t <= 0) throw new UnrecoverableError('wabot-status: job data without a tenant_id');
  return t;
}

/**
 * BullMQ processor of the queue (see the file comment).
 * @throws UnrecoverableError for malformed job data or a tick without queue producers
 */
export async function process(
  job: JobLike<unknown>,
  _token?: string,
  signal?: AbortSignal,
): Promise<SyncStatusResult | DeviceJobResult | TickResult> {
  if (job.name === TICK_JOB) return tick(job);
  const tenantId = tenantOf(job.data);
  const { knex: shared, appKey } = jobDeps();
  // the tenant's database after its cutover (issue 15 item 4), read fresh per run
  const knex = (await tenantScopeOf(shared, tenantId, appKey, 'job')).knex as Knex;
  const config = await configOf(tenantId);
  if (job.name === DEVICE_JOB) {
    const data = await syncDeviceStatus(knex, config, tenantId, options(signal));
    await job.log(`device status: ${data.map((d) => `${d.account_id} ${d.status}`).join(', ') || 'no wablas account'}`);
    return { ok: true, data };
  }
  const raw = Number((job.data as { limit?: unknown }).limit);
  const limit = Number.isInteger(raw) && raw >= 1 && raw <= 200 ? raw : SYNC_DEFAULT_LIMIT;
  const result = await syncStatus(knex, config, tenantId, limit, options(signal));
  await job.log(result.ok ? `checked ${result.checked}, updated ${result.updated}` : `warning: ${result.message}`);
  return result;
}

/**
 * Tenants with an enabled wablas account, not in demo mode, module wabot on (ids only): the
 * settings of the shared database without the cut-over tenants, then each cut-over tenant's
 * database (issue 15 item 4); demo_mode and modules from the shared tenants rows.
 */
async function dueTenants(): Promise<number[]> {
  const { knex: shared, appKey } = jobDeps();
  const found: number[] = [];
  await forEachTenantDatabase(shared, appKey, async ({ knex, excludeTenantIds }) => {
    const rows: { tenant_id: number }[] = await knex('wabot_settings as s')
      .whereNotIn('s.tenant_id', excludeTenantIds)
      .where((w) =>
        w
          .whereExists((e) =>
            e
              .select(knex.raw('1'))
              .from('wabot_accounts as a')
              .whereRaw('a.tenant_id = s.tenant_id')
              .where({ 'a.provider': 'wablas', 'a.enabled': true }),
          )
          .orWhere((o) =>
            o
              .where('s.provider', 'wablas')
              .whereNotExists((e) =>
                e.select(knex.raw('1')).from('wabot_accounts as a').whereRaw('a.tenant_id = s.tenant_id'),
              ),
          ),
      )
      .select('s.tenant_id');
    found.push(...rows.map((r) => Number(r.tenant_id)));
  });
  if (!found.length) return [];
  const ids: number[] = (
    await shared('tenants')
      .whereIn('id', found)
      .where('demo_mode', false)
      .whereRaw(`modules @> '["wabot"]'::jsonb`)
      .pluck('id')
  ).map(Number);
  return ids.sort((x, y) => x - y);
}

async function tick(job: JobLike<unknown>): Promise<TickResult> {
  const { queues } = jobDeps();
  if (!queues) throw new UnrecoverableError('wabot-status: the worker has no queue producers (JobDeps.queues)');
  const queue = queues.get(QUEUE);
  const slot = Math.floor(jobClock().now().getTime() / TICK_MS);
  const withDevice = slot % DEVICE_EVERY_TICKS === 0;
  const tenants = await dueTenants();
  const result: TickResult = { tenants: tenants.length, reports: 0, devices: 0 };
  for (const t of tenants) {
    await queue.add(REPORT_JOB, { tenant_id: t, limit: SYNC_DEFAULT_LIMIT } satisfies ReportData, {
      ...JOB_OPTIONS,
      jobId: safeJobId(REPORT_JOB, t, 'slot', slot),
    });
    result.reports += 1;
    if (withDevice) {
      await queue.add(DEVICE_JOB, { tenant_id: t } satisfies DeviceData, {
        ...JOB_OPTIONS,
        jobId: safeJobId(DEVICE_JOB, t, 'slot', slot),
      });
      result.devices += 1;
    }
  }
  await job.log(`tick ${slot}: ${result.reports} report job(s), ${result.devices} device job(s)`);
  return result;
}
