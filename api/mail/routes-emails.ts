import { MailApiError } from './errors.js';
import {
  emailDetailResult,
  emailListResult,
  emailParams,
  listQuery,
  mailboxListResult,
  mailboxParams,
  replyBody,
  sendBody,
  sentResult,
} from './schemas.js';
import { credentialsFor, detailShape, listKeyMailboxes, requestSignal, summaryShape } from './mailboxes/service.js';
import type { MailContext } from './context.js';
import type { Input } from '../http/route.js';
import { mailRoute, type AnyMailRoute } from './routes.js';

/** The 404 of the routes that address one e-mail by UID. */
const EMAIL_NOT_FOUND_RESPONSE = {
  description: 'mailbox_not_found: the mailbox is not registered; email_not_found: no e-mail with this UID in INBOX.',
};
/**
 * The e-mail endpoints of document 3 (list mailboxes, list e-mails, detail, reply, send). Thin:
 * validated input -> MailboxClient call inside the request (the password in memory only) -> answer.
 */

/** Largest IMAP UID (RFC 3501: a 32-bit unsigned number). */
const MAX_UID = 4294967295;

function uidOf(ctx: MailContext): string {
  const id = String(ctx.state.params.id);
  if (Number(id) > MAX_UID)
    throw new MailApiError('invalid_request', 'The id must be an IMAP UID (1 to 4294967295).', {
      errors: { id: ['The id must be an IMAP UID (1 to 4294967295).'] },
    });
  return id;
}

function creds(ctx: MailContext) {
  return credentialsFor(ctx.state.mailbox!, ctx.state.mailboxPassword!);
}

/** Route table entries of the e-mail endpoints (document 3 order), mounted by api/mail/routes.ts. */
export const emailRoutes: AnyMailRoute[] = [
  mailRoute({
    method: 'get',
    path: '/api/v1/mailboxes',
    tag: 'mailboxes',
    scope: 'emails:read',
    summary: 'The mailboxes this API key may use',
    responses: { 200: { description: 'Mailbox list items, by address.', schema: mailboxListResult } },
    async handler(ctx) {
      ctx.body = { data: await listKeyMailboxes(ctx.deps.knex, ctx.state.key!) };
    },
  }),
  mailRoute<Input, { limit: number; unseen?: string }>({
    method: 'get',
    path: '/api/v1/mailboxes/:mailbox/emails',
    tag: 'emails',
    scope: 'emails:read',
    resolve: 'mailbox',
    password: true,
    summary: 'List e-mails of the INBOX, newest first',
    description:
      'Logs in over IMAP with the mailbox password and lists the INBOX by UID, newest first. `unseen=1` lists only e-mails without the \\Seen flag.',
    params: mailboxParams,
    query: listQuery,
    responses: { 200: { description: 'E-mail summaries; `id` is the IMAP UID.', schema: emailListResult } },
    async handler(ctx) {
      const q = ctx.state.query;
      const unseen = q.unseen === '1' || q.unseen === 'true';
      const list = await ctx.deps.mailClient.listEmails(creds(ctx), { limit: q.limit, unseen }, requestSignal(ctx.res));
      ctx.body = { data: list.map(summaryShape) };
    },
  }),
  mailRoute({
    method: 'get',
    path: '/api/v1/mailboxes/:mailbox/emails/:id',
    tag: 'emails',
    scope: 'emails:read',
    resolve: 'mailbox',
    password: true,
    summary: 'Read one e-mail (marks it seen)',
    description:
      "Fetches the e-mail by IMAP UID: document 3's fields (body_raw is the raw RFC 5322 source) plus the parsed text, html, to, cc, date and attachment metadata (no attachment content). Sets \\Seen.",
    params: emailParams,
    responses: { 200: { description: 'The e-mail.', schema: emailDetailResult }, 404: EMAIL_NOT_FOUND_RESPONSE },
    async handler(ctx) {
      const e = await ctx.deps.mailClient.getEmail(creds(ctx), uidOf(ctx), requestSignal(ctx.res));
      ctx.body = { data: detailShape(e) };
    },
  }),
  mailRoute<Input, Input, { body: string }>({
    method: 'post',
    path: '/api/v1/mailboxes/:mailbox/emails/:id/reply',
    tag: 'emails',
    scope: 'emails:reply',
    resolve: 'mailbox',
    password: true,
    summary: 'Reply to an e-mail in its thread',
    description:
      'Fetches the original over IMAP; To = its Reply-To or From; Subject "Re: ..." (never stacked); In-Reply-To = its Message-ID; References = its References followed by its Message-ID (RFC 5322 §3.6.4). Sends over the mailbox\'s SMTP, saves a copy to the Sent folder and sets \\Answered on the original.',
    params: emailParams,
    body: replyBody,
    responses: { 200: { description: 'Sent.', schema: sentResult }, 404: EMAIL_NOT_FOUND_RESPONSE },
    async handler(ctx) {
      const body = ctx.state.body;
      const r = await ctx.deps.mailClient.reply(creds(ctx), uidOf(ctx), { body: body.body }, requestSignal(ctx.res));
      ctx.body = { ok: true, message_id: r.message_id };
    },
  }),
  mailRoute<Input, Input, { to: string; subject: string; body: string }>({
    method: 'post',
    path: '/api/v1/mailboxes/:mailbox/send',
    tag: 'emails',
    scope: 'emails:send',
    resolve: 'mailbox',
    password: true,
    summary: 'Send a new e-mail from the mailbox',
    description:
      "Sends a plain-text e-mail to one recipient over the mailbox's SMTP and saves a copy to the Sent folder.",
    params: mailboxParams,
    body: sendBody,
    responses: { 200: { description: 'Sent.', schema: sentResult } },
    async handler(ctx) {
      const b = ctx.state.body;
      const r = await ctx.deps.mailClient.send(
        creds(ctx),
        { to: b.to, subject: b.subject, body: b.body },
        requestSignal(ctx.res),
      );
      ctx.body = { ok: true, message_id: r.message_id };
    },
  }),
];
