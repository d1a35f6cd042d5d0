import type { Redis } from 'ioredis';
import type { TenantScope } from '../../db/tenant-scope.js';
import { CommunicationMessage } from '../../db/models/index.js';
import type { Queues } from '../../jobs/queues.js';
import { enqueueChatMessage } from '../../jobs/wabot-send.js';
import { loadChatSendConfig } from '../../jobs/wabot/load-config.js';
import type { RecipientKind } from '../../jobs/adapters/chat-providers/types.js';
import { recordAudit } from '../audit-logs/service.js';
import { communicationById } from '../communications/service.js';
import { AppError, InvalidTransition, NotFound } from '../errors.js';
import type { Actor } from './service.js';

/**
 * POST /api/communications/{id}/resend (issue 10 item 5; document 2 "Chat bot": "A failed message
 * is not moved to another account and can be resent by hand from the outbox"). A failed outbound
 * WhatsApp or Messenger message is copied into a new `queued` row (`resent_from_id` = the
 * original, source `resend`, `manual`), routed afresh over the enabled accounts and sent by the
 * `wabot-send` job; the original stays `failed`.
 */

/** The chat channels (the e-mail outbox has its own send path). */
const CHAT_CHANNELS = ['whatsapp', 'messenger'] as const;

/** What a resend needs besides the scope. */
export interface ResendDeps {
  redis: Redis;
  queues: Queues;
  appKey: Buffer | undefined;
}

/**
 * 409 CONFLICT: a resend of this message is still `queued` (decision: the house code of 409, with
 * the queued resend's id in `resend_id` so a client can follow it).
 */
export class ResendQueued extends AppError {
  /** @param id the original; @param resendId the queued resend */
  constructor(id: number, resendId: number) {
    super(409, 'CONFLICT', `Message ${id} already has a resend waiting to be sent (message ${resendId}).`, {
      extra: { resend_id: resendId },
    });
  }
}

/**
 * Resends a failed outbound chat message (see the file comment). The original is locked for the
 * check and the insert, so two resends at once give one new row and one 409 (a partial unique
 * index backs it). Audited as `communications.resent`.
 * @returns the new message's detail (status `queued`, or `failed` `account_unavailable` when no
 *   account is enabled); its job is added after the commit (the sweep adds it when Redis did not
 *   take it)
 * @throws NotFound (404) for a foreign, unknown or deleted id; InvalidTransition (422) for anything
 *   but an outbound chat message in `failed`; ResendQueued (409); QueueUnavailableError (503) when
 *   Redis does not answer the routing
 */
export async function resendMessage(scope: TenantScope, actor: Actor, id: number, deps: ResendDeps) {
  const config = await loadChatSendConfig(scope.shared?.knex ?? scope.knex, deps.appKey, scope.tenantId, scope);
  const made = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await s.query(CommunicationMessage).findById(id).whereNull('deleted_at').forUpdate();
    if (!row) throw new NotFound('Communication');
    const chat = (CHAT_CHANNELS as readonly string[]).includes(row.channel);
    if (!chat || row.direction !== 'out') {
      const what = `an ${row.direction === 'out' ? 'outbound' : 'inbound'} ${row.channel} message`;
      const message = `Only a failed outbound WhatsApp or Messenger message can be resent; this is ${what}.`;
      throw new AppError(422, 'INVALID_TRANSITION', message, { errors: { status: [message] } });
    }
    if (row.status !== 'failed') throw new InvalidTransition(row.status, 'resend', ['failed']);
    const queued = await s.table('communication_messages').where({ resent_from_id: id, status: 'queued' }).first('id');
    if (queued) throw new ResendQueued(id, Number(queued.id));
    if (!row.counterpart || !row.body_text) {
      const message = 'This message has no recipient or text left to resend.';
      throw new AppError(422, 'INVALID_TRANSITION', message, { errors: { status: [message] } });
    }
    const kind: RecipientKind = row.recipient_kind ?? (row.is_group ? 'group' : 'phone');
    const made = await enqueueChatMessage(
      trx,
      {
        tenantId: scope.tenantId,
        to: row.counterpart,
        kind,
        text: row.body_text,
        source: 'resend',
        customerId: row.customer_id,
        userId: actor.userId,
        manual: true,
        resentFromId: id,
      },
      { redis: deps.redis, queues: deps.queues, config },
    );
    await recordAudit(s, {
      userId: actor.userId,
      action: 'communications.resent',
      subject: { type: 'communication_messages', id },
      before: { status: row.status, error_code: row.error_code, account_ref: row.account_ref },
      after: { resend_id: made.id, status: made.status, account_ref: made.account_id },
      ip: actor.ip ?? null,
    });
    return made;
  });
  // added after the commit (never awaited inside the transaction); false: the sweep adds it later
  await made.job;
  return communicationById(scope, made.id, [...CHAT_CHANNELS]);
}
