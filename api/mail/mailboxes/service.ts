import type { Knex } from 'knex';
import type { ApiKeyInfo } from '../keys/service.js';
import type { ResolvedMailbox } from '../context.js';
import type { EmailDetail, EmailSummary, MailboxCredentials } from '../../../jobs/adapters/mailbox-client/index.js';

/**
 * Mailbox reads of the Mailbox API (document 3): the key's mailboxes and the shapes the e-mail
 * endpoints answer. IMAP/SMTP themselves are done by the MailboxClient (jobs/adapters/mailbox-client).
 */

/** Mailbox list item (document 3). */
export interface MailboxListItem {
  email: string;
  imap_host: string;
  smtp_host: string;
}

/**
 * The mailboxes an API key may use, ordered by address.
 * @param key the verified key (its `mailboxes` are lowercase addresses of its domain)
 */
export async function listKeyMailboxes(knex: Knex, key: ApiKeyInfo): Promise<MailboxListItem[]> {
  if (!key.mailboxes.length) return [];
  return knex('mail_mailboxes as m')
    .join('mail_domains as d', 'd.id', 'm.domain_id')
    .whereIn('m.email', key.mailboxes)
    .where('m.domain_id', key.domain_id)
    .orderBy('m.email')
    .select('m.email', 'd.imap_host', 'd.smtp_host');
}

/**
 * The credentials of one request: the registered mailbox's servers and the password the client
 * sent. Built per request and dropped with it; never stored.
 */
export function credentialsFor(mailbox: ResolvedMailbox, password: string): MailboxCredentials {
  return { email: mailbox.email, password, imap: { ...mailbox.imap }, smtp: { ...mailbox.smtp } };
}

/** E-mail summary as listed (document 3 fields + seen). */
export function summaryShape(e: EmailSummary) {
  return { id: e.id, from: e.from, to: e.to, subject: e.subject, date: e.date, message_id: e.message_id, seen: e.seen };
}

/** E-mail detail (document 3 fields + to, cc, date, in_reply_to, reply_to, text, html, attachments metadata). */
export function detailShape(e: EmailDetail) {
  return {
    id: e.id,
    from: e.from,
    to: e.to,
    cc: e.cc,
    subject: e.subject,
    date: e.date,
    message_id: e.message_id,
    references: e.references,
    in_reply_to: e.in_reply_to,
    reply_to: e.reply_to,
    body_raw: e.body_raw,
    text: e.text,
    html: e.html,
    attachments: e.attachments.map((a) => ({
      filename: a.filename,
      content_type: a.content_type,
      size: a.size,
      content_id: a.content_id,
    })),
  };
}

/**
 * An AbortSignal that fires when the client goes away before the answer is written, so IMAP/SMTP
 * work of an abandoned request stops.
 */
export function requestSignal(res: import('node:http').ServerResponse): AbortSignal {
  const ac = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) ac.abort(new Error('client closed the request'));
  });
  return ac.signal;
}
