import { Model } from 'objection';
import { CommunicationAttachment } from './communication-attachment.js';

/** Channel of a communication (DESIGN.md §10). */
export type CommunicationChannel = 'email' | 'whatsapp' | 'messenger';
/** Status of a communication (issue 9 item 4). */
export type CommunicationStatus = 'received' | 'queued' | 'pending' | 'sent' | 'delivered' | 'read' | 'failed';

/**
 * Row of `communication_messages` (issue 9 item 4; DESIGN.md §10): the one inbox and outbox of
 * every channel. Tenant-scoped: query it through TenantScope.query(). A deleted row keeps its keys
 * (external_key, message_id) with deleted_at set and its bodies dropped: a tombstone.
 */
export class CommunicationMessage extends Model {
  static tableName = 'communication_messages';
  id!: number;
  tenant_id!: number;
  channel!: CommunicationChannel;
  direction!: 'in' | 'out';
  status!: CommunicationStatus;
  /** imap, pop3, admin, bot, notice */
  source!: string;
  /** The channel account (e-mail: the account's address in lower case). */
  account_ref!: string | null;
  customer_id!: number | null;
  user_id!: number | null;
  counterpart!: string | null;
  is_group!: boolean;
  from_address!: string | null;
  from_name!: string | null;
  to_addresses!: string | null;
  cc_addresses!: string | null;
  reply_to_address!: string | null;
  subject!: string | null;
  snippet!: string | null;
  body_text!: string | null;
  /** Sanitised HTML (sanitize-html), `cid:` links already rewritten. */
  body_html!: string | null;
  message_id!: string | null;
  in_reply_to!: string | null;
  references!: string | null;
  reply_to_id!: number | null;
  external_key!: string | null;
  error_code!: string | null;
  error_message!: string | null;
  occurred_at!: Date;
  received_at!: Date | null;
  queued_at!: Date | null;
  send_started_at!: Date | null;
  sent_at!: Date | null;
  delivered_at!: Date | null;
  read_at!: Date | null;
  failed_at!: Date | null;
  deleted_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;
  /** Chat rows (issue 10 item 3): phone, group or conversation; null for e-mail. */
  recipient_kind!: 'phone' | 'group' | 'conversation' | null;
  /** Chat rows: sent by a person's action (Test, Resend); settings.enabled false does not stop it. */
  manual!: boolean;
  /** Chat rows: the failed row this one resends. */
  resent_from_id!: number | null;
  /** Chat rows: when the send may happen next (a limiter or provider wait), null = now. */
  available_at!: Date | null;
  /** Chat rows: requests started (see jobs/wabot-send.ts). */
  send_attempts!: number;

  static relationMappings = () => ({
    attachments: {
      relation: Model.HasManyRelation,
      modelClass: CommunicationAttachment,
      join: { from: 'communication_messages.id', to: 'communication_attachments.message_id' },
    },
  });
}
