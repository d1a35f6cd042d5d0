import crypto from 'node:crypto';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { MailboxCredentials } from './types.js';
import { abortedError, classifySmtpError } from './errors.js';
import { mailTls, type MailTlsFor } from './tls.js';

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
  const composer = new MailComposer({
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
  const transport = nodemailer.createTransport({
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
