import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { WabotAccount, WabotSetting } from '../../db/models/index.js';
import {
  newWebhookSecret,
  openWabotSetting,
  sealWabotAccount,
  sealWabotSetting,
  type WabotAccountSecret,
  type WabotSettingSecret,
} from '../../db/wabot-secrets.js';
import { callingCodeOf, DEFAULT_ACCOUNT_ID } from '../../jobs/wabot/load-config.js';
import { loadAccountStates, type AccountStates } from '../../jobs/wabot/account-states.js';
import { recordAudit } from '../audit-logs/service.js';
import { SETTINGS_DEFAULTS } from './schemas.js';
import { accountValues, checkConfig, settingsValues, type ConfigInput, type SecretInput } from './validate.js';

/**
 * The chat-bot configuration (issue 10 item 2; document 2 "Chat-bot configuration", "Chat bot"):
 * one `wabot_settings` row per tenant and its `wabot_accounts`. Secrets (wa_token, wa_secret_key,
 * the accounts' token and secret_key, the webhook secret) are sealed with APP_KEY and never
 * answered: the read shape says `token_set` / `secret_key_set`. The send path reads the same rows
 * through jobs/wabot/load-config.ts.
 */

/** Who acts, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

/** Where the webhook URL points: the service's public base URL and the tenant's slug. */
export interface WebhookBase {
  publicBaseUrl: string;
  tenantSlug: string;
}

function requireKey(appKey: Buffer | undefined): Buffer {
  if (!appKey) throw new Error('APP_KEY is not configured: chat-bot secrets cannot be stored or opened');
  return appKey;
}

/** `{PUBLIC_BASE_URL}/api/wabot/inbound/{tenant_slug}?key=<secret>` (decision, issue 10 item 2). */
export function webhookUrl(base: WebhookBase, secret: string): string {
  const root = base.publicBaseUrl.replace(/\/+$/, '');
  return `${root}/api/wabot/inbound/${encodeURIComponent(base.tenantSlug)}?key=${encodeURIComponent(secret)}`;
}

function settingsShape(s: WabotSetting | null) {
  const v = s ?? SETTINGS_DEFAULTS;
  return {
    enabled: v.enabled,
    auto_reply: v.auto_reply,
    base_url: v.base_url,
    ignore_groups: v.ignore_groups,
    webhook_auto_register: v.webhook_auto_register,
    reply_unknown_customers: v.reply_unknown_customers,
    max_messages_per_minute: v.max_messages_per_minute,
    message_delay_seconds: v.message_delay_seconds,
    routing_strategy: v.routing_strategy,
  };
}

function accountShape(a: WabotAccount) {
  return {
    id: a.account_id,
    provider: a.provider,
    label: a.label,
    number: a.number,
    base_url: a.base_url,
    enabled: a.enabled,
    weight: a.weight,
    max_messages_per_minute: a.max_messages_per_minute,
    message_delay_seconds: a.message_delay_seconds,
    token_set: a.token_enc != null,
    secret_key_set: a.secret_key_enc != null,
  };
}

/** The read shape without the webhook URL: also the audit summary (no secret in it). */
function summary(s: WabotSetting | null, accounts: WabotAccount[]) {
  return {
    provider: s?.provider ?? null,
    wa_number: s?.wa_number ?? null,
    credential_status: {
      configured: s != null,
      token_set: s?.wa_token_enc != null,
      secret_key_set: s?.wa_secret_key_enc != null,
    },
    settings: settingsShape(s),
    accounts: accounts.map(accountShape),
  };
}

async function load(scope: TenantScope, lock = false) {
  const q = scope.query(WabotSetting);
  const s = (await (lock ? q.forUpdate() : q).first()) ?? null;
  const accounts = await scope.query(WabotAccount).orderBy('position').orderBy('id');
  return { s, accounts };
}

/**
 * GET /api/wabot/config: the saved configuration (defaults and `webhook_url` null before the first
 * save). Never a secret; `webhook_url` carries the tenant's webhook key, which is meant to be pasted
 * into the provider's dashboard.
 * @param appKey APP_KEY, to open the webhook secret
 * @throws Error when a configuration is saved and appKey is missing (configuration fault)
 */
export async function getWabotConfig(scope: TenantScope, appKey: Buffer | undefined, base: WebhookBase) {
  const { s, accounts } = await load(scope);
  return withWebhook(scope, appKey, base, s, accounts, await loadAccountStates(scope.knex, scope.tenantId));
}

function withWebhook(
  scope: TenantScope,
  appKey: Buffer | undefined,
  base: WebhookBase,
  s: WabotSetting | null,
  accounts: WabotAccount[],
  states: Map<string, AccountStates>,
) {
  const { provider, wa_number, credential_status, settings, accounts: list } = summary(s, accounts);
  // issue 11 items 3 and 6: the last device status and webhook registration per account; without
  // configured accounts those of the implicit account `default`, at the top level
  const stateOf = (id: string): AccountStates => states.get(id) ?? { device_status: null, webhook_registration: null };
  const top = s && !accounts.length ? stateOf(DEFAULT_ACCOUNT_ID) : { device_status: null, webhook_registration: null };
  const secret = s
    ? openWabotSetting(requireKey(appKey), 'webhook_secret', scope.tenantId, s.webhook_secret_enc)
    : null;
  return {
    provider,
    wa_number,
    credential_status,
    webhook_url: secret ? webhookUrl(base, secret) : null,
    device_status: top.device_status,
    webhook_registration: top.webhook_registration,
    settings,
    // issue 11 item 1: each account's own URL names it (`&account=<id>`), so no detection is needed
    accounts: list.map((a) => ({
      ...a,
      webhook_url: secret ? `${webhookUrl(base, secret)}&account=${encodeURIComponent(a.id)}` : null,
      ...stateOf(a.id),
    })),
  };
}

/**
 * The sealed column value after a save: the stored one when nothing (or '') was sent, null when
 * null was sent, else the new value sealed.
 */
function nextSealed(sent: SecretInput, stored: string | null, sealNew: (plain: string) => string): string | null {
  if (sent === null) return null;
  if (sent === undefined || sent === '') return stored;
  return sealNew(sent);
}

/**
 * PUT /api/wabot/config: saves the whole configuration (absent fields take their defaults; the
 * accounts sent replace the stored list, an account keeping its id keeps its row). Secrets absent
 * or empty keep the stored ones, null clears them. The first save creates the webhook secret (256
 * random bits). Audited as `wabot.config_updated` (never a secret in it).
 * @param appKey APP_KEY, to seal the secrets
 * @throws ValidationFailed (422) for the provider rules (api/wabot/validate.ts checkConfig)
 * @throws Error when the app has no APP_KEY (configuration fault)
 */
export async function saveWabotConfig(
  scope: TenantScope,
  appKey: Buffer | undefined,
  actor: Actor,
  base: WebhookBase,
  input: ConfigInput,
) {
  const key = requireKey(appKey);
  const tenant = await scope.knex('tenants').where({ id: scope.tenantId }).first('settings');
  const settings = settingsValues(input);
  const accounts = accountValues(input);
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const before = await load(s, true);
    const storedAccounts = new Map(before.accounts.map((a) => [a.account_id, a]));
    checkConfig(
      input,
      settings,
      accounts,
      {
        top: { token: before.s?.wa_token_enc != null, secret: before.s?.wa_secret_key_enc != null },
        accounts: new Map(
          before.accounts.map((a) => [a.account_id, { token: a.token_enc != null, secret: a.secret_key_enc != null }]),
        ),
      },
      callingCodeOf(tenant?.settings),
    );
    const now = new Date();
    const sealTop = (field: WabotSettingSecret) => (plain: string) => sealWabotSetting(key, field, s.tenantId, plain);
    const cols: PartialModelObject<WabotSetting> = {
      provider: input.provider,
      wa_token_enc: nextSealed(input.wa_token, before.s?.wa_token_enc ?? null, sealTop('wa_token')),
      wa_secret_key_enc: nextSealed(input.wa_secret_key, before.s?.wa_secret_key_enc ?? null, sealTop('wa_secret_key')),
      wa_number: input.wa_number == null || input.wa_number.trim() === '' ? null : input.wa_number.trim(),
      ...settings,
      updated_at: now,
    };
    if (before.s) await s.query(WabotSetting).where('id', before.s.id).patch(cols);
    else await s.create(WabotSetting, { ...cols, webhook_secret_enc: sealTop('webhook_secret')(newWebhookSecret()) });

    const keep = accounts.map((a) => a.account_id);
    await s.query(WabotAccount).whereNotIn('account_id', keep).delete();
    for (const [position, a] of accounts.entries()) {
      const old = storedAccounts.get(a.account_id);
      const sealAcc = (field: WabotAccountSecret) => (plain: string) =>
        sealWabotAccount(key, field, s.tenantId, a.account_id, plain);
      const row: PartialModelObject<WabotAccount> = {
        position,
        provider: a.provider,
        label: a.label,
        number: a.number,
        base_url: a.base_url,
        enabled: a.enabled,
        weight: a.weight,
        max_messages_per_minute: a.max_messages_per_minute,
        message_delay_seconds: a.message_delay_seconds,
        token_enc: nextSealed(a.token, old?.token_enc ?? null, sealAcc('token')),
        secret_key_enc: nextSealed(a.secret_key, old?.secret_key_enc ?? null, sealAcc('secret_key')),
        updated_at: now,
      };
      if (old) await s.query(WabotAccount).where('id', old.id).patch(row);
      else await s.create(WabotAccount, { ...row, account_id: a.account_id });
    }

    const after = await load(s);
    await recordAudit(s, {
      userId: actor.userId,
      action: 'wabot.config_updated',
      subject: { type: 'wabot_settings', id: after.s!.id },
      before: before.s ? summary(before.s, before.accounts) : null,
      after: summary(after.s, after.accounts),
      ip: actor.ip ?? null,
    });
    return withWebhook(s, key, base, after.s, after.accounts, await loadAccountStates(trx, s.tenantId));
  });
}
