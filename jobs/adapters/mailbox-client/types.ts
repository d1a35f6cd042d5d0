/**
 * Shapes of the mailbox client (issue 3 shared contract; document 3 "Resources and their fields").
 * Re-exported by index.ts.
 */

/**
 * One IMAP or SMTP server of a mail domain. `ssl` = implicit TLS, `starttls` = upgrade required, `none` = plaintext
 * (loopback/demo only).
 */
export interface MailServerEndpoint {
  host: string;
  port: number;
  security: 'ssl' | 'starttls' | 'none';
}

/** A mailbox login as the client presents it per request. The password lives in memory only. */
export interface MailboxCredentials {
  email: string;
  password: string;
  imap: MailServerEndpoint;
  smtp: MailServerEndpoint;
}

/** E-mail summary (document 3) plus `seen`. `id` is the IMAP UID; `date` is RFC 2822 style. */
export interface EmailSummary {
  id: string;
  from: string;
  to: string;
  subject: string;
  date: string;
  message_id: string;
  seen: boolean;
}

/** Metadata of one attachment (no content). `size` in bytes (decoded). */
export interface EmailAttachmentMeta {
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
}

/** E-mail detail (document 3) plus parsed fields. `body_raw` is the raw RFC 5322 source. */
export interface EmailDetail {
  id: string;
  from: string;
  to: string;
  cc: string;
  subject: string;
  date: string;
  message_id: string;
  references: string;
  in_reply_to: string;
  reply_to: string;
  body_raw: string;
  text: string | null;
  html: string | null;
  attachments: EmailAttachmentMeta[];
}

/** The mailbox client (contract of issue 3). Every method may throw MailAuthError, MailServerError. */
export interface MailboxClient {
  /** INBOX, newest first (UID descending), at most `limit`; `unseen` keeps messages without \Seen. */
  listEmails(
    c: MailboxCredentials,
    o: { limit: number; unseen: boolean },
    signal?: AbortSignal,
  ): Promise<EmailSummary[]>;
  /** One INBOX message by UID; marks it \Seen. @throws EmailNotFoundError */
  getEmail(c: MailboxCredentials, uid: string, signal?: AbortSignal): Promise<EmailDetail>;
  /**
   * Replies in thread (RFC 5322 §3.6.4) over the mailbox's SMTP, copies to Sent, flags the original \Answered.
   * @throws EmailNotFoundError
   */
  reply(c: MailboxCredentials, uid: string, o: { body: string }, signal?: AbortSignal): Promise<{ message_id: string }>;
  /** Sends a new plain-text e-mail over the mailbox's SMTP and copies it to Sent. */
  send(
    c: MailboxCredentials,
    o: { to: string; subject: string; body: string },
    signal?: AbortSignal,
  ): Promise<{ message_id: string }>;
  /** Logs in over IMAP (the connection is pooled for the next call). */
  verifyLogin(c: MailboxCredentials, signal?: AbortSignal): Promise<void>;
  /** Closes every pooled connection. */
  close(): Promise<void>;
}
