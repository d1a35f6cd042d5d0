import type { TenantScope } from '../../db/tenant-scope.js';
import { WabotAccount, WabotSetting } from '../../db/models/index.js';
import type { Queues } from '../../jobs/queues.js';
import { addDeviceJob, addReportJob, QUEUE, type DeviceJobResult } from '../../jobs/wabot-status.js';
import type { SyncStatusResult } from '../../jobs/wabot/status-sync.js';
import { waitForJob } from '../email/sync.js';
import { ValidationFailed } from '../errors.js';

/**
 * POST /api/wabot/sync-status and /api/wabot/sync-device-status (issue 11 item 3; document 2 "Chat
 * bot", "Errors": 200 ok=false warning=true on a temporary provider error). Both run as a job of
 * the `wabot-status` queue (jobs/wabot-status.ts) and wait for it at most STATUS_WAIT_MS; a job
 * still running then answers the warning and finishes in the background.
 */

/** How long a request waits for its job, in ms. */
export const STATUS_WAIT_MS = 30_000;

/**
 * Checks that the tenant has an enabled wablas account (decision: 422 otherwise): with configured
 * accounts one of them; without, the top-level provider (the implicit account `default`).
 * @throws ValidationFailed (422, field `provider`)
 */
export async function requireEnabledWablas(scope: TenantScope): Promise<void> {
  const s = await scope.query(WabotSetting).select('id', 'provider').first();
  const accounts = s ? await scope.query(WabotAccount).select('provider', 'enabled') : [];
  const ok = s
    ? accounts.length
      ? accounts.some((a) => a.provider === 'wablas' && a.enabled)
      : s.provider === 'wablas'
    : false;
  if (!ok)
    throw new ValidationFailed({
      provider: ['No enabled wablas account: the delivery report and device status are Wablas calls.'],
    });
}

const timedOut = (what: string) =>
  `The ${what} did not finish within ${STATUS_WAIT_MS / 1000} s; it goes on in the background.`;

/**
 * Runs a report job for up to `limit` outbox rows and waits for it.
 * @returns the job's answer; ok=false warning=true when the job failed or did not finish in time
 * @throws ValidationFailed (422) without an enabled wablas account; QueueUnavailableError (503)
 */
export async function runSyncStatus(
  scope: TenantScope,
  queues: Queues,
  limit: number,
  waitMs = STATUS_WAIT_MS,
): Promise<SyncStatusResult> {
  await requireEnabledWablas(scope);
  const queue = queues.get(QUEUE);
  const job = await addReportJob(queue, scope.tenantId, limit, queues.enqueueTimeoutMs);
  try {
    const r = await waitForJob<SyncStatusResult>(queue, job, waitMs);
    return r ?? { ok: false, warning: true, message: timedOut('status check'), checked: 0, updated: 0 };
  } catch (err) {
    return {
      ok: false,
      warning: true,
      message: `The status check failed: ${(err as Error).message}`,
      checked: 0,
      updated: 0,
    };
  }
}

/**
 * Runs a device job and waits for it.
 * @returns `{ok: true, data}` (one status per enabled wablas account), or ok=false warning=true
 * @throws ValidationFailed (422) without an enabled wablas account; QueueUnavailableError (503)
 */
export async function runSyncDevice(
  scope: TenantScope,
  queues: Queues,
  waitMs = STATUS_WAIT_MS,
): Promise<DeviceJobResult | { ok: false; warning: true; message: string; data: [] }> {
  await requireEnabledWablas(scope);
  const queue = queues.get(QUEUE);
  const job = await addDeviceJob(queue, scope.tenantId, queues.enqueueTimeoutMs);
  try {
    const r = await waitForJob<DeviceJobResult>(queue, job, waitMs);
    return r ?? { ok: false, warning: true, message: timedOut('device check'), data: [] };
  } catch (err) {
    return { ok: false, warning: true, message: `The device check failed: ${(err as Error).message}`, data: [] };
  }
}
