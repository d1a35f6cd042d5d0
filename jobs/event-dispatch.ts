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
import { dispatchNext, PENDING_SQL, pendingBindings, purge } from './event-dispatch/attempt.js';

export {
  MAX_EVENT_ATTEMPTS,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
  RETENTION_DAYS,
  PURGE_BATCH_SIZE,
  STATEMENT_TIMEOUT_MS,
  IDLE_TX_TIMEOUT_MS,
  retryDelayMs,
} from './event-dispatch/attempt.js';

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

/** A run stops taking new events after this many ms (the next scheduled run continues). */
export const RUN_BUDGET_MS = 20_000;

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
      const r = await dispatchEvents(target.knex, job, signal, target.excludeTenantIds);
      for (const k of ['dispatched', 'deliveries', 'failed', 'purged'] as const) result[k] += r.result[k];
      errors.push(...r.errors);
    },
    (id, err) => {
      result.failed += 1;
      errors.push(`tenant ${id}'s database: ${String((err as Error)?.message ?? err).slice(0, 200)}`);
    },
    want,
  );
  if (result.failed) throw new EventDispatchFailed(result, errors);
  return result;
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
  if (!eventId) result.purged = await purge(knex, tenantId, excludeTenantIds);
  await job.log(
    `done: ${result.dispatched} dispatched, ${result.deliveries} delivery(ies), ` +
      `${result.failed} failed, ${result.purged} purged`,
  );
  await job.updateProgress(100);
  return { result, errors };
}
