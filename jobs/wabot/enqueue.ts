import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import type { Queues } from '../queues.js';
import { QueueUnavailableError } from '../queues.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import type { RecipientKind } from '../adapters/chat-providers/types.js';
import type { ChatSendConfig, ChatSendConfigSource, SendAccount } from './send-config.js';
import { pickAccount } from './routing.js';
import { addSendJob, QUEUE } from './send-queue.js';

/**
 * Writing an outbound chat message (issue 10 item 3): enqueueChatMessage writes the `queued` row
 * in the caller's transaction, routes it (the account id is stored on the row, `account_ref`) and
 * adds its `wabot-send` job once the transaction has committed. A job that could not be added (Redis
 * down, process gone) is added again by the sweep (jobs/wabot-send.ts) a minute later: the row is
 * the truth, the job only a nudge.
 */

/** What to send. */
export interface ChatMessageInput {
  tenantId: number;
  /** phone as typed, group id or Messenger conversation id (1..320 characters) */
  to: string;
  kind: RecipientKind;
  /** the text, 1..4096 characters */
  text: string;
  /** who made it: bot, notice, admin, test, resend, ... (communication_messages.source) */
  source: string;
  /** send through this account (no routing); a disabled or unknown one fails `account_unavailable` */
  accountId?: string | null;
  customerId?: number | null;
  userId?: number | null;
  /** a person's explicit send (Test, Resend): settings.enabled false does not stop it */
  manual?: boolean;
  /** the failed row this one resends */
  resentFromId?: number | null;
  /** the inbound row this one answers (communication_messages.reply_to_id; auto-replies, issue 11) */
  replyToId?: number | null;
}

/** What enqueueChatMessage needs besides the transaction. */
export interface ChatEnqueueDeps {
  /** Redis for the routing script (the API's client, or JobDeps.redis) */
  redis: Redis;
  /** producers (the job is added on `wabot-send`) */
  queues: Queues;
  /** the tenant's configuration, or where to load it from */
  config: ChatSendConfigSource | ChatSendConfig | null;
  clock?: Clock;
  /** routing key prefix (tests); default `wabot` */
  keyPrefix?: string;
  /** told when the job could not be added after the commit (the sweep adds it later) */
  onEnqueueError?: (err: unknown) => void;
}

/** The row written. */
export interface EnqueuedChatMessage {
  id: number;
  /** `queued`, or `failed` (`account_unavailable`) when no account could be routed to */
  status: 'queued' | 'failed';
  channel: 'whatsapp' | 'messenger';
  /** the routed (or given) account id, null when none */
  account_id: string | null;
  error_code: string | null;
  /**
   * Settles after the caller's transaction: true once the job was added, false when the
   * transaction rolled back, the row failed at once, or Redis did not take the job. Never rejects.
   */
  job: Promise<boolean>;
}

/** `account_unavailable` message of a row that could not be routed. */
const NO_ACCOUNT = 'No enabled chat account is configured for this tenant.';

/**
 * Writes a `queued` outbound chat row in the caller's transaction, routed to an account (smooth
 * weighted round-robin over the enabled accounts, or `accountId`), and adds its job
 * `wabot-send-<id>` after the transaction commits. Channel `messenger` for a messenger account,
 * else `whatsapp`. Without any enabled account (or any configuration) the row is written `failed`
 * `account_unavailable` and no job is added.
 * @param trx the caller's outermost transaction (or a knex instance: the job is added at once)
 * @returns the row's id, status, channel and account, and a promise of the job's addition
 * @throws RangeError for an empty or too long `to` or `text`; QueueUnavailableError (503) when
 *   Redis does not answer the routing script; the database's errors
 */
export async function enqueueChatMessage(
  trx: Knex | Knex.Transaction,
  input: ChatMessageInput,
  deps: ChatEnqueueDeps,
): Promise<EnqueuedChatMessage> {
  if (!input.to || input.to.length > 320) throw new RangeError('to must be 1 to 320 characters');
  if (!input.text || input.text.length > 4096) throw new RangeError('text must be 1 to 4096 characters');
  const config = typeof deps.config === 'function' ? await deps.config(input.tenantId) : deps.config;
  let account: SendAccount | null = null;
  let accountId: string | null = input.accountId || null;
  if (config && accountId) account = config.accounts.find((a) => a.id === accountId) ?? null;
  else if (config) {
    try {
      account = await pickAccount(deps.redis, config, { prefix: deps.keyPrefix });
    } catch (err) {
      throw new QueueUnavailableError(QUEUE, err);
    }
    accountId = account?.id ?? null;
  }
  const now = (deps.clock ?? systemClock).now();
  const channel = account?.provider === 'messenger' ? 'messenger' : 'whatsapp';
  const failed = !accountId;
  const [row] = await trx('communication_messages')
    .insert({
      tenant_id: input.tenantId,
      channel,
      direction: 'out',
      status: failed ? 'failed' : 'queued',
      source: input.source,
      account_ref: accountId,
      customer_id: input.customerId ?? null,
      user_id: input.userId ?? null,
      counterpart: input.to,
      recipient_kind: input.kind,
      is_group: input.kind === 'group',
      body_text: input.text,
      snippet: input.text.slice(0, 200),
      manual: input.manual ?? false,
      resent_from_id: input.resentFromId ?? null,
      reply_to_id: input.replyToId ?? null,
      occurred_at: now,
      queued_at: now,
      error_code: failed ? 'account_unavailable' : null,
      error_message: failed ? NO_ACCOUNT : null,
      failed_at: failed ? now : null,
      created_at: now,
      updated_at: now,
    })
    .returning(['id']);
  const id = Number(row.id);
  const result = {
    id,
    status: failed ? ('failed' as const) : ('queued' as const),
    channel: channel as 'whatsapp' | 'messenger',
    account_id: accountId,
    error_code: failed ? 'account_unavailable' : null,
  };
  if (failed) return { ...result, job: Promise.resolve(false) };
  // a savepoint (an event subscriber's ctx.trx) settles when it is released, long before the
  // outermost transaction commits: wait for the outermost one, or the job could run before the row
  // is visible (issue 11)
  let outer = trx as Knex.Transaction & { parentTransaction?: Knex.Transaction };
  while (outer.parentTransaction) outer = outer.parentTransaction;
  const committed: Promise<boolean> =
    'executionPromise' in outer && outer.isTransaction
      ? outer.executionPromise.then(
          () => true,
          () => false,
        )
      : Promise.resolve(true);
  const job = committed.then(async (ok) => {
    if (!ok) return false;
    try {
      await addSendJob(
        deps.queues.get(QUEUE),
        { tenant_id: input.tenantId, message_id: id },
        deps.queues.enqueueTimeoutMs,
      );
      return true;
    } catch (err) {
      deps.onEnqueueError?.(err);
      return false;
    }
  });
  return { ...result, job };
}
