import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { TenantScope } from '../../db/tenant-scope.js';
import { tenantScopeOf } from '../../db/tenant-routing.js';
import { WabotAccount, WabotSetting } from '../../db/models/index.js';
import { openWabotAccount, openWabotSetting } from '../../db/wabot-secrets.js';
import { DEFAULT_CALLING_CODE } from '../adapters/chat-providers/phone.js';
import { isProviderName } from '../adapters/chat-providers/index.js';
import type { ProviderName } from '../adapters/chat-providers/types.js';
import type { ChatSendConfig, ChatSendConfigSource, SendAccount } from './send-config.js';

/**
 * The configuration side of the send contract (jobs/wabot/send-config.ts; issue 10 item 2): reads a
 * tenant's `wabot_settings` and `wabot_accounts` and opens their sealed secrets.
 */

/** Id of the implicit account made of the top-level provider and credentials when no account is configured. */
export const DEFAULT_ACCOUNT_ID = 'default';

/**
 * The tenant's country calling code: `tenants.settings.calling_code` when it holds 1 to 3 digits
 * (a string or a number, an optional leading `+`), else '62' (decision, issue 10 item 1).
 */
export function callingCodeOf(settings: unknown): string {
  const raw = (settings as { calling_code?: unknown } | null)?.calling_code;
  const s = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim().replace(/^\+/, '') : '';
  return /^[1-9][0-9]{0,2}$/.test(s) ? s : DEFAULT_CALLING_CODE;
}

/**
 * Identifies a routing pool: a hash of the enabled accounts' ids and weights in order (16 hex
 * characters); any change of membership, order or weight changes it.
 */
export function poolVersionOf(accounts: readonly Pick<SendAccount, 'id' | 'enabled' | 'weight'>[]): string {
  const pool = accounts.filter((a) => a.enabled).map((a) => [a.id, a.weight]);
  return createHash('sha256').update(JSON.stringify(pool)).digest('hex').slice(0, 16);
}

/**
 * Loads a tenant's chat-bot configuration with its secrets opened (the ChatSendConfigSource of the
 * send path). Rules (issue 10 item 2): without configured accounts the top-level provider,
 * wa_token, wa_secret_key and settings.base_url form the account `default` (enabled, weight 1,
 * label '') with the settings' limits; with accounts, only they send and an account's missing limit
 * is the settings' one. wa_number is the default recipient.
 * @param knex the shared database (the process knex or a transaction of it): the tenants row
 * @param appKey the 32-byte APP_KEY; needed only when a secret is stored (and to reach a cut-over
 *   tenant's database)
 * @param tenantId the tenant
 * @param scope the tenant's routed scope (a request's); default a job scope of tenantScopeOf, so the
 *   wabot tables are read in the tenant's database after its cutover (issue 15 item 4)
 * @returns the configuration, or null when the tenant has saved none
 * @throws Error when a secret is stored but appKey is missing or does not open it (a configuration fault)
 */
export async function loadChatSendConfig(
  knex: Knex | Knex.Transaction,
  appKey: Buffer | undefined,
  tenantId: number,
  scope?: TenantScope,
): Promise<ChatSendConfig | null> {
  scope ??= await tenantScopeOf(knex as Knex, tenantId, appKey, 'job');
  const s = await scope.query(WabotSetting).first();
  if (!s) return null;
  const rows = await scope.query(WabotAccount).orderBy('position').orderBy('id');
  const tenant = await knex('tenants').where({ id: tenantId }).first('settings');
  const key = () => {
    if (!appKey) throw new Error('APP_KEY is not configured: the chat-bot secrets cannot be opened');
    return appKey;
  };
  const setting = (field: 'wa_token' | 'wa_secret_key', sealed: string | null) =>
    sealed == null ? null : openWabotSetting(key(), field, tenantId, sealed);
  const accountSecret = (field: 'token' | 'secret_key', r: WabotAccount, sealed: string | null) =>
    sealed == null ? null : openWabotAccount(key(), field, tenantId, r.account_id, sealed);
  const provider = (p: string): ProviderName => {
    if (!isProviderName(p)) throw new Error(`wabot: unknown provider stored for tenant ${tenantId}`);
    return p;
  };

  const accounts: SendAccount[] = rows.length
    ? rows.map((r) => ({
        id: r.account_id,
        provider: provider(r.provider),
        label: r.label,
        token: accountSecret('token', r, r.token_enc),
        secret_key: accountSecret('secret_key', r, r.secret_key_enc),
        number: r.number,
        base_url: r.base_url,
        enabled: r.enabled,
        weight: r.weight,
        maxPerMinute: r.max_messages_per_minute ?? s.max_messages_per_minute,
        delaySeconds: r.message_delay_seconds ?? s.message_delay_seconds,
      }))
    : [
        {
          id: DEFAULT_ACCOUNT_ID,
          provider: provider(s.provider),
          label: '',
          token: setting('wa_token', s.wa_token_enc),
          secret_key: setting('wa_secret_key', s.wa_secret_key_enc),
          number: null,
          base_url: s.base_url,
          enabled: true,
          weight: 1,
          maxPerMinute: s.max_messages_per_minute,
          delaySeconds: s.message_delay_seconds,
        },
      ];
  return {
    tenantId,
    enabled: s.enabled,
    callingCode: callingCodeOf(tenant?.settings),
    defaultRecipient: s.wa_number && s.wa_number.trim() !== '' ? s.wa_number : null,
    accounts,
    poolVersion: poolVersionOf(accounts),
  };
}

/**
 * A ChatSendConfigSource over a knex and APP_KEY (what startWorkers gives the send path).
 * @param appKey the 32-byte APP_KEY
 */
export function chatSendConfigSource(knex: Knex, appKey: Buffer | undefined): ChatSendConfigSource {
  return (tenantId) => loadChatSendConfig(knex, appKey, tenantId);
}
