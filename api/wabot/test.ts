import type { Redis } from 'ioredis';
import type { TenantScope } from '../../db/tenant-scope.js';
import { WabotSetting } from '../../db/models/index.js';
import { QueueUnavailableError, type Queues } from '../../jobs/queues.js';
import {
  addCheckJob,
  enqueueChatMessage,
  QUEUE,
  type AccountCheck,
  type WabotCheckResult,
} from '../../jobs/wabot-send.js';
import { loadChatSendConfig } from '../../jobs/wabot/load-config.js';
import { pickAccount, routablePool } from '../../jobs/wabot/routing.js';
import type { ChatSendConfig, SendAccount } from '../../jobs/wabot/send-config.js';
import type { RecipientKind } from '../../jobs/adapters/chat-providers/types.js';
import { recordAudit } from '../audit-logs/service.js';
import { waitForJob } from '../email/sync.js';
import { ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';
import type { Actor } from './service.js';

/**
 * POST /api/wabot/test (issue 10 item 4; document 2 "Chat bot", "Chat-bot configuration" test
 * request). Without a message: a connection check (no send) of the given account or of each
 * enabled one, run as a `wabot-check` job and waited for. With a message: one real send through
 * the routing and the account's limiter (enqueueChatMessage, a `manual` row with source `test`),
 * waited for; a message whose slot lies beyond the wait answers `queued` with `available_at` at
 * once. Both waits are bounded by TEST_WAIT_MS.
 */

/** How long the request waits for the check or the send, in ms (issue 10 item 4: 15 s). */
export const TEST_WAIT_MS = 15_000;
/** How often the send's row is looked at while waiting, in ms. */
const POLL_MS = 100;

/** Validated body (every field optional). */
export interface WabotTestInput {
  /** phone, group id (is_group) or Messenger conversation id; default: wa_number */
  phone?: string;
  /** the text (<= 500); absent, empty or blank: a connection check */
  message?: string;
  /** the account; absent or empty: each enabled account (check) or routing (send) */
  account_id?: string;
  /** wablas only: `phone` is a group id */
  is_group?: boolean;
}

/** What the test needs besides the scope. */
export interface WabotTestDeps {
  /** the API's Redis client (routing) */
  redis: Redis;
  queues: Queues;
  appKey: Buffer | undefined;
  /** the wait bound in ms (default TEST_WAIT_MS) */
  waitMs?: number;
}

/** The answer of a connection check. */
export interface CheckAnswer {
  ok: boolean;
  data: AccountCheck[];
}

/** The answer of a test send. */
export interface SendAnswer {
  ok: boolean;
  data: {
    communication_id: number;
    account_id: string | null;
    status: string;
    message_id: string | null;
    error: { code: string; message: string | null } | null;
    /** when a still `queued` message's slot comes (the limiter's wait), else null */
    available_at: string | null;
  };
}

const unprocessable = (field: string, reason: string) => new ValidationFailed({ [field]: [reason] });

/**
 * Runs the test (see the file comment).
 * @returns a CheckAnswer (no message) or a SendAnswer
 * @throws ValidationFailed (422): nothing saved (`provider`), unknown or (for a send) disabled
 *   `account_id`, no enabled account, no recipient (`phone`), is_group with a non-wablas account
 *   (or, when routing, any enabled non-wablas account), is_group without phone;
 *   QueueUnavailableError (503) when Redis takes neither the routing nor the job
 */
export async function testWabot(
  scope: TenantScope,
  actor: Actor,
  input: WabotTestInput,
  deps: WabotTestDeps,
): Promise<CheckAnswer | SendAnswer> {
  const config = await loadChatSendConfig(scope.shared?.knex ?? scope.knex, deps.appKey, scope.tenantId, scope);
  if (!config)
    throw unprocessable('provider', 'No chat-bot configuration is saved: save it first (PUT /api/wabot/config).');
  const accountId = input.account_id?.trim() || null;
  const account = accountId ? config.accounts.find((a) => a.id === accountId) : null;
  if (accountId && !account) throw unprocessable('account_id', `No account "${accountId}" is configured.`);
  const candidates = account ? [account] : routablePool(config);
  if (input.is_group) {
    const other = candidates.find((a) => a.provider !== 'wablas');
    if (other)
      throw unprocessable(
        'is_group',
        `is_group applies to wablas only; account "${other.id}" is ${other.provider}` +
          (account ? '.' : ' (without account_id every enabled account may be picked).'),
      );
  }
  const message = input.message != null && input.message.trim() !== '' ? input.message : null;
  if (!message) {
    if (!candidates.length) throw unprocessable('account_id', 'No account is enabled: nothing to check.');
    return check(scope, actor, candidates, deps);
  }
  if (account && !account.enabled)
    throw unprocessable('account_id', `Account "${account.id}" is disabled: enable it to send through it.`);
  if (!candidates.length) throw unprocessable('account_id', 'No account is enabled: nothing can send.');
  const phone = input.phone?.trim() || null;
  if (input.is_group && !phone) throw unprocessable('phone', 'is_group needs the group id in phone.');
  const to = phone ?? config.defaultRecipient;
  if (!to) throw unprocessable('phone', 'No recipient: give phone, or save wa_number as the default test recipient.');
  return send(scope, actor, config, { account, to, message, isGroup: !!input.is_group }, deps);
}

/** The connection check: a `wabot-check` job, waited for. */
async function check(
  scope: TenantScope,
  actor: Actor,
  accounts: SendAccount[],
  deps: WabotTestDeps,
): Promise<CheckAnswer> {
  const ids = accounts.map((a) => a.id);
  const setting = await scope.query(WabotSetting).first();
  await recordAudit(scope, {
    userId: actor.userId,
    action: 'wabot.tested',
    subject: setting ? { type: 'wabot_settings', id: Number(setting.id) } : null,
    after: { mode: 'connection', account_ids: ids },
    ip: actor.ip ?? null,
  });
  const queue = deps.queues.get(QUEUE);
  const waitMs = deps.waitMs ?? TEST_WAIT_MS;
  const job = await addCheckJob(queue, { tenant_id: scope.tenantId, account_ids: ids }, deps.queues.enqueueTimeoutMs);
  const unanswered = (code: string, detail: string): AccountCheck[] =>
    accounts.map((a) => ({
      account_id: a.id,
      provider: a.provider,
      label: a.label,
      enabled: a.enabled,
      ok: false,
      verified: false,
      code,
      detail,
    }));
  let data: AccountCheck[];
  try {
    const result = await waitForJob<WabotCheckResult>(queue, job, waitMs);
    data = result?.results ?? unanswered('timeout', `The check did not finish in ${waitMs / 1000} s.`);
  } catch {
    data = unanswered('check_failed', 'The connection check could not run.');
  }
  return { ok: data.length > 0 && data.every((r) => r.ok), data };
}

/** One test send: a `manual` row through the routing and the limiter, waited for. */
async function send(
  scope: TenantScope,
  actor: Actor,
  config: ChatSendConfig,
  o: { account: SendAccount | null | undefined; to: string; message: string; isGroup: boolean },
  deps: WabotTestDeps,
): Promise<SendAnswer> {
  let account = o.account ?? null;
  if (!account) {
    try {
      account = await pickAccount(deps.redis, config);
    } catch (err) {
      throw new QueueUnavailableError(QUEUE, err);
    }
    if (!account) throw unprocessable('account_id', 'No account is enabled: nothing can send.');
  }
  const kind: RecipientKind = o.isGroup ? 'group' : account.provider === 'messenger' ? 'conversation' : 'phone';
  const made = await scope.knex.transaction(async (trx) => {
    const row = await enqueueChatMessage(
      trx,
      {
        tenantId: scope.tenantId,
        to: o.to,
        kind,
        text: o.message,
        source: 'test',
        accountId: account.id,
        userId: actor.userId,
        manual: true,
      },
      { redis: deps.redis, queues: deps.queues, config },
    );
    await recordAudit(scope.withTransaction(trx), {
      userId: actor.userId,
      action: 'wabot.tested',
      subject: { type: 'communication_messages', id: row.id },
      after: { mode: 'send', account_id: row.account_id, recipient_kind: kind },
      ip: actor.ip ?? null,
    });
    return row;
  });
  // the job is added after the commit; never awaited inside the transaction (it waits for the commit)
  if (made.status === 'queued' && !(await made.job)) throw new QueueUnavailableError(QUEUE);
  return waitForSend(scope, made.id, deps.waitMs ?? TEST_WAIT_MS);
}

/**
 * Polls the row until it leaves `queued`, its slot (`available_at`) lies beyond the deadline, or
 * the deadline passes.
 */
async function waitForSend(scope: TenantScope, id: number, ms: number): Promise<SendAnswer> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await scope
      .table('communication_messages')
      .where({ id })
      .first('status', 'message_id', 'account_ref', 'error_code', 'error_message', 'available_at');
    const status = String(r?.status ?? 'queued');
    const availableAt: Date | null = r?.available_at ?? null;
    const later = availableAt != null && availableAt.getTime() > until;
    if (status !== 'queued' || later || Date.now() >= until) {
      return {
        ok: status !== 'failed',
        data: {
          communication_id: id,
          account_id: r?.account_ref ?? null,
          status,
          message_id: r?.message_id ?? null,
          error: status === 'failed' ? { code: String(r?.error_code), message: r?.error_message ?? null } : null,
          available_at: status === 'queued' ? iso(availableAt) : null,
        },
      };
    }
    await new Promise((res) => setTimeout(res, Math.min(POLL_MS, Math.max(0, until - Date.now()))));
  }
}
