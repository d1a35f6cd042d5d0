import { Model } from 'objection';

/**
 * Row of `wabot_settings` (issue 10 item 2; document 2 "Chat-bot configuration"): a tenant's chat-bot
 * settings, one row per tenant. Tenant-scoped: query it through TenantScope.query(), never bare.
 * The token, secret key and webhook secret are sealed (db/wabot-secrets.ts) and never sent to a client.
 */
export class WabotSetting extends Model {
  static tableName = 'wabot_settings';
  id!: number;
  tenant_id!: number;
  /**
   * the top-level provider, one of the seven identifiers (jobs/adapters/chat-providers PROVIDERS):
   * the implicit account `default` when no accounts are configured
   */
  provider!: string;
  /** sealed wa_token, or null */
  wa_token_enc!: string | null;
  /** sealed wa_secret_key, or null */
  wa_secret_key_enc!: string | null;
  /** default test recipient (a phone; for messenger a conversation id) */
  wa_number!: string | null;
  enabled!: boolean;
  auto_reply!: boolean;
  /** settings.base_url (the top-level provider's manual API root), or null */
  base_url!: string | null;
  ignore_groups!: boolean;
  webhook_auto_register!: boolean;
  reply_unknown_customers!: boolean;
  /** sends per 60 s per account, 0 = no cap (the accounts' default) */
  max_messages_per_minute!: number;
  /** seconds between two sends of an account, 0 = none (the accounts' default) */
  message_delay_seconds!: number;
  routing_strategy!: 'auto';
  /** sealed 256-bit secret of the inbound webhook URL (`?key=`) */
  webhook_secret_enc!: string;
  created_at!: Date;
  updated_at!: Date;
}
