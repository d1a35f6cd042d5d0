import { UnrecoverableError } from 'bullmq';
import type * as Imapflow from 'imapflow';
import { lazyRequire } from '../../lib/lazy-require.js';
import type { Knex } from 'knex';
import { CommunicationMessage } from '../../db/models/index.js';
import { TenantScope } from '../../db/tenant-scope.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { SHUTDOWN_ABORT_REASON, type JobLike } from '../queues.js';
import {
  appendToSent,
  classifyImapError,
  composeMessage,
  messageIds,
  MailServerError,
  imapOptions,
  scrubSecret,
  submitTracked,
  type MailboxCredentials,
} from '../adapters/mailbox-client/index.js';
import { accountLogins, loadAccount } from './account.js';
import { classifySendFailure } from './send-outcome.js';

const imapflow = lazyRequire<typeof Imapflow>('imapflow');

/**
 * One queued outbound e-mail sent over the tenant account's SMTP server (issue 9 item 5), at most
 * once:
 * - only a row that is `queued`, not deleted and not started is sent; the start is claimed by
 *   setting `send_started_at` in one conditional UPDATE before the SMTP session opens;
 * - a row found `queued` with `send_started_at` set is a send that started and never finished
 *   (worker killed, job stalled): `failed` with `delivery_unknown`, never sent again;
 * - known not sent (see send-outcome.ts) -> `send_started_at` cleared, the job throws and BullMQ
 *   retries it; on the last attempt the row becomes `failed`;
 * - sent -> `sent`, then a copy is appended to the IMAP Sent folder (best effort: a failure is
 *   logged, never an error). The original is not flagged.
 * No password in the job data, its log, the row or any error text.
 */

/** The job as the sender uses it: BullMQ's attempt counters besides JobLike. */
export type SendJob = JobLike<unknown> & { attemptsMade?: number; opts?: { attempts?: number } };

/** What the sender returns (bull-board shows it). */
export interface EmailSendResult {
  kind: 'send';
  communication_id: number;
  outcome: 'sent' | 'failed' | 'skipped';
  /** skipped: why (missing, deleted, <status>, claimed); failed: the error code */
  reason?: string;
  /** sent: whether the Sent copy was stored */
  sent_copy?: boolean;
}

/** What the sender needs from its process. */
export interface SendContext {
  knex: Knex;
  appKey?: Buffer;
  clock: Clock;
  logger?: Logger;
  signal?: AbortSignal;
}

/**
 * Appends a sent message to the account's Sent folder over IMAP: the mailbox with special-use
 * \Sent, else "Sent" (created when missing), as the Mailbox API does.
 * @throws MailAuthError, MailServerError (the caller logs them)
 */
export async function appendSentCopy(login: MailboxCredentials, raw: Buffer, signal?: AbortSignal): Promise<void> {
  const client = new (imapflow().ImapFlow)(imapOptions(login, 10_000));
  client.on('error', () => {
    /* surfaced by the failing command */
  });
  const onAbort = () => client.close();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect();
    await appendToSent(client, { key: 'email-send', client }, raw);
  } catch (e) {
    throw classifyImapError(e, login.password);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await client.logout().catch(() => client.close());
  }
}

/**
 * Sends the queued e-mail `communicationId` of `tenantId` (see the file comment).
 * @returns the outcome; `failed` rows also end the job with UnrecoverableError (thrown, not returned)
 * @throws UnrecoverableError after marking the row `failed` (refusal, delivery unknown, last attempt,
 *   no usable account); MailServerError while the send is known not done and attempts remain
 */
export async function sendQueuedEmail(
  c: SendContext,
  job: SendJob,
  tenantId: number,
  communicationId: number,
): Promise<EmailSendResult> {
  const scope = new TenantScope(c.knex, tenantId);
  const result = (outcome: EmailSendResult['outcome'], reason?: string): EmailSendResult => ({
    kind: 'send',
    communication_id: communicationId,
    outcome,
    ...(reason ? { reason } : {}),
  });
  const rows = () => scope.table('communication_messages').where({ id: communicationId });
  /** Marks the row failed (only from queued) and ends the job without a retry. */
  const fail = async (code: string, message: string): Promise<never> => {
    const now = c.clock.now();
    await rows()
      .where({ status: 'queued' })
      .update({ status: 'failed', error_code: code, error_message: message, failed_at: now, updated_at: now });
    await job.log(`failed: ${code}: ${message}`);
    throw new UnrecoverableError(`${code}: ${message}`);
  };

  const row = await scope.query(CommunicationMessage).findById(communicationId);
  if (!row || row.channel !== 'email' || row.direction !== 'out') return result('skipped', 'missing');
  if (row.deleted_at) return result('skipped', 'deleted');
  if (row.status !== 'queued') return result('skipped', row.status);
  if (row.send_started_at) {
    return fail(
      'delivery_unknown',
      'An earlier attempt started sending and did not finish; the message may have been delivered, so it is not sent again.',
    );
  }
  const account = await loadAccount(c.knex, tenantId);
  if (!account) return fail('no_account', 'No e-mail account is saved.');
  let logins: ReturnType<typeof accountLogins>;
  try {
    logins = accountLogins(account, c.appKey);
  } catch (e) {
    return fail('no_account', (e as Error).message);
  }
  const scrub = (m: string) => logins.secrets.reduce((s, pw) => scrubSecret(s, pw), m);
  const to = row.counterpart ?? '';
  const raw = await composeMessage({
    from: account.email,
    to: [to],
    subject: row.subject ?? '',
    text: row.body_text ?? '',
    messageId: row.message_id ?? '',
    inReplyTo: row.in_reply_to,
    references: messageIds(row.references),
  });

  const startedAt = c.clock.now();
  const claimed = await rows()
    .where({ status: 'queued' })
    .whereNull('send_started_at')
    .whereNull('deleted_at')
    .update({ send_started_at: startedAt, updated_at: startedAt });
  if (!claimed) return result('skipped', 'claimed');

  const progress = { bodyStarted: false };
  try {
    await submitTracked(logins.outgoing, { from: account.email, to: [to] }, raw, progress, c.signal);
  } catch (e) {
    const f = classifySendFailure(e, progress.bodyStarted);
    const message = scrub(f.message);
    if (f.kind !== 'retry') return fail(f.code, message);
    const shutdown = c.signal?.aborted && c.signal.reason === SHUTDOWN_ABORT_REASON;
    const last = (job.attemptsMade ?? 0) + 1 >= (job.opts?.attempts ?? 1);
    if (last && !shutdown) {
      await rows().where({ send_started_at: startedAt }).update({ send_started_at: null });
      return fail(f.code, message);
    }
    // known not sent: free the row for the next attempt
    await rows()
      .where({ status: 'queued', send_started_at: startedAt })
      .update({ send_started_at: null, error_code: f.code, error_message: message, updated_at: c.clock.now() });
    await job.log(`not sent (${f.code}): ${message}; retried`);
    throw new MailServerError('smtp', f.code, message);
  }
  const sentAt = c.clock.now();
  await rows()
    .where({ status: 'queued' })
    .update({ status: 'sent', sent_at: sentAt, error_code: null, error_message: null, updated_at: sentAt });
  await job.log(`sent to the SMTP server ${account.outgoing_host}:${account.outgoing_port}`);

  let copied = false;
  if (account.incoming_protocol === 'imap') {
    try {
      await appendSentCopy(logins.incoming, raw, c.signal);
      copied = true;
    } catch (e) {
      const message = scrub((e as Error).message);
      c.logger?.warn(
        { communication_id: communicationId, tenant_id: tenantId, code: (e as MailServerError).code ?? 'UNKNOWN' },
        `e-mail sent, but its copy in the Sent folder failed: ${message}`,
      );
      await job.log(`sent, but the Sent copy failed: ${message}`);
    }
  }
  return { ...result('sent'), sent_copy: copied };
}
