import type { TenantScope } from '../../db/tenant-scope.js';
import type { Queues } from '../../jobs/queues.js';
import { storeWebhookState } from '../../jobs/wabot/account-states.js';
import { DEFAULT_ACCOUNT_ID } from '../../jobs/wabot/load-config.js';
import { addRegisterJob, QUEUE } from '../../jobs/wabot-webhook-register.js';

/**
 * webhook_auto_register (issue 11 item 6): after PUT /api/wabot/config saved a configuration with
 * the switch on, one `wabot-webhook-register` job per enabled account (the implicit `default`
 * without configured accounts), its state `pending` until the job stores the result. Demo-mode
 * tenants register nothing (decision: registration reaches the real provider).
 */

/** The saved configuration as the PUT answered it (the parts used here). */
export interface SavedConfig {
  settings: { webhook_auto_register: boolean };
  accounts: { id: string; enabled: boolean }[];
  credential_status: { configured: boolean };
}

/**
 * Enqueues the registrations of a saved configuration when webhook_auto_register is on.
 * @returns the account ids enqueued (empty when the switch is off or the tenant is in demo mode)
 * @throws QueueUnavailableError (503) when Redis does not take a job (the configuration stays
 *   saved; saving again enqueues again)
 */
export async function requestWebhookRegistration(
  scope: TenantScope,
  queues: Queues,
  tenant: { demo_mode: boolean },
  publicBaseUrl: string,
  saved: SavedConfig,
): Promise<string[]> {
  if (!saved.settings.webhook_auto_register || tenant.demo_mode || !saved.credential_status.configured) return [];
  const ids = saved.accounts.length ? saved.accounts.filter((a) => a.enabled).map((a) => a.id) : [DEFAULT_ACCOUNT_ID];
  const at = new Date();
  for (const id of ids) {
    await storeWebhookState(scope.knex, scope.tenantId, id, 'pending', null, at);
    await addRegisterJob(
      queues.get(QUEUE),
      { tenant_id: scope.tenantId, account_id: id, public_base_url: publicBaseUrl },
      at.getTime(),
      queues.enqueueTimeoutMs,
    );
  }
  return ids;
}
