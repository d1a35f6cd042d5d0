import type { Knex } from 'knex';
import type { JobLike } from '../queues.js';
import {
  DEFAULT_SUBSCRIBER_TIMEOUT_MS,
  MAX_SUBSCRIBER_TIMEOUT_MS,
  idempotencyKey,
  subscribersFor,
  type OutboxEvent,
  type Subscriber,
} from '../../api/events/service.js';

/**
 * One event's attempt for the `event-dispatch` job (jobs/event-dispatch.ts has the whole design):
 * the pending filter, the event's transaction holding its row, its missing subscribers each in a
 * savepoint with its delivery row, the failure count and backoff, and the retention purge.
 */

/** Failed attempts after which an event is no longer retried. */
export const MAX_EVENT_ATTEMPTS = 10;
/** Backoff of a failed event: RETRY_BASE_MS * 2^(attempts-1), in ms, capped at RETRY_MAX_MS (1 h). */
export const RETRY_BASE_MS = 5_000;
export const RETRY_MAX_MS = 3_600_000;
/** Days an event (and its deliveries) is kept after dispatch, or after publication when given up. */
export const RETENTION_DAYS = 30;
/** Rows deleted per retention statement (one per run). */
export const PURGE_BATCH_SIZE = 1000;
/** statement_timeout of the dispatcher's transaction, in ms (bounds the handlers' queries too). */
export const STATEMENT_TIMEOUT_MS = 30_000;
/** idle_in_transaction_session_timeout, in ms: a frozen worker's row lock is released after it. */
export const IDLE_TX_TIMEOUT_MS = MAX_SUBSCRIBER_TIMEOUT_MS + 30_000;

/** Outcome of one event's attempt. */
export interface Attempt {
  delivered: number;
  status: 'dispatched' | 'failed' | 'interrupted';
  error?: string;
}

/** Filter of the undispatched rows a dispatcher may take now ($1 max attempts, then tenant, event). */
export const PENDING_SQL = `dispatched_at IS NULL AND attempts < ? AND available_at <= now()
  AND (?::int IS NULL OR tenant_id = ?::int) AND (?::bigint IS NULL OR id = ?::bigint)
  AND tenant_id <> ALL(?::int[])`;

/** A dispatcher's filter; `exclude`: cut-over tenants, whose events are in their own database (issue 15). */
export interface PendingFilter {
  tenantId: number | null;
  eventId: number | null;
  exclude: number[];
}

/** The bindings of PENDING_SQL for a filter. */
export function pendingBindings(f: PendingFilter): (number | string | null)[] {
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
export async function dispatchNext(
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

/**
 * Deletes expired events (deliveries cascade), at most PURGE_BATCH_SIZE per statement kind per run.
 * @param tenantId limits the purge to one tenant (null: every tenant of this database)
 * @param exclude tenants whose rows are kept (issue 15: the cut-over tenants on the shared database,
 *   whose shared rows are what a production rollback and the "shared rows untouched" promise rely on;
 *   their own database's purge deletes their expired events)
 * @returns the rows deleted
 */
export async function purge(knex: Knex, tenantId: number | null, exclude: number[] = []): Promise<number> {
  // an array literal: knex would expand a JS array into several placeholders
  const excluded = `{${exclude.map(Number).join(',')}}`;
  const { rowCount } = await knex.raw(
    `DELETE FROM event_outbox WHERE id IN (
       (SELECT id FROM event_outbox WHERE dispatched_at < now() - ?::int * interval '1 day'
          AND (?::int IS NULL OR tenant_id = ?::int) AND tenant_id <> ALL(?::int[])
          ORDER BY dispatched_at LIMIT ?)
       UNION ALL
       (SELECT id FROM event_outbox WHERE dispatched_at IS NULL AND attempts >= ?
          AND created_at < now() - ?::int * interval '1 day' AND (?::int IS NULL OR tenant_id = ?::int)
          AND tenant_id <> ALL(?::int[]) LIMIT ?))`,
    [
      RETENTION_DAYS,
      tenantId,
      tenantId,
      excluded,
      PURGE_BATCH_SIZE,
      MAX_EVENT_ATTEMPTS,
      RETENTION_DAYS,
      tenantId,
      tenantId,
      excluded,
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
