import addressparser from 'nodemailer/lib/addressparser';
import type { MailboxClient, MailboxCredentials } from './types.js';
import { ImapPool } from './pool.js';
import { appendToSent, fetchDetail, fetchReplyOriginal, listInbox, markAnswered } from './imap.js';
import { composeMessage, newMessageId, submit } from './smtp.js';
import { replyRecipients, replySubject, threadHeaders } from './parse.js';
import { MailServerError } from './errors.js';
import { mailTls, type MailTlsOptions } from './tls.js';

/**
 * The mailbox client of the Mailbox API (issue 3, document 3): IMAP with imapflow, SMTP with
 * nodemailer, parsing with mailparser. Mailbox passwords are used for the request only and are
 * never stored; logged-in IMAP connections are reused in memory for a short time (pool.ts).
 */
export type {
  MailServerEndpoint,
  MailboxCredentials,
  EmailSummary,
  EmailAttachmentMeta,
  EmailDetail,
  MailboxClient,
} from './types.js';
export {
  MailAuthError,
  MailServerError,
  EmailNotFoundError,
  classifyImapError,
  classifySmtpError,
  classifyTlsError,
  scrubSecret,
} from './errors.js';
export { mailTls, type MailTlsOptions } from './tls.js';
export { replySubject, threadHeaders, formatRfc2822 } from './parse.js';
export { messageIds } from './parse.js';
export { composeMessage, newMessageId, submit, submitTracked, type SubmitProgress } from './smtp.js';
export { appendToSent, sentFolder } from './imap.js';
export { imapOptions } from './pool.js';
export { poolKey } from './pool.js';

/** Options of {@link createMailboxClient}. */
export interface MailboxClientOptions {
  /** ms an unused IMAP connection stays open for reuse (default 60000; 0 = close after each call) */
  idleMs?: number;
  /** most pooled IMAP connections (default 100) */
  maxPooled?: number;
  /** ms to connect and get the greeting (default 10000) */
  connectTimeoutMs?: number;
  /** receives warnings (e.g. a sent message whose Sent copy failed); pino-compatible; never given a password */
  logger?: { warn(obj: object, msg: string): void };
  /**
   * TLS of the `ssl` and `starttls` endpoints: `{ ca }` = extra CA certificate(s) (PEM) trusted in
   * addition to Node's built-in roots. Verification of the certificate and host name is always on.
   */
  tls?: MailTlsOptions;
}

/**
 * Creates the client. Behaviour per method (shared contract of issue 3):
 * - listEmails: INBOX, UID descending, `limit` newest, `unseen` -> UNSEEN search; envelopes only.
 * - getEmail: full source -> body_raw and parsed fields; sets \Seen.
 * - reply: To = Reply-To or From; Subject "Re: " without stacking; In-Reply-To and References
 *   per RFC 5322 §3.6.4; From = the mailbox; SMTP with the mailbox login; copy to \Sent; \Answered.
 * - send: same without threading.
 * Message-IDs are `<uuid@mailbox-domain>`. After a successful SMTP submission the Sent copy and
 * the \Answered flag are best effort: their failure is logged (warn) and the call still succeeds,
 * so a client never re-sends a message that went out.
 * TLS (`ssl`, `starttls` endpoints): the server certificate and host name are always verified; a
 * refused certificate is a MailServerError with code TLS_CERT_* and the message "TLS certificate
 * of the mail server could not be verified (...)", a server without STARTTLS where it is required
 * is STARTTLS_UNAVAILABLE (no login is attempted in plaintext).
 * @param opts see {@link MailboxClientOptions}
 * @throws Error at creation when `opts.tls.ca` is not PEM certificate text
 * @throws MailAuthError (IMAP AUTHENTICATIONFAILED, SMTP 535), MailServerError (connection refused,
 *   TLS failure, timeout, server refusal, abort), EmailNotFoundError (unknown UID) from the methods
 */
export function createMailboxClient(opts: MailboxClientOptions = {}): MailboxClient {
  const tlsFor = mailTls(opts.tls);
  const pool = new ImapPool({
    idleMs: opts.idleMs,
    maxPooled: opts.maxPooled,
    connectTimeoutMs: opts.connectTimeoutMs,
    tls: tlsFor,
  });

  /** Sent copy and \Answered after a successful submission (never throws). */
  async function afterSend(c: MailboxCredentials, raw: Buffer, answeredUid: string | null): Promise<void> {
    try {
      await pool.run(c, undefined, async (client, entry) => {
        await appendToSent(client, entry, raw);
        if (answeredUid) await markAnswered(client, answeredUid);
      });
    } catch (err) {
      const e = err as MailServerError;
      opts.logger?.warn(
        { code: e.code ?? 'UNKNOWN', mailbox: c.email },
        `message sent, but saving the Sent copy${answeredUid ? ' or flagging the original' : ''} failed: ${e.message}`,
      );
    }
  }

  return {
    listEmails: (c, o, signal) => pool.run(c, signal, (client) => listInbox(client, o), true),

    getEmail: (c, uid, signal) => pool.run(c, signal, (client) => fetchDetail(client, uid), true),

    async reply(c, uid, o, signal) {
      const original = await pool.run(c, signal, (client) => fetchReplyOriginal(client, uid), true);
      const to = replyRecipients(original);
      if (!to.length)
        throw new MailServerError(
          'imap',
          'NO_RECIPIENT',
          'The original e-mail has neither a From nor a Reply-To address to reply to',
        );
      const thread = threadHeaders(original);
      const messageId = newMessageId(c.email);
      const raw = await composeMessage({
        from: c.email,
        to,
        subject: replySubject(original.subject),
        text: o.body,
        messageId,
        inReplyTo: thread.inReplyTo,
        references: thread.references,
      });
      await submit(c, { from: c.email, to: to.map((a) => a.address) }, raw, signal, tlsFor);
      await afterSend(c, raw, uid);
      return { message_id: messageId };
    },

    async send(c, o, signal) {
      const to = addressparser(o.to, { flatten: true })
        .filter((a) => a.address)
        .map((a) => ({ name: a.name, address: a.address }));
      if (!to.length) throw new MailServerError('smtp', 'NO_RECIPIENT', 'No valid recipient address');
      const messageId = newMessageId(c.email);
      const raw = await composeMessage({ from: c.email, to, subject: o.subject, text: o.body, messageId });
      await submit(c, { from: c.email, to: to.map((a) => a.address) }, raw, signal, tlsFor);
      await afterSend(c, raw, null);
      return { message_id: messageId };
    },

    verifyLogin: (c, signal) => pool.run(c, signal, async () => undefined, true),

    close: () => pool.close(),
  };
}
