import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import type Nodemailer from 'nodemailer';
import type MailComposerClass from 'nodemailer/lib/mail-composer';
import type SMTPConnectionClass from 'nodemailer/lib/smtp-connection';
import { lazyRequire } from '../../../lib/lazy-require.js';
import type { MailboxCredentials } from './types.js';
import { abortedError, classifySmtpError } from './errors.js';
import { mailTls, type MailTlsFor } from './tls.js';

const nodemailer = lazyRequire<typeof Nodemailer>('nodemailer');
const MailComposer = lazyRequire<typeof MailComposerClass>('nodemailer/lib/mail-composer');
const SMTPConnection = lazyRequire<typeof SMTPConnectionClass>('nodemailer/lib/smtp-connection');

/**
 * Outgoing mail of the mailbox client: composing the RFC 5322 message once (so the very same bytes
 * are sent and copied to Sent) and submitting it over the mailbox's own SMTP server, logged in
 * with the mailbox's address and password. One SMTP connection per message, closed afterwards.
 */

/** A message to compose. Addresses are `{name, address}` or plain addresses. */
export interface OutgoingMessage {
  from: string;
  to: ({ name: string; address: string } | string)[];
  subject: string;
  text: string;
  messageId: string;
  inReplyTo?: string | null;
  references?: string[];
}

/** `<uuid@domain-of-mailbox>` (the mailbox's own domain). */
export function newMessageId(mailbox: string): string {
  const domain = mailbox.slice(mailbox.lastIndexOf('@') + 1).toLowerCase() || 'localhost';
  return `<${crypto.randomUUID()}@${domain}>`;
}

/** Builds the raw message (Date, Message-ID, threading headers, text/plain UTF-8). */
export async function composeMessage(m: OutgoingMessage): Promise<Buffer> {
  const composer = new (MailComposer())({
    from: m.from,
    to: m.to,
    subject: m.subject,
    text: m.text,
    messageId: m.messageId,
    date: new Date(),
    inReplyTo: m.inReplyTo ?? undefined,
    references: m.references?.length ? m.references : undefined,
  });
  return composer.compile().build();
}

/**
 * Submits a composed message. `security`: ssl = implicit TLS, starttls = STARTTLS required
 * (nodemailer `requireTLS`: no AUTH and no message without a successful upgrade), none = plaintext
 * (no upgrade attempted). TLS verifies the server certificate (see tls.ts).
 * @param c the mailbox login and its SMTP server
 * @param envelope SMTP envelope (MAIL FROM, RCPT TO)
 * @param raw the composed RFC 5322 message
 * @param signal aborts the submission
 * @param tlsFor TLS options per host (default: built-in roots only)
 * @throws MailAuthError (535), MailServerError (connection, TLS certificate or STARTTLS failure,
 *   timeout, refusal, abort)
 */
export async function submit(
  c: MailboxCredentials,
  envelope: { from: string; to: string[] },
  raw: Buffer,
  signal?: AbortSignal,
  tlsFor: MailTlsFor = mailTls(),
): Promise<void> {
  if (signal?.aborted) throw abortedError('smtp');
  const ep = c.smtp;
  const transport = nodemailer().createTransport({
    host: ep.host,
    port: ep.port,
    secure: ep.security === 'ssl',
    requireTLS: ep.security === 'starttls',
    ignoreTLS: ep.security === 'none',
    ...(ep.security === 'none' ? {} : { tls: tlsFor(ep.host) }),
    auth: { user: c.email, pass: c.password },
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
    logger: false,
    debug: false,
  });
  let onAbort: (() => void) | null = null;
  try {
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        transport.close();
        reject(abortedError('smtp'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    aborted.catch(() => {
      /* raced below */
    });
    await Promise.race([transport.sendMail({ envelope, raw }), aborted]);
  } catch (err) {
    if (signal?.aborted) throw abortedError('smtp');
    throw classifySmtpError(err, c.password);
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    transport.close();
  }
}

/** What {@link submitTracked} reports about a submission while it runs. */
export interface SubmitProgress {
  /**
   * True once the server answered DATA (354) and the message body started to go out: from then on
   * a failure without a final reply leaves it unknown whether the server accepted the message.
   */
  bodyStarted: boolean;
}

/**
 * Submits a composed message like {@link submit} (same TLS rules, timeouts, login and error
 * classification), on nodemailer's SMTP session directly so that the caller learns whether the
 * body was handed over: `progress.bodyStarted` turns true when the server has accepted MAIL FROM,
 * RCPT TO and DATA and the first byte of the body is read for sending. A failure with
 * `bodyStarted` false is known not sent; one with `bodyStarted` true and no server reply (the
 * error has no `SMTP_<code>` code) may have been delivered (issue 9 item 5 "lost after DATA").
 * @param c the mailbox login (user = `c.email`) and its SMTP server
 * @param envelope SMTP envelope (MAIL FROM, RCPT TO)
 * @param raw the composed RFC 5322 message
 * @param progress set by the call (see SubmitProgress); read it after a failure
 * @param signal aborts the submission (closes the connection)
 * @param tlsFor TLS options per host (default: built-in roots only)
 * @throws MailAuthError (535), MailServerError (connection, TLS, timeout, refusal `SMTP_<code>`, abort)
 */
export async function submitTracked(
  c: MailboxCredentials,
  envelope: { from: string; to: string[] },
  raw: Buffer,
  progress: SubmitProgress,
  signal?: AbortSignal,
  tlsFor: MailTlsFor = mailTls(),
): Promise<void> {
  if (signal?.aborted) throw abortedError('smtp');
  const ep = c.smtp;
  const conn = new (SMTPConnection())({
    host: ep.host,
    port: ep.port,
    secure: ep.security === 'ssl',
    requireTLS: ep.security === 'starttls',
    ignoreTLS: ep.security === 'none',
    ...(ep.security === 'none' ? {} : { tls: tlsFor(ep.host) }),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 60_000,
    logger: false,
    debug: false,
  });
  // the body is read only once the server took DATA (SMTPConnection pipes it after the 354)
  const body = new Readable({
    read() {
      progress.bodyStarted = true;
      this.push(raw);
      this.push(null);
    },
  });
  let onAbort: (() => void) | null = null;
  try {
    await new Promise<void>((resolve, reject) => {
      let done = false;
      const finish = (err?: unknown) => {
        if (done) return;
        done = true;
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else resolve();
      };
      onAbort = () => {
        conn.close();
        finish(abortedError('smtp'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      conn.once('error', (e) => finish(e));
      conn.once('end', () =>
        finish(Object.assign(new Error('Connection closed unexpectedly'), { code: 'ECONNECTION', command: 'CONN' })),
      );
      conn.connect((err) => {
        if (err) return finish(err);
        const send = () => conn.send({ from: envelope.from, to: envelope.to }, body, (e) => (e ? finish(e) : finish()));
        // allowsAuth (the server announced AUTH) is set by SMTPConnection but missing from @types/nodemailer;
        // like nodemailer's SMTP transport, log in only when the server offers it
        if (!(conn as unknown as { allowsAuth?: boolean }).allowsAuth) return send();
        conn.login({ user: c.email, pass: c.password }, (e) => (e ? finish(e) : send()));
      });
    });
  } catch (err) {
    if (signal?.aborted) throw abortedError('smtp');
    throw classifySmtpError(err, c.password);
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    conn.close();
  }
}
