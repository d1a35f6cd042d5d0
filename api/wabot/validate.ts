import { randomBytes } from 'node:crypto';
import type { FieldErrors } from '../errors.js';
import { ValidationFailed } from '../errors.js';
import {
  checkRecipientId,
  getChatProvider,
  InvalidRecipientError,
  normalizePhone,
  resolveRoot,
  type ProviderName,
} from '../../jobs/adapters/chat-providers/index.js';
import { SETTINGS_DEFAULTS } from './schemas.js';

/**
 * The rules of PUT /api/wabot/config beyond its JSON schema (issue 10 item 2): defaults, account
 * ids, and the provider rules the adapters apply at send time (jobs/adapters/chat-providers
 * `resolveRoot`), answered as 422 field errors before anything is stored.
 */

/** A secret as sent: absent (undefined) or empty keeps the stored one, null clears it. */
export type SecretInput = string | null | undefined;

/** One account of the body after schema validation. */
export interface AccountInput {
  id?: string;
  provider?: ProviderName;
  label?: string;
  token?: string | null;
  secret_key?: string | null;
  number?: string | null;
  base_url?: string | null;
  enabled?: boolean;
  weight?: number;
  max_messages_per_minute?: number | null;
  message_delay_seconds?: number | null;
}

/** Body of PUT /api/wabot/config after schema validation. */
export interface ConfigInput {
  provider: ProviderName;
  wa_token?: string | null;
  wa_secret_key?: string | null;
  wa_number?: string | null;
  settings?: {
    enabled?: boolean;
    auto_reply?: boolean;
    base_url?: string | null;
    ignore_groups?: boolean;
    webhook_auto_register?: boolean;
    reply_unknown_customers?: boolean;
    max_messages_per_minute?: number;
    message_delay_seconds?: number;
    routing_strategy?: 'auto';
    accounts?: AccountInput[];
  };
}

/** The settings columns of a save, defaults applied. */
export interface SettingsValues {
  enabled: boolean;
  auto_reply: boolean;
  base_url: string | null;
  ignore_groups: boolean;
  webhook_auto_register: boolean;
  reply_unknown_customers: boolean;
  max_messages_per_minute: number;
  message_delay_seconds: number;
  routing_strategy: 'auto';
}

/** One account of a save, defaults applied, its secrets still as sent. */
export interface AccountValues {
  account_id: string;
  provider: ProviderName;
  label: string;
  number: string | null;
  base_url: string | null;
  enabled: boolean;
  weight: number;
  max_messages_per_minute: number | null;
  message_delay_seconds: number | null;
  token: SecretInput;
  secret_key: SecretInput;
}

/** Whether a secret will be set after the save, given what was sent and whether one is stored. */
export function secretAfter(sent: SecretInput, stored: boolean): boolean {
  if (sent === null) return false;
  if (sent === undefined || sent === '') return stored;
  return true;
}

const emptyToNull = (v: string | null | undefined) => (v == null || v.trim() === '' ? null : v.trim());

/** A new account id (`acc_` and 10 hex digits). */
export function newAccountId(): string {
  return `acc_${randomBytes(5).toString('hex')}`;
}

/** Applies the defaults of settings (issue 10 item 2 and its decisions). */
export function settingsValues(input: ConfigInput): SettingsValues {
  const s = input.settings ?? {};
  return {
    enabled: s.enabled ?? SETTINGS_DEFAULTS.enabled,
    auto_reply: s.auto_reply ?? SETTINGS_DEFAULTS.auto_reply,
    base_url: emptyToNull(s.base_url),
    ignore_groups: s.ignore_groups ?? SETTINGS_DEFAULTS.ignore_groups,
    webhook_auto_register: s.webhook_auto_register ?? SETTINGS_DEFAULTS.webhook_auto_register,
    reply_unknown_customers: s.reply_unknown_customers ?? SETTINGS_DEFAULTS.reply_unknown_customers,
    max_messages_per_minute: s.max_messages_per_minute ?? SETTINGS_DEFAULTS.max_messages_per_minute,
    message_delay_seconds: s.message_delay_seconds ?? SETTINGS_DEFAULTS.message_delay_seconds,
    routing_strategy: 'auto',
  };
}

/** Applies the account defaults (provider: the top-level one; enabled true; weight 1; id generated). */
export function accountValues(input: ConfigInput): AccountValues[] {
  return (input.settings?.accounts ?? []).map((a) => ({
    account_id: a.id ?? newAccountId(),
    provider: a.provider ?? input.provider,
    label: (a.label ?? '').trim(),
    number: emptyToNull(a.number),
    base_url: emptyToNull(a.base_url),
    enabled: a.enabled ?? true,
    weight: a.weight ?? 1,
    max_messages_per_minute: a.max_messages_per_minute ?? null,
    message_delay_seconds: a.message_delay_seconds ?? null,
    token: a.token,
    secret_key: a.secret_key,
  }));
}

/** One sending configuration to check: where its fields live in the body, and what it will hold. */
interface Checked {
  provider: ProviderName;
  baseUrl: string | null;
  tokenSet: boolean;
  secretSet: boolean;
  fields: { base_url: string; token: string; secret_key: string };
  /** false: only refuse a malformed or forbidden base URL (the top level when accounts exist) */
  sends: boolean;
}

function checkProviderRules(c: Checked, errors: FieldErrors) {
  const add = (field: string, msg: string) => (errors[field] ??= []).push(msg);
  const spec = getChatProvider(c.provider);
  if (c.sends || c.baseUrl !== null) {
    const root = resolveRoot(spec, { provider: c.provider, base_url: c.baseUrl });
    if ('error' in root) add(c.fields.base_url, root.error);
  }
  if (c.sends && c.provider === 'messenger') {
    if (!c.tokenSet) add(c.fields.token, 'messenger needs the page access token.');
    if (!c.secretSet) add(c.fields.secret_key, 'messenger needs the page id.');
  }
}

/**
 * Checks a save (issue 10 item 2): wablas or waha without a base URL, messenger without page token
 * or page id (the stored ones count), a base URL for fonnte, watzap or starsender, a malformed base
 * URL, duplicate account ids, a wa_number that is no phone number (messenger: no conversation id).
 * The top-level provider and credentials are checked in full only when they send (no accounts).
 * @param stored which secrets are stored now: the top level, and per existing account id
 * @param callingCode the tenant's calling code, to read wa_number
 * @throws ValidationFailed (422) with dotted field paths (`settings.accounts.0.base_url`)
 */
export function checkConfig(
  input: ConfigInput,
  settings: SettingsValues,
  accounts: AccountValues[],
  stored: { top: { token: boolean; secret: boolean }; accounts: Map<string, { token: boolean; secret: boolean }> },
  callingCode: string,
): void {
  const errors: FieldErrors = {};
  checkProviderRules(
    {
      provider: input.provider,
      baseUrl: settings.base_url,
      tokenSet: secretAfter(input.wa_token, stored.top.token),
      secretSet: secretAfter(input.wa_secret_key, stored.top.secret),
      fields: { base_url: 'settings.base_url', token: 'wa_token', secret_key: 'wa_secret_key' },
      sends: accounts.length === 0,
    },
    errors,
  );
  const seen = new Set<string>();
  accounts.forEach((a, i) => {
    const at = `settings.accounts.${i}`;
    if (seen.has(a.account_id)) (errors[`${at}.id`] ??= []).push('The id is used by another account.');
    seen.add(a.account_id);
    const before = stored.accounts.get(a.account_id);
    checkProviderRules(
      {
        provider: a.provider,
        baseUrl: a.base_url,
        tokenSet: secretAfter(a.token, before?.token ?? false),
        secretSet: secretAfter(a.secret_key, before?.secret ?? false),
        fields: { base_url: `${at}.base_url`, token: `${at}.token`, secret_key: `${at}.secret_key` },
        sends: true,
      },
      errors,
    );
  });
  const number = emptyToNull(input.wa_number);
  if (number !== null) {
    try {
      if (input.provider === 'messenger') checkRecipientId(number);
      else normalizePhone(number, callingCode);
    } catch (err) {
      if (!(err instanceof InvalidRecipientError)) throw err;
      errors.wa_number = [err.message];
    }
  }
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
}
