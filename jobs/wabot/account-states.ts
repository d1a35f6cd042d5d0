import type { Knex } from 'knex';
import type { DeviceResult } from '../adapters/chat-providers/wablas-status.js';

/**
 * `wabot_account_states` (issue 11 items 3 and 6): the last device status and the last webhook
 * registration per tenant and account id. Written by the wabot-status and wabot-webhook-register
 * jobs (and the config route, `pending`), read by GET /api/wabot/config.
 */

/** Webhook registration states (`pending` while the job has not run yet). */
export type WebhookState = 'pending' | 'registered' | 'unsupported' | 'failed';

/** Stores an account's device status checked at `at`. */
export async function storeDeviceStatus(
  knex: Knex | Knex.Transaction,
  tenantId: number,
  accountId: string,
  r: DeviceResult,
  at: Date,
): Promise<void> {
  await knex('wabot_account_states')
    .insert({
      tenant_id: tenantId,
      account_id: accountId,
      device_status: r.status,
      device_detail: r.detail || null,
      device_checked_at: at,
      updated_at: at,
    })
    .onConflict(['tenant_id', 'account_id'])
    .merge(['device_status', 'device_detail', 'device_checked_at', 'updated_at']);
}

/** Stores an account's webhook registration state at `at` (error: a short text without secrets). */
export async function storeWebhookState(
  knex: Knex | Knex.Transaction,
  tenantId: number,
  accountId: string,
  state: WebhookState,
  error: string | null,
  at: Date,
): Promise<void> {
  await knex('wabot_account_states')
    .insert({
      tenant_id: tenantId,
      account_id: accountId,
      webhook_status: state,
      webhook_error: error ? error.slice(0, 500) : null,
      webhook_at: at,
      updated_at: at,
    })
    .onConflict(['tenant_id', 'account_id'])
    .merge(['webhook_status', 'webhook_error', 'webhook_at', 'updated_at']);
}

/** One account's stored states as GET /api/wabot/config shows them. */
export interface AccountStates {
  device_status: { status: string; detail: string | null; checked_at: string } | null;
  webhook_registration: { status: string; error: string | null; at: string } | null;
}

/** The stored states of a tenant's accounts, by account id. */
export async function loadAccountStates(
  knex: Knex | Knex.Transaction,
  tenantId: number,
): Promise<Map<string, AccountStates>> {
  const rows = await knex('wabot_account_states').where({ tenant_id: tenantId });
  const iso = (d: unknown) => new Date(d as string | Date).toISOString();
  return new Map(
    rows.map((r) => [
      String(r.account_id),
      {
        device_status:
          r.device_status && r.device_checked_at
            ? { status: r.device_status, detail: r.device_detail ?? null, checked_at: iso(r.device_checked_at) }
            : null,
        webhook_registration:
          r.webhook_status && r.webhook_at
            ? { status: r.webhook_status, error: r.webhook_error ?? null, at: iso(r.webhook_at) }
            : null,
      },
    ]),
  );
}
