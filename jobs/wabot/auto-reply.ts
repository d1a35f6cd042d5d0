import { registerSubscriber, type OutboxEvent, type SubscriberContext } from '../../api/events/service.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { WabotSetting } from '../../db/models/index.js';
import { jobClock, jobDeps } from '../deps.js';
import { enqueueChatMessage } from './enqueue.js';
import {
  invoicesText,
  keywordOf,
  menuText,
  statusText,
  ticketsText,
  UNKNOWN_NUMBER_TEXT,
  type InvoiceLine,
  type TicketLine,
} from './auto-reply-texts.js';

/**
 * The chat bot's auto-reply (issue 11 item 2): a subscriber of `inbound_chat_message`, run by the
 * event-dispatch job in its transaction (docs/events.md). For a stored inbound chat message it
 * writes at most one reply through enqueueChatMessage on the receiving account (source
 * `auto_reply`, `reply_to_id` the inbound row), which the wabot-send job sends (a demo tenant's
 * reply fails there `demo_guard_blocked`, a disabled bot `bot_disabled`). Rules:
 * - only when settings.enabled and settings.auto_reply; never to a group (own messages are never
 *   stored);
 * - a known customer (the row's customer_id): `tagihan`/`invoice` -> unpaid invoices, `status` ->
 *   status and package, `tiket`/`ticket` -> open tickets, anything else -> the menu;
 * - an unknown sender: one "number not registered" reply, only with reply_unknown_customers;
 * - at most one auto-reply per sender per AUTO_REPLY_WINDOW_MS (bot loops), serialised per sender
 *   by a transaction advisory lock; never two for one message (the unique index
 *   communication_messages_auto_reply_once, and the delivery record of the event).
 */

/** The subscriber id (event_deliveries.subscriber). */
export const AUTO_REPLY_SUBSCRIBER = 'wabot.auto-reply';
/** At most one auto-reply per sender within this many ms. */
export const AUTO_REPLY_WINDOW_MS = 60_000;
/** Invoices and tickets listed at most. */
const LIST_LIMIT = 5;

/** Why a message got no reply, or the reply row written. */
export type AutoReplyOutcome = { replied: number } | { skipped: string };

/**
 * Handles one `inbound_chat_message` event (see the file comment).
 * @returns the reply row's id, or why none was written
 * @throws the database's errors; Error when the process has no Redis or queues (JobDeps), so the
 *   event is retried
 */
export async function handleAutoReply(
  ev: OutboxEvent<'inbound_chat_message'>,
  ctx: SubscriberContext,
): Promise<AutoReplyOutcome> {
  const id = Number(ev.payload?.communication_id);
  if (!Number.isSafeInteger(id) || id <= 0) return { skipped: 'no communication_id' };
  const scope = new TenantScope(ctx.trx, ev.tenant_id);
  const msg = await scope
    .table('communication_messages')
    .where({ id, direction: 'in' })
    .whereIn('channel', ['whatsapp', 'messenger'])
    .first('id', 'counterpart', 'recipient_kind', 'is_group', 'customer_id', 'account_ref', 'body_text');
  if (!msg || !msg.counterpart) return { skipped: 'no such inbound chat message' };
  if (msg.is_group) return { skipped: 'group message' };
  const settings = await scope.query(WabotSetting).first();
  if (!settings?.enabled || !settings.auto_reply) return { skipped: 'auto_reply off' };
  if (!msg.customer_id && !settings.reply_unknown_customers) return { skipped: 'unknown sender' };

  await ctx.trx.raw('SELECT pg_advisory_xact_lock(hashtext(?))', [
    `wabot-auto-reply:${ev.tenant_id}:${msg.counterpart}`,
  ]);
  const replies = () => scope.table('communication_messages').where({ source: 'auto_reply' });
  if (await replies().where({ reply_to_id: id }).first('id')) return { skipped: 'already answered' };
  const since = new Date(jobClock().now().getTime() - AUTO_REPLY_WINDOW_MS);
  if (await replies().where({ counterpart: msg.counterpart }).where('created_at', '>', since).first('id'))
    return { skipped: 'replied to this sender within 60 s' };

  const text = msg.customer_id
    ? await customerReply(scope, msg.customer_id, String(msg.body_text ?? ''))
    : UNKNOWN_NUMBER_TEXT;
  if (!text) return { skipped: 'customer gone' };
  const deps = jobDeps();
  if (!deps.redis || !deps.queues) throw new Error('wabot auto-reply: the worker has no Redis or queues (JobDeps)');
  const row = await enqueueChatMessage(
    ctx.trx,
    {
      tenantId: ev.tenant_id,
      to: msg.counterpart,
      kind: msg.recipient_kind === 'conversation' ? 'conversation' : 'phone',
      text,
      source: 'auto_reply',
      accountId: msg.account_ref,
      customerId: msg.customer_id,
      replyToId: id,
    },
    {
      redis: deps.redis,
      queues: deps.queues,
      config: deps.chatConfig ?? null,
      clock: jobClock(),
      keyPrefix: deps.chatSend?.keyPrefix,
    },
  );
  return { replied: row.id };
}

/** The reply text for a known customer's message (null when the customer no longer exists). */
async function customerReply(scope: TenantScope, customerId: number, text: string): Promise<string | null> {
  const c = await scope.table('customers').where({ id: customerId }).first('id', 'name', 'status', 'package_id');
  if (!c) return null;
  const name = String(c.name).split(/\s+/)[0] || String(c.name);
  switch (keywordOf(text)) {
    case 'invoices': {
      const rows: InvoiceLine[] = await scope
        .table('invoices')
        .where({ customer_id: customerId })
        .whereIn('status', ['unpaid', 'overdue'])
        .orderBy('due_date')
        .orderBy('id')
        .limit(LIST_LIMIT)
        .select('invoice_number', 'amount', 'due_date');
      return invoicesText(name, rows);
    }
    case 'status': {
      const pkg = c.package_id
        ? await scope.table('packages').where({ id: c.package_id }).first('name', 'speed_down_kbps')
        : null;
      return statusText(name, String(c.status), pkg ?? null);
    }
    case 'tickets': {
      const rows: TicketLine[] = await scope
        .table('tickets')
        .where({ customer_id: customerId })
        .whereIn('status', ['open', 'inprogress'])
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(LIST_LIMIT)
        .select('ticket_number', 'type', 'status');
      return ticketsText(name, rows);
    }
    default:
      return menuText(name);
  }
}

let refs = 0;
let unregister: (() => void) | null = null;

/**
 * Registers the auto-reply subscriber in this process while someone uses it (startWorkers does,
 * for its lifetime; tests around their dispatch runs). Reference-counted, so two workers in one
 * process share one registration.
 * @returns the release function (idempotent)
 */
export function useAutoReplySubscriber(): () => void {
  if (refs++ === 0) {
    unregister = registerSubscriber(AUTO_REPLY_SUBSCRIBER, {
      events: ['inbound_chat_message'],
      async handle(ev, ctx) {
        const out = await handleAutoReply(ev, ctx);
        await ctx.log('replied' in out ? `auto-reply ${out.replied} queued` : `no auto-reply: ${out.skipped}`);
      },
    });
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--refs === 0) {
      unregister?.();
      unregister = null;
    }
  };
}
