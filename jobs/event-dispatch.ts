import type { JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import {
  addOrUnavailable,
  DEFAULT_JOB_OPTIONS,
  safeJobId,
  type JobLike,
  type JobSchedulerDef,
  type Queues,
} from './queues.js';
import { jobDeps } from './deps.js';
import { forEachTenantDatabase } from '../db/tenant-routing.js';
import { enqueueScanRun, reportProgress, scanRunId, scanScheduler, throwIfAborted } from './platform-scan.js';
import {
  DEFAULT_SUBSCRIBER_TIMEOUT_MS,
  MAX_SUBSCRIBER_TIMEOUT_MS,
  idempotencyKey,
  subscribersFor,
  type OutboxEvent,
  type Subscriber,
} from '../api/events/service.js';

/**
 * Job `event-dispatch` (DESIGN.md §10 "events", document 2 "## Events"): delivers the rows of
 * event_outbox (written by publishEvent in the publisher's transaction) to the subscribers
 * registered in this process (api/events/service.ts registerSubscriber).
 *
 * Driven by a job scheduler every 5 s that scans the undispatched rows: a publish inside a
 * transaction cannot enqueue before its commit, so the scan is what guarantees delivery; nudge()
 * after a commit only makes it sooner.
 *
 * One event at a time, each in its own transaction that holds the row with
 * `FOR NO KEY UPDATE SKIP LOCKED` (two dispatchers never take the same event; NO KEY lets the
 * event_deliveries foreign key check through). For each subscriber of the event's name without an
 * event_deliveries row: handle() runs in a savepoint and the delivery row is inserted in that same
 * savepoint, so a subscriber's database effect and its delivery record commit together or not at
 * all; the primary key (event_id, subscriber) is the final guard against a second delivery. When
 * every subscriber has it, dispatched_at is set. A worker killed mid-event loses its transaction:
 * the event's uncommitted deliveries are redone by the next dispatcher (at-least-once runs,
 * exactly-once database effects; external effects dedupe by ctx.idempotencyKey).
 *
 * Failures: a subscriber that throws or times out is recorded on the event (attempts + 1,
 * last_error naming the subscriber) and the event waits RETRY_BASE_MS * 2^(attempts-1) (capped at
 * RETRY_MAX_MS) before the next scan retries only the subscribers still missing; after
 * MAX_EVENT_ATTEMPTS failed attempts it is left undispatched for an operator. This per-event
 * backoff replaces BullMQ's job retry (attempts 1): the job's retry is the next scan.
 *
 * Platform job: like invoice-overdue it scans every tenant's rows (the one allowed kind of
 * cross-tenant query, DESIGN.md §5); `tenant_id` in the data limits a run to one tenant.
 * Retention: dispatched events (with their deliveries) are deleted RETENTION_DAYS after dispatch,
 * given-up events RETENTION_DAYS after they were published.
 */
export const QUEUE = 'event-dispatch' as const;

/** Job data: ids only (DESIGN.md §3). Both absent = every pending event of every tenant. */
export interface EventDispatchData {
  /** Limit the run to one tenant's events. */
  tenant_id?: number | null;
  /** Dispatch this one event only (nudge after a commit). */
  event_id?: number | null;
}

/** What a run returns (bull-board shows it). */
export interface EventDispatchResult {
  /** Events whose every subscriber now has them (dispatched_at set). */
  dispatched: number;
  /** event_deliveries rows written (subscriber runs that succeeded). */
  deliveries: number;
  /** Events whose attempt failed (retried after their backoff, or given up). */
  failed: number;
  /** Events removed by the retention rule in this run. */
  purged: number;
}

/** Failed attempts after which an event is no longer retried. */
export const MAX_EVENT_ATTEMPTS = 10;
/** Backoff of a failed event: RETRY_BASE_MS * 2^(attempts-1), in ms, capped at RETRY_MAX_MS (1 h). */
export const RETRY_BASE_MS = 5_000;
export const RETRY_MAX_MS = 3_600_000;
/** Days an event (and its deliveries) is kept after dispatch, or after publication when given up. */
export const RETENTION_DAYS = 30;
/** A run stops taking new events after this many ms (the next scheduled run continues). */
export const RUN_BUDGET_MS = 20_000;
/** Rows deleted per retention statement (one per run). */
export const PURGE_BATCH_SIZE = 1000;
/** statement_timeout of the dispatcher's transaction, in ms (bounds the handlers' queries too). */
export const STATEMENT_TIMEOUT_MS = 30_000;
/** idle_in_transaction_session_timeout, in ms: a frozen worker's row lock is released after it. */
export const IDLE_TX_TIMEOUT_MS = MAX_SUBSCRIBER_TIMEOUT_MS + 30_000;

/** Default options: no BullMQ retry (the next scan is the retry); retention as every queue. */
export const defaultOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 1 };

/** Every 5 s, registered by the worker with upsertJobScheduler (idempotent). */
export const scheduler: JobSchedulerDef = scanScheduler(
  QUEUE,
  'event-dispatch-every-5s',
  { every: 5_000 },
  defaultOptions,
);

/**
 * Fixed job id: `event-dispatch-e<event id>` for one event (one nudge per event), otherwise one
 * per tenant (or "all") per UTC minute like the other scans.
 * @param at the enqueue time (default now)
 */
export function jobId(data: EventDispatchData = {}, at: Date = new Date()): string {
  if (data.event_id) return safeJobId(QUEUE, `e${data.event_id}`);
  return scanRunId(QUEUE, data, at);
}

/**
 * Enqueues a run (the scheduler enqueues the regular ones).
 * @returns the job id (an existing job's id when deduplicated)
 * @throws the queue's error when Redis is unavailable
 */
export function enqueue(queues: Queues, data: EventDispatchData = {}, opts: JobsOptions = {}): Promise<string> {
  return enqueueScanRun(queues, QUEUE, data, defaultOptions, jobId(data), opts);
}

/**
 * Asks for one event to be dispatched now. Call it after the publishing transaction committed;
 * it never throws, because the scheduled scan delivers the event anyway within seconds.
 * @param eventId event_outbox.id returned by publishEvent
 * @param timeoutMs how long to wait for Redis, in ms (default 2000)
 * @returns true when the job was added (or already existed), false when Redis did not take it
 */
export async function nudge(queues: Queues, eventId: number, timeoutMs = 2000): Promise<boolean> {
  try {
    const data: EventDispatchData = { event_id: eventId };
    await addOrUnavailable(queues.get(QUEUE), QUEUE, data, { ...defaultOptions, jobId: jobId(data) }, timeoutMs);
    return true;
  } catch {
    return false;
  }
}

/** Thrown at the end of a run in which some events failed (the job shows failed in bull-board). */
export class EventDispatchFailed extends Error {
  constructor(
    readonly result: EventDispatchResult,
    readonly errors: string[],
  ) {
    const text = `${result.failed} event(s) failed and will be retried after their backoff: ${errors.join(' | ')}`;
    super(text.slice(0, 2000));
    this.name = 'EventDispatchFailed';
  }
}

/**
 * BullMQ processor: dispatches pending events (all, one tenant's, or one event) until none is left
 * or RUN_BUDGET_MS passed, then applies the retention rule (scans only).
 * @param signal checked between events and between subscribers, and passed to the handlers; when
 *   aborted the run stops and throws ScanAborted (the event in hand keeps what it delivered)
 * @returns the summary {dispatched, deliveries, failed, purged}
 * @throws EventDispatchFailed after the run when an event's attempt failed; ScanAborted when aborted
 */
export async function process(
  job: JobLike<EventDispatchData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<EventDispatchResult> {
  // Issue 15: the shared database's outbox, then each cut-over tenant's (its services write their
  // events in its database). Event ids are per database: a run for one event looks in each.
  const { knex, appKey } = jobDeps();
  const want = job.data?.tenant_id ?? null;
  const result: EventDispatchResult = { dispatched: 0, deliveries: 0, failed: 0, purged: 0 };
  const errors: string[] = [];
  await forEachTenantDatabase(
    knex,
    appKey,
    async (target) => {
      if (target.tenantId !== null && want !== null && target.tenantId !== want) return;
      const r = await dispatchEvents(target.knex, job, signal, target.excludeTenantIds);
      for (const k of ['dispatched', 'deliveries', 'failed', 'purged'] as const) result[k] += r.result[k];
      errors.push(...r.errors);
    },
    (id, err) => {
      result.failed += 1;
      errors.push(`tenant ${id}'s database: ${String((err as Error)?.message ?? err).slice(0, 200)}`);
    },
  );
  if (result.failed) throw new EventDispatchFailed(result, errors);
  return result;
}

/** Outcome of one event's attempt. */
interface Attempt {
  delivered: number;
  status: 'dispatched' | 'failed' | 'interrupted';
  error?: string;
}

/**
 * The dispatch loop behind process(), returning the failures instead of throwing them (tests and
 * the CLI use it).
 * @returns the summary and one line per failed event
 * @throws ScanAborted when the signal fired; the database error when PostgreSQL fails
 */
export async function dispatchEvents(
  knex: Knex,
  job: JobLike<EventDispatchData>,
  signal?: AbortSignal,
  excludeTenantIds: number[] = [],
): Promise<{ result: EventDispatchResult; errors: string[] }> {
  const tenantId = job.data?.tenant_id ?? null;
  const eventId = job.data?.event_id ?? null;
  const filter = { tenantId, eventId, exclude: excludeTenantIds };
  const {
    rows: [{ total }],
  } = await knex.raw(`SELECT count(*)::int AS total FROM event_outbox WHERE ${PENDING_SQL}`, pendingBindings(filter));
  const scope = `${tenantId ? ` in tenant ${tenantId}` : ''}${eventId ? ` (event ${eventId})` : ''}`;
  await job.log(`${total} event(s) pending${scope}`);
  const result: EventDispatchResult = { dispatched: 0, deliveries: 0, failed: 0, purged: 0 };
  const errors: string[] = [];
  const started = Date.now();
  let handled = 0;
  for (;;) {
    throwIfAborted(signal, handled);
    if (Date.now() - started > RUN_BUDGET_MS) {
      await job.log(`run budget of ${RUN_BUDGET_MS} ms used; the next run continues`);
      break;
    }
    const attempt = await dispatchNext(knex, filter, job, signal);
    if (!attempt) break;
    handled += 1;
    result.deliveries += attempt.delivered;
    if (attempt.status === 'dispatched') result.dispatched += 1;
    if (attempt.status === 'failed') {
      result.failed += 1;
      errors.push(attempt.error!);
      await job.log(attempt.error!);
    }
    await reportProgress(job, handled, total);
    if (eventId) break;
  }
  if (!eventId) result.purged = await purge(knex, tenantId);
  await job.log(
    `done: ${result.dispatched} dispatched, ${result.deliveries} delivery(ies), ` +
      `${result.failed} failed, ${result.purged} purged`,
  );
  await job.updateProgress(100);
  return { result, errors };
}

/** Filter of the undispatched rows a dispatcher may take now ($1 max attempts, then tenant, event). */
const PENDING_SQL = `dispatched_at IS NULL AND attempts < ? AND available_at <= now()
  AND (?::int IS NULL OR tenant_id = ?::int) AND (?::bigint IS NULL OR id = ?::bigint)
  AND tenant_id <> ALL(?::int[])`;

/** A dispatcher's filter; `exclude`: cut-over tenants, whose events are in their own database (issue 15). */
interface PendingFilter {
  tenantId: number | null;
  eventId: number | null;
  exclude: number[];
}

function pendingBindings(f: PendingFilter): (number | string | null)[] {
  // an array literal: knex would expand a JS array into several placeholders
  return [MAX_EVENT_ATTEMPTS, f.tenantId, f.tenantId, f.eventId, f.eventId, `{${f.exclude.map(Number).join(',')}}`];
}

/** Backoff before the next attempt of an event that failed `attempts` times, in ms. */
export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
}

/**
 * Takes the oldest pending event nobody else holds and runs its missing subscribers (see the file
 * comment). Returns null when there is none. A failure of the transaction itself (connection lost,
 * timeout) is still counted on the row, outside the transaction, then rethrown.
 */
async function dispatchNext(
  knex: Knex,
  filter: PendingFilter,
  job: JobLike<unknown>,
  signal?: AbortSignal,
): Promise<Attempt | null> {
  let current: OutboxEvent | null = null;
  try {
    return await knex.transaction(async (trx) => {
      await trx.raw(`SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
      await trx.raw(`SET LOCAL idle_in_transaction_session_timeout = ${IDLE_TX_TIMEOUT_MS}`);
      const { rows } = await trx.raw(
        `SELECT id, tenant_id, name, payload, created_at, attempts FROM event_outbox WHERE ${PENDING_SQL}
         ORDER BY id LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED`,
        pendingBindings(filter),
      );
      if (!rows.length) return null;
      const ev = toEvent(rows[0]);
      current = ev;
      return runSubscribers(trx, ev, job, signal);
    });
  } catch (err) {
    if (current) await recordFailure(knex, current, `dispatch: ${errorText(err)}`).catch(() => undefined);
    throw err;
  }
}

async function runSubscribers(
  trx: Knex.Transaction,
  ev: OutboxEvent,
  job: JobLike<unknown>,
  signal?: AbortSignal,
): Promise<Attempt> {
  const done = new Set<string>(await trx('event_deliveries').where({ event_id: ev.id }).pluck('subscriber'));
  const failures: string[] = [];
  let delivered = 0;
  for (const sub of subscribersFor(ev.name).filter((s) => !done.has(s.id))) {
    if (signal?.aborted) return { delivered, status: 'interrupted' };
    try {
      await trx.transaction(async (sp) => {
        await runHandler(sub, ev, sp, job, signal);
        await sp('event_deliveries').insert({ event_id: ev.id, subscriber: sub.id });
      });
      delivered += 1;
    } catch (err) {
      failures.push(`${sub.id}: ${errorText(err)}`);
    }
  }
  if (failures.length) {
    const attempts = await recordFailure(trx, ev, failures.join('; '));
    const next = attempts >= MAX_EVENT_ATTEMPTS ? 'given up' : `next attempt in ${retryDelayMs(attempts) / 1000} s`;
    const error =
      `event ${ev.id} (${ev.name}, tenant ${ev.tenant_id}): attempt ${attempts} failed (${next}): ` +
      failures.join('; ');
    return { delivered, status: 'failed', error };
  }
  await trx('event_outbox').where({ id: ev.id }).update({ dispatched_at: trx.fn.now(), last_error: null });
  return { delivered, status: 'dispatched' };
}

/** Counts a failed attempt on the row and sets its backoff; returns the new attempts count. */
async function recordFailure(db: Knex | Knex.Transaction, ev: OutboxEvent, error: string): Promise<number> {
  const attempts = ev.attempts + 1;
  await db('event_outbox')
    .where({ id: ev.id })
    .whereNull('dispatched_at')
    .update({
      attempts: db.raw('attempts + 1'),
      last_error: error.slice(0, 2000),
      available_at: db.raw(`now() + ?::int * interval '1 millisecond'`, [retryDelayMs(attempts)]),
    });
  return attempts;
}

/** Runs one handle() bounded by the subscriber's timeout; the handler's signal fires on timeout or shutdown. */
async function runHandler(
  sub: Subscriber,
  ev: OutboxEvent,
  sp: Knex.Transaction,
  job: JobLike<unknown>,
  signal?: AbortSignal,
): Promise<void> {
  const timeoutMs = sub.timeoutMs ?? DEFAULT_SUBSCRIBER_TIMEOUT_MS;
  const ctl = new AbortController();
  const onAbort = () => ctl.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`timed out after ${timeoutMs} ms`);
      ctl.abort(err);
      reject(err);
    }, timeoutMs);
  });
  const ctx = {
    trx: sp,
    idempotencyKey: idempotencyKey(ev.id, sub.id),
    signal: ctl.signal,
    log: (line: string) => job.log(`[${sub.id}] event ${ev.id}: ${line}`),
  };
  try {
    await Promise.race([sub.handle(ev, ctx), timeout]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Deletes expired events (deliveries cascade), at most PURGE_BATCH_SIZE per run. */
async function purge(knex: Knex, tenantId: number | null): Promise<number> {
  const { rowCount } = await knex.raw(
    `DELETE FROM event_outbox WHERE id IN (
       (SELECT id FROM event_outbox WHERE dispatched_at < now() - ?::int * interval '1 day'
          AND (?::int IS NULL OR tenant_id = ?::int) ORDER BY dispatched_at LIMIT ?)
       UNION ALL
       (SELECT id FROM event_outbox WHERE dispatched_at IS NULL AND attempts >= ?
          AND created_at < now() - ?::int * interval '1 day' AND (?::int IS NULL OR tenant_id = ?::int) LIMIT ?))`,
    [
      RETENTION_DAYS,
      tenantId,
      tenantId,
      PURGE_BATCH_SIZE,
      MAX_EVENT_ATTEMPTS,
      RETENTION_DAYS,
      tenantId,
      tenantId,
      PURGE_BATCH_SIZE,
    ],
  );
  return rowCount ?? 0;
}

/** An event_outbox row as subscribers receive it. */
interface OutboxRow {
  id: number;
  tenant_id: number;
  name: string;
  payload: unknown;
  created_at: Date;
  attempts: number;
}

function toEvent(row: OutboxRow): OutboxEvent {
  return {
    id: Number(row.id),
    tenant_id: row.tenant_id,
    name: row.name,
    payload: row.payload,
    created_at: new Date(row.created_at).toISOString(),
    attempts: row.attempts,
  } as OutboxEvent;
}

function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 500);
}
