import { Model } from 'objection';

/**
 * Row of `wabot_accounts` (issue 10 item 2; document 2 "Chat-bot configuration", account entry): one
 * sending account of a tenant, in configuration order (`position`). Tenant-scoped: query it through
 * TenantScope.query(), never bare. Token and secret key are sealed (db/wabot-secrets.ts).
 */
export class WabotAccount extends Model {
  static tableName = 'wabot_accounts';
  id!: number;
  tenant_id!: number;
  /** the account's id in the settings: `[A-Za-z0-9_-]{1,80}`, unique per tenant */
  account_id!: string;
  /** 0-based order of the account in settings.accounts */
  position!: number;
  /** one of the seven provider identifiers (jobs/adapters/chat-providers PROVIDERS) */
  provider!: string;
  label!: string;
  /** sealed token, or null */
  token_enc!: string | null;
  /** sealed secret key, or null */
  secret_key_enc!: string | null;
  /** the account's own number (decision: not a recipient) */
  number!: string | null;
  base_url!: string | null;
  enabled!: boolean;
  /** weighted round-robin weight, 1-100 */
  weight!: number;
  /** sends per 60 s; null = the settings' max_messages_per_minute */
  max_messages_per_minute!: number | null;
  /** seconds between sends; null = the settings' message_delay_seconds */
  message_delay_seconds!: number | null;
  created_at!: Date;
  updated_at!: Date;
}
