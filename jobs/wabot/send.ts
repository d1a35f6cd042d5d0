import { DelayedError, UnrecoverableError, type JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import { tenantScopeOf } from '../../db/tenant-routing.js';
import { jobClock, jobDeps } from '../deps.js';
import type { JobLike } from '../queues.js';
import { getChatProvider, type Classification, type RecipientKind } from '../adapters/chat-providers/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_TIMEOUT_MS } from '../adapters/chat-providers/http.js';
import {
  acquireSendSlot,
  completeSendSlot,
  leaveWaitingRoom,
  peekSendSlot,
  wakeDelayMs,
  waitingStaleMs,
} from './limiter.js';
import type { SendAccount } from './send-config.js';
import type { WabotSendData } from './send-queue.js';

/**
 * One message's send (issue 10 item 3, "at most once"). In order:
 * 1. the row is re-read: anything but an outbound `queued` chat row is skipped (done, resent, gone);
 * 2. a row whose `send_started_at` is set without a result had a request started by an earlier run
 *    that stopped (worker killed, database lost after the request): `failed` `delivery_unknown`,
 *    never sent again;
 * 3. a demo-mode tenant: `failed` `demo_guard_blocked`, no provider call; settings.enabled false:
 *    automated sends `failed` `bot_disabled` (a `manual` row, Test or Resend, goes through); the
 *    row's account disabled or removed: `failed` `account_unavailable` (never another account);
 * 4. the account's limiter (jobs/wabot/limiter.ts), first a peek: no slot now -> the job is moved
 *    to delayed (`moveToDelayed` + DelayedError: no busy wait, no attempt used) until its turn
 *    (its projected slot from its rank in the account's waiting room, wakeDelayMs), `available_at` noted;
 * 5. `send_started_at` is committed (only if still null: two runs can never both send), then the
 *    grant is asked for (denied: `send_started_at` given back, delayed as in 4), then the provider
 *    call, with nothing in between (the gateway sees the limiter's pace); its classify() decides:
 *    `sent` -> `pending` or `sent` with `message_id`; `retry` (the provider cannot have seen it)
 *    -> `send_started_at` cleared, the job fails and is retried with backoff, 5 attempts, then
 *    `failed` `provider_unavailable`; `rate_limited` -> cleared and delayed by the provider's wait;
 *    `permanent` -> `failed` with its code; `ambiguous` -> `failed` `delivery_unknown`.
 * A crash between taking `send_started_at` and the request makes a row `delivery_unknown` that was
 * never sent: at most once errs on the side of not sending.
 * A failed row fails the job (UnrecoverableError naming the code), so bull-board shows it.
 * Secrets: the job carries ids only; the account's token reaches the adapter and nothing else.
 */

/** The part of a BullMQ Job the send uses (real Jobs satisfy it; tests pass a fake). */
export interface SendJob extends JobLike<WabotSendData> {
  attemptsMade: number;
  opts: Pick<JobsOptions, 'attempts'>;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** What a send run returns (bull-board shows it). */
export interface WabotSendResult {
  kind: 'send';
  message_id: number;
  /** the row's status after the run, or `skipped` */
  status: 'pending' | 'sent' | 'skipped';
  account_id: string | null;
}

/** Row columns the send reads. */
interface SendRow {
  id: number;
  tenant_id: number;
  status: string;
  direction: string;
  channel: string;
  account_ref: string | null;
  counterpart: string | null;
  recipient_kind: RecipientKind | null;
  is_group: boolean;
  body_text: string | null;
  manual: boolean;
  send_started_at: Date | null;
  available_at: Date | null;
  demo_mode: boolean;
}

/** Fixed texts of the failures the send decides itself (no provider text). */
const MESSAGES = {
  delivery_unknown_restart:
    'A send was started and its result is unknown (the run stopped mid-send); it is not sent again. Resend it by hand.',
  demo_guard_blocked: 'Demo-mode tenants do not send chat messages.',
  bot_disabled: 'The chat bot is disabled (settings.enabled is false).',
  account_unavailable: 'The account this message was routed to is disabled or no longer configured.',
} as const;

/**
 * A job wakes this many ms before its slot and waits the rest in the run (a delayed job is promoted
 * and picked up some ms late; the slot's account would idle that long).
 */
const EARLY_MS = 25;
/** At most this many ms of waiting in one run (a slot taken by another worker moves the wait on). */
const MAX_IN_RUN_WAIT_MS = 4 * EARLY_MS;
/** A send's lease outlasts the provider call's time limit by this much, in ms. */
const LEASE_MARGIN_MS = 5000;

/** available_at is rewritten only when the new wait moves it by more than this, in ms. */
const AVAILABLE_AT_SLACK_MS = 1000;

/**
 * Runs one send (see the file comment).
 * @param token the job's lock token (moveToDelayed needs it)
 * @param signal the worker's shutdown signal: honoured before the request, never during it
 * @throws DelayedError (limiter or provider wait), Error (`retry`: retried with backoff),
 *   UnrecoverableError (the row was written `failed`)
 */
export async function sendMessage(job: SendJob, token?: string, signal?: AbortSignal): Promise<WabotSendResult> {
  const deps = jobDeps();
  const d = job.data ?? ({} as WabotSendData);
  if (!d.tenant_id || !d.message_id) throw new UnrecoverableError('wabot-send: a send needs tenant_id and message_id');
  // the outbox row in the tenant's database after its cutover (issue 15 item 4); the tenant's
  // demo flag from the shared tenants row
  const knex = (await tenantScopeOf(deps.knex, d.tenant_id, deps.appKey, 'job')).knex as Knex;
  const row = await loadRow(deps.knex, knex, d);
  const skipped: WabotSendResult = {
    kind: 'send',
    message_id: d.message_id,
    status: 'skipped',
    account_id: row?.account_ref ?? null,
  };
  if (!row || row.status !== 'queued' || row.direction !== 'out' || row.channel === 'email') return skipped;
  if (row.send_started_at) return fail(knex, row, 'delivery_unknown', MESSAGES.delivery_unknown_restart);
  if (row.demo_mode) return fail(knex, row, 'demo_guard_blocked', MESSAGES.demo_guard_blocked);
  if (!deps.chatConfig) throw new Error('wabot-send: the worker has no chat configuration source (JobDeps.chatConfig)');
  const config = await deps.chatConfig(row.tenant_id);
  if (config && !config.enabled && !row.manual) return fail(knex, row, 'bot_disabled', MESSAGES.bot_disabled);
  const account = config?.accounts.find((a) => a.id === row.account_ref);
  if (!account || !account.enabled) return fail(knex, row, 'account_unavailable', MESSAGES.account_unavailable);

  signal?.throwIfAborted();
  const redis = deps.redis;
  if (!redis) throw new Error('wabot-send: the worker has no Redis client (JobDeps.redis)');
  const opts = deps.chatSend ?? {};
  const scale = opts.timeScale ?? 1;
  const lim = { timeScale: scale, prefix: opts.keyPrefix, tag: String(row.id) };
  const staleMs = waitingStaleMs(account, scale);
  const peek = await peekSendSlot(redis, row.tenant_id, account.id, account, { ...lim, staleMs });
  if (peek.waitMs > 0) {
    const wake = wakeDelayMs(account, scale, peek.waitMs);
    if (wake > EARLY_MS) return delay(knex, job, token, row, wake, EARLY_MS);
  }

  // at most once: the start is committed before the request, and only one run can take it. It is
  // taken before the grant so that nothing but the request follows the grant (the gateway sees the
  // limiter's pace); a denied grant gives it back.
  const now = jobClock().now();
  const taken = await knex('communication_messages')
    .where({ id: row.id, tenant_id: row.tenant_id, status: 'queued' })
    .whereNull('send_started_at')
    .update({
      send_started_at: now,
      available_at: null,
      send_attempts: knex.raw('send_attempts + 1'),
      updated_at: now,
    });
  if (!taken) return skipped;
  const giveBack = () =>
    knex('communication_messages')
      .where({ id: row.id, tenant_id: row.tenant_id, status: 'queued', send_started_at: now })
      .update({ send_started_at: null, send_attempts: knex.raw('send_attempts - 1') });
  const leaseMs = (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS) + LEASE_MARGIN_MS;
  let slot: Awaited<ReturnType<typeof acquireSendSlot>>;
  let waited = 0;
  try {
    for (;;) {
      slot = await acquireSendSlot(redis, row.tenant_id, account.id, account, {
        ...lim,
        grantLog: opts.grantLog,
        leaseMs,
      });
      // a slot due within EARLY_MS is waited for here: a delayed job would wake later than that
      if (slot.granted || slot.waitMs > EARLY_MS || waited + slot.waitMs > MAX_IN_RUN_WAIT_MS) break;
      await sleep(slot.waitMs);
      waited += slot.waitMs;
    }
  } catch (err) {
    await giveBack();
    throw err;
  }
  if (!slot.granted) {
    await giveBack();
    const again = await peekSendSlot(redis, row.tenant_id, account.id, account, { ...lim, staleMs });
    const wait = wakeDelayMs(account, scale, Math.max(again.waitMs, slot.waitMs));
    return delay(knex, job, token, { ...row, available_at: null }, wait, EARLY_MS);
  }

  const provider = getChatProvider(account.provider);
  const outcome = await provider.send(
    account,
    { kind: row.recipient_kind ?? (row.is_group ? 'group' : 'phone'), value: row.counterpart ?? '' },
    row.body_text ?? '',
    { timeoutMs: opts.timeoutMs, callingCode: config?.callingCode, rootOverride: opts.rootOverride },
  );
  const classified = provider.classify(outcome);
  // the send's time for the limiter is now, after the answer (a request known not to have left
  // is forgotten); if Redis fails here the lease ends by itself and counts as a send then
  await completeSendSlot(
    redis,
    row.tenant_id,
    account.id,
    account,
    { atUs: slot.atUs, tag: lim.tag },
    classified.kind !== 'retry',
    lim,
  ).catch((err: unknown) => job.log(`limiter: the send's end was not recorded (${String(err)}); its lease ends it`));
  return settle(knex, job, token, row, account, classified);
}

/** The row with its tenant's demo flag, or undefined. */
async function loadRow(shared: Knex, knex: Knex, d: WabotSendData): Promise<SendRow | undefined> {
  const tenant = await shared('tenants').where({ id: d.tenant_id }).first('demo_mode');
  if (!tenant) return undefined;
  const row: Omit<SendRow, 'demo_mode'> | undefined = await knex('communication_messages as m')
    .where({ 'm.id': d.message_id, 'm.tenant_id': d.tenant_id })
    .first(
      'm.id',
      'm.tenant_id',
      'm.status',
      'm.direction',
      'm.channel',
      'm.account_ref',
      'm.counterpart',
      'm.recipient_kind',
      'm.is_group',
      'm.body_text',
      'm.manual',
      'm.send_started_at',
      'm.available_at',
    );
  return row && ({ ...row, demo_mode: tenant.demo_mode } as SendRow);
}

/** Acts on the provider's classification (step 5 of the file comment). */
async function settle(
  knex: Knex,
  job: SendJob,
  token: string | undefined,
  row: SendRow,
  account: SendAccount,
  c: Classification,
): Promise<WabotSendResult> {
  const now = jobClock().now();
  const mine = () => knex('communication_messages').where({ id: row.id, tenant_id: row.tenant_id, status: 'queued' });
  switch (c.kind) {
    case 'sent':
      await mine().update({
        status: c.state,
        message_id: c.messageId,
        sent_at: c.state === 'sent' ? now : null,
        error_code: null,
        error_message: null,
        updated_at: now,
      });
      await job.log(`sent through account ${account.id}: ${c.state}`);
      return { kind: 'send', message_id: row.id, status: c.state, account_id: account.id };
    case 'retry': {
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (last) return fail(knex, row, 'provider_unavailable', `The provider could not be reached: ${c.detail}`);
      await mine().update({ send_started_at: null, error_message: c.detail.slice(0, 500), updated_at: now });
      throw new Error(`wabot-send: message ${row.id} not sent, retried: ${c.detail}`);
    }
    case 'rate_limited':
      await mine().update({ send_started_at: null, error_message: c.detail.slice(0, 500), updated_at: now });
      return delay(knex, job, token, { ...row, available_at: null }, c.retryAfterMs);
    case 'permanent':
      return fail(knex, row, c.code, c.detail);
    case 'ambiguous':
      return fail(knex, row, 'delivery_unknown', `The provider may or may not have sent it: ${c.detail}`);
  }
}

/**
 * Moves the job to delayed for `waitMs` less `earlyMs` (no attempt used; at least 1 ms), noting
 * available_at (now + waitMs) on the row.
 */
async function delay(
  knex: Knex,
  job: SendJob,
  token: string | undefined,
  row: SendRow,
  waitMs: number,
  earlyMs = 0,
): Promise<never> {
  const at = Date.now() + Math.max(1, waitMs - earlyMs);
  const shown = jobClock().now().getTime() + waitMs;
  if (!row.available_at || Math.abs(row.available_at.getTime() - shown) > AVAILABLE_AT_SLACK_MS) {
    await knex('communication_messages')
      .where({ id: row.id, tenant_id: row.tenant_id, status: 'queued' })
      .update({ available_at: new Date(shown) });
  }
  await job.moveToDelayed(at, token);
  throw new DelayedError();
}

/** Writes the row `failed` with a code and a text, then fails the job (UnrecoverableError). */
async function fail(knex: Knex, row: SendRow, code: string, message: string): Promise<never> {
  const now = jobClock().now();
  await knex('communication_messages')
    .where({ id: row.id, tenant_id: row.tenant_id, status: 'queued' })
    .update({
      status: 'failed',
      error_code: code,
      error_message: message.slice(0, 500),
      failed_at: now,
      available_at: null,
      updated_at: now,
    });
  const { redis, chatSend } = jobDeps();
  if (redis && row.account_ref) {
    await leaveWaitingRoom(redis, row.tenant_id, row.account_ref, String(row.id), chatSend?.keyPrefix).catch(
      () => undefined, // best effort: stale members leave the room by themselves
    );
  }
  throw new UnrecoverableError(`wabot-send: message ${row.id} failed: ${code}`);
}
