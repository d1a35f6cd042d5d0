import { Model } from 'objection';

/** Sync state of an e-mail account (issue 9 item 3). */
export type EmailSyncStatus = 'never' | 'queued' | 'running' | 'ok' | 'failed' | 'auth_failed';

/**
 * Row of `external_email_accounts` (issue 9 item 1): the tenant's one mailbox, synced into the shared
 * inbox. Tenant-scoped: query it through TenantScope.query(), never bare. Passwords are sealed
 * (db/credentials.ts `email_accounts`) and never sent to a client.
 */
export class ExternalEmailAccount extends Model {
  static tableName = 'external_email_accounts';
  id!: number;
  tenant_id!: number;
  email!: string;
  incoming_protocol!: 'imap' | 'pop3';
  incoming_host!: string;
  incoming_port!: number;
  incoming_encryption!: 'none' | 'ssl' | 'starttls';
  incoming_username!: string;
  /** Sealed incoming password (lib/crypto.ts, APP_KEY). */
  incoming_password_enc!: string | null;
  outgoing_host!: string;
  outgoing_port!: number;
  outgoing_encryption!: 'none' | 'ssl' | 'starttls';
  outgoing_username!: string;
  /** Sealed outgoing password; null = the incoming one is used for SMTP. */
  outgoing_password_enc!: string | null;
  /** Always true: mail stays on the server. */
  leave_on_server!: boolean;
  sync_status!: EmailSyncStatus;
  last_synced_at!: Date | null;
  last_error!: string | null;
  /** IMAP cursor: the INBOX UIDVALIDITY and the last UID imported under it. */
  imap_uidvalidity!: number | null;
  imap_last_uid!: number | null;
  created_at!: Date;
  updated_at!: Date;
}
