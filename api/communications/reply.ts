import type { Queue } from 'bullmq';
import type { TenantScope } from '../../db/tenant-scope.js';
import { CommunicationMessage, ExternalEmailAccount } from '../../db/models/index.js';
import { enqueueSend } from '../../jobs/email-send.js';
import { messageIds, newMessageId, threadHeaders } from '../../jobs/adapters/mailbox-client/index.js';
import { snippetOf } from '../../jobs/email/store.js';
import { AppError, NotFound, ValidationFailed } from '../errors.js';
import { communicationById, type Actor } from './service.js';

/**
 * POST /api/communications/{id}/reply-email (issue 9 item 5): an answer to an inbound e-mail,
 * written as an outbound row (`queued`, `reply_to_id`) and sent by the `email-send` job, which the
 * request enqueues after its commit and waits for.
 */

/** How long the request waits for the send, in ms (issue 9 item 5: 30 s). */
export const REPLY_WAIT_MS = 30_000;
/** How often the request looks at the row while it waits, in ms. */
const POLL_MS = 100;

/** Validated body. */
export interface ReplyEmailInput {
  to: string;
  subject: string;
  message: string;
}

/** 502 mail_server_error: the SMTP server refused the reply, or its delivery is unknown; `data` is the row. */
export class MailSendFailed extends AppError {
  /** @param message the server's reply or the reason (no password); @param data the message's detail */
  constructor(message: string, data: unknown) {
    super(502, 'mail_server_error', message, { extra: { data } });
  }
}

/** Options of {@link replyByEmail}. */
export interface ReplyOptions {
  /** the `email-send` producer queue */
  queue: Queue;
  /** bound of the enqueue, in ms (Queues.enqueueTimeoutMs) */
  enqueueTimeoutMs?: number;
  /** bound of the wait for the send, in ms (default REPLY_WAIT_MS) */
  waitMs?: number;
}

/**
 * Writes the reply row and sends it through the `email-send` queue.
 * - The original must be a live inbound e-mail of the tenant (else 422 `errors.id`; foreign or
 *   deleted: 404). The tenant must have a saved account with a password (else 422 `errors.email`).
 * - The row: channel email, direction out, status queued, source admin, From = the account's
 *   address, a new Message-ID `<uuid@account domain>`, In-Reply-To = the original's Message-ID,
 *   References = its References (or its single In-Reply-To) then its Message-ID (threadHeaders,
 *   RFC 5322 §3.6.4), customer_id of the original, user_id of the caller.
 * - After the commit the job `email-send-<row id>` is enqueued; the request then waits up to
 *   `waitMs` for the row to leave `queued`.
 * @returns `{status: 200, data}` once SMTP accepted it (`sent`), `{status: 202, data}` while it is still queued
 * @throws NotFound, ValidationFailed; QueueUnavailableError (503; the row stays queued for the
 *   sweep); MailSendFailed (502) when the row ended `failed`
 */
export async function replyByEmail(
  scope: TenantScope,
  actor: Actor,
  id: number,
  input: ReplyEmailInput,
  opts: ReplyOptions,
): Promise<{ status: 200 | 202; data: Awaited<ReturnType<typeof communicationById>> }> {
  const original = await scope.query(CommunicationMessage).findById(id).whereNull('deleted_at');
  if (!original) throw new NotFound('Communication');
  if (original.channel !== 'email' || original.direction !== 'in')
    throw new ValidationFailed({ id: ['Only an inbound e-mail can be answered by e-mail.'] });
  const account = await scope.query(ExternalEmailAccount).first();
  if (!account || !account.incoming_password_enc)
    throw new ValidationFailed({ email: ['No e-mail account is saved: save the settings first.'] });
  const thread = threadHeaders({
    messageId: messageIds(original.message_id)[0] ?? '',
    references: messageIds(original.references),
    inReplyTo: messageIds(original.in_reply_to),
  });
  const now = new Date();
  // one statement, committed before the enqueue (the job must find the row)
  const row = await scope.create(CommunicationMessage, {
    channel: 'email',
    direction: 'out',
    status: 'queued',
    source: 'admin',
    account_ref: account.email.toLowerCase(),
    customer_id: original.customer_id,
    user_id: actor.userId,
    counterpart: input.to,
    is_group: false,
    from_address: account.email,
    to_addresses: input.to,
    subject: input.subject,
    snippet: snippetOf(input.message),
    body_text: input.message,
    message_id: newMessageId(account.email),
    in_reply_to: thread.inReplyTo,
    references: thread.references.join(' ') || null,
    reply_to_id: id,
    occurred_at: now,
    queued_at: now,
    created_at: now,
    updated_at: now,
  });
  const rowId = Number(row.id);
  await enqueueSend(opts.queue, { tenant_id: scope.tenantId, communication_id: rowId }, opts.enqueueTimeoutMs);
  const status = await waitForOutcome(scope, rowId, opts.waitMs ?? REPLY_WAIT_MS);
  const data = await communicationById(scope, rowId, ['email']);
  if (status === 'sent') return { status: 200, data };
  if (status === 'failed') throw new MailSendFailed(data.error_message ?? 'The mail server refused the message.', data);
  return { status: 202, data };
}

/**
 * Polls the row until it leaves `queued` or `ms` have passed.
 * @returns the last status seen
 */
async function waitForOutcome(scope: TenantScope, id: number, ms: number): Promise<string> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await scope.table('communication_messages').where({ id }).first('status');
    const status = String(r?.status ?? 'queued');
    if (status !== 'queued' || Date.now() >= until) return status;
    await new Promise((res) => setTimeout(res, Math.min(POLL_MS, Math.max(0, until - Date.now()))));
  }
}
