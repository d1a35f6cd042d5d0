import { randomBytes, timingSafeEqual } from 'node:crypto';
import { open, seal } from '../lib/crypto.js';

/**
 * The chat bot's stored secrets (issue 10 item 2), sealed at rest with APP_KEY (AES-256-GCM,
 * lib/crypto.ts; DESIGN.md §3) like the OLT and e-mail passwords: the top-level wa_token and
 * wa_secret_key and the inbound webhook secret of `wabot_settings`, and each account's token and
 * secret key in `wabot_accounts`. The associated data binds a value to its column and tenant (and
 * account id), so a value copied into another row, column or tenant does not open.
 */

/** Sealed columns of `wabot_settings`. */
export type WabotSettingSecret = 'wa_token' | 'wa_secret_key' | 'webhook_secret';
/** Sealed columns of `wabot_accounts`. */
export type WabotAccountSecret = 'token' | 'secret_key';

const settingAad = (field: WabotSettingSecret, tenantId: number) => `wabot_settings.${field}:${tenantId}`;
const accountAad = (field: WabotAccountSecret, tenantId: number, accountId: string) =>
  `wabot_accounts.${field}:${tenantId}:${accountId}`;

/**
 * Seals a secret of the tenant's `wabot_settings` row for `<field>_enc`.
 * @param appKey the 32-byte APP_KEY
 * @returns the sealed text (`v1.<iv>.<tag>.<ciphertext>`)
 */
export function sealWabotSetting(appKey: Buffer, field: WabotSettingSecret, tenantId: number, plain: string): string {
  return seal(appKey, plain, settingAad(field, tenantId));
}

/**
 * Opens what sealWabotSetting produced.
 * @throws Error when the key, column or tenant differ or the value was tampered with
 */
export function openWabotSetting(appKey: Buffer, field: WabotSettingSecret, tenantId: number, sealed: string): string {
  return open(appKey, sealed, settingAad(field, tenantId));
}

/**
 * Seals a secret of one account (`wabot_accounts.<field>_enc`), bound to the tenant and account id.
 * @param appKey the 32-byte APP_KEY
 */
export function sealWabotAccount(
  appKey: Buffer,
  field: WabotAccountSecret,
  tenantId: number,
  accountId: string,
  plain: string,
): string {
  return seal(appKey, plain, accountAad(field, tenantId, accountId));
}

/**
 * Opens what sealWabotAccount produced.
 * @throws Error when the key, column, tenant or account id differ or the value was tampered with
 */
export function openWabotAccount(
  appKey: Buffer,
  field: WabotAccountSecret,
  tenantId: number,
  accountId: string,
  sealed: string,
): string {
  return open(appKey, sealed, accountAad(field, tenantId, accountId));
}

/** A new inbound-webhook secret: 256 random bits, base64url (43 characters, URL-safe). */
export function newWebhookSecret(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Whether a `?key=` value equals the tenant's webhook secret, compared in constant time (for the
 * inbound webhook, issue 9).
 * @param sealed `wabot_settings.webhook_secret_enc`
 * @throws Error when the sealed value does not open (wrong APP_KEY or tampered)
 */
export function webhookKeyMatches(appKey: Buffer, tenantId: number, sealed: string, key: string): boolean {
  const want = Buffer.from(openWabotSetting(appKey, 'webhook_secret', tenantId, sealed));
  const got = Buffer.from(String(key));
  return got.length === want.length && timingSafeEqual(got, want);
}
