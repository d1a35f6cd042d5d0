import type { ChatAccount } from '../adapters/chat-providers/types.js';

/**
 * The contract between the chat-bot configuration (issue 10 item 2: `PUT /api/wabot/config`, its
 * tables and sealed secrets) and the send path (item 3: routing, the per-account limiter, the
 * `wabot-send` job). The configuration side loads a tenant's settings into a ChatSendConfig with
 * the secrets decrypted; the send path reads nothing else. Secrets live in this object only for
 * the duration of one job and are never logged, put in job data or returned.
 */

/**
 * One sending account as the send path sees it: the adapter's account (secrets in plain text) plus
 * its routing weight and pace. Without configured accounts the top-level provider, wa_token,
 * wa_secret_key and settings.base_url form the account `default` with the settings' limits
 * (issue 10 item 2); with accounts, settings' limits are each account's defaults.
 */
export interface SendAccount extends ChatAccount {
  /** `[A-Za-z0-9_-]{1,80}`; `default` for the implicit account */
  id: string;
  /** display label (may be empty) */
  label: string;
  /** disabled accounts never get a message; a queued message routed to one fails `account_unavailable` */
  enabled: boolean;
  /** smooth weighted round-robin weight, 1-100 */
  weight: number;
  /** at most this many sends in any 60 s window; 0 = no cap */
  maxPerMinute: number;
  /** at least this many seconds between two sends; 0 = no delay */
  delaySeconds: number;
}

/** A tenant's chat-bot configuration as the send path needs it. */
export interface ChatSendConfig {
  tenantId: number;
  /** settings.enabled: false makes automated sends fail `bot_disabled` (test and resend still send) */
  enabled: boolean;
  /** country calling code for phones written with a leading 0 (default '62') */
  callingCode: string;
  /** wa_number: the default recipient of `POST /api/wabot/test`, or null */
  defaultRecipient: string | null;
  /** every configured account, enabled or not, in configuration order */
  accounts: SendAccount[];
  /**
   * Identifies the routing pool (the enabled accounts' ids and weights, in order); the shared
   * weighted round-robin state resets when it changes.
   */
  poolVersion: string;
}

/**
 * Loads a tenant's chat-bot configuration with its secrets opened.
 * @returns null when the tenant has saved no chat-bot configuration
 */
export type ChatSendConfigSource = (tenantId: number) => Promise<ChatSendConfig | null>;
