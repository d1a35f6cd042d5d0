import type { JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import { forEachTenantDatabase } from '../db/tenant-routing.js';
import { DEFAULT_JOB_OPTIONS, type JobLike, type JobSchedulerDef, type Queues } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import type { Clock } from '../lib/clock.js';
import {
  SCAN_BATCH_SIZE,
  enqueueScanRun,
  reportProgress,
  scanRunId,
  scanScheduler,
  tally,
  tenantSlugs,
  throwIfAborted,
} from './platform-scan.js';
import { dueDates, type Priority } from '../api/tickets/sla.js';

/**
 * Job `ticket-sla` (issue 2 §9, DESIGN.md §6 "ticket due dates"): the SLA scan, every minute.
 * Only active tickets (status open or inprogress) are looked at; resolved and closed ones are history.
 * 1. Active tickets without due dates (rows from before the SLA existed, imports) get
 *    response_due_at and resolution_due_at from api/tickets/sla.ts dueDates(): the tenant's SLA
 *    settings, the ticket's priority, counted from created_at. A due date already set is kept.
 * 2. Active tickets not yet flagged get sla_breached = true when resolution_due_at has passed, or
 *    response_due_at has passed without a response (responded_at null), or the response came after
 *    response_due_at (a late response is a breach even if it landed between two runs).
 * "Passed" is compared with the job clock (jobs/deps.ts, default the system clock) read once at the
 * start of the run (as_of); updated_at is the database's now() of the write.
 * Both steps set updated_at on the rows they change; a second run changes nothing.
 *
 * Platform job: it scans every tenant's tickets. This (and invoice-overdue) is the one allowed
 * place for a cross-tenant query (DESIGN.md §5); counts are reported per tenant.
 */
export const QUEUE = 'ticket-sla' as const;

/** Job data: ids only (DESIGN.md §3). tenant_id limits a run to one tenant; absent = all tenants. */
export interface TicketSlaData {
  tenant_id?: number | null;
}

/** What the processor returns (shown in bull-board as the job's return value). */
export interface TicketSlaResult {
  /** Tickets changed by this run (due dates set and/or flagged breached; each ticket counted once). */
  changed: number;
  /** Tickets that got their due dates. */
  due_dates_set: number;
  /** Tickets flagged sla_breached. */
  breached: number;
  /** The instant the run compared due dates with (ISO 8601; the job clock's now at the start). */
  as_of: string;
  /** Per tenant id: {due_dates_set, breached}. */
  tenants: Record<string, { due_dates_set: number; breached: number }>;
}

/** Default options: a scan that runs every minute needs few retries; failed runs are kept a week. */
export const defaultOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 2 };

/** Every minute, registered by the worker with upsertJobScheduler. */
export const scheduler: JobSchedulerDef = scanScheduler(
  QUEUE,
  'ticket-sla-every-minute',
  { every: 60_000 },
  defaultOptions,
);

/**
 * Fixed id of a manual run: one per tenant (or "all") per UTC minute.
 * @param at the enqueue time (default now)
 */
export function jobId(data: TicketSlaData = {}, at: Date = new Date()): string {
  return scanRunId(QUEUE, data, at);
}

/**
 * Enqueues a manual run (the scheduler enqueues the regular ones).
 * @returns the job id (an existing job's id when deduplicated)
 * @throws the queue's error when Redis is unavailable (the API maps it to 503 QUEUE_UNAVAILABLE)
 */
export function enqueue(queues: Queues, data: TicketSlaData = {}, opts: JobsOptions = {}): Promise<string> {
  return enqueueScanRun(queues, QUEUE, data, defaultOptions, jobId(data), opts);
}

/**
 * BullMQ processor: the two steps above, each in batches of 500 rows locked with
 * FOR UPDATE SKIP LOCKED (a ticket being edited is skipped and handled by the next run).
 * "Now" comes from the job clock (jobDeps().clock, default the system clock).
 * @param signal checked between batches; when aborted, throws ScanAborted (the job retries)
 * @returns the summary {changed, due_dates_set, breached, as_of, tenants}
 */
export async function process(
  job: JobLike<TicketSlaData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<TicketSlaResult> {
  return scan(jobDeps().knex, jobClock(), job, signal);
}

const ACTIVE = `status IN ('open', 'inprogress')`;
const MISSING_DUE = `(response_due_at IS NULL OR resolution_due_at IS NULL)`;
const BREACHED = `(resolution_due_at < ? OR (response_due_at < ? AND (responded_at IS NULL OR responded_at > response_due_at)))`;
const TENANT = `(?::int IS NULL OR tenant_id = ?::int) AND tenant_id <> ALL(?::int[])`;

async function scan(
  shared: Knex,
  clock: Clock,
  job: JobLike<TicketSlaData>,
  signal?: AbortSignal,
): Promise<TicketSlaResult> {
  const tenantId = job.data?.tenant_id ?? null;
  const asOf = clock.now();
  const perTenant: TicketSlaResult['tenants'] = {};
  const bump = (tid: number, key: 'due_dates_set' | 'breached') => {
    (perTenant[String(tid)] ??= { due_dates_set: 0, breached: 0 })[key] += 1;
  };
  const changedIds = new Set<number>();
  const settingsCache = new Map<number, Record<string, unknown>>();
  let done = 0;
  // Cross-tenant on purpose (platform job, see the file comment): the shared database without the
  // cut-over tenants, then each cut-over tenant's database (issue 15 item 4); tenants.settings and
  // slugs from the shared database
  const failed: number[] = [];
  await forEachTenantDatabase(
    shared,
    jobDeps().appKey,
    async (target) => {
      const knex = target.knex;
      const exclude = `{${target.excludeTenantIds.map(Number).join(',')}}`;
      const {
        rows: [counts],
      } = await knex.raw(
        `SELECT count(*) FILTER (WHERE ${MISSING_DUE})::int AS missing,
                count(*) FILTER (WHERE NOT sla_breached AND ${BREACHED})::int AS breaching
         FROM tickets WHERE ${ACTIVE} AND ${TENANT}`,
        [asOf, asOf, tenantId, tenantId, exclude],
      );
      const total = done + counts.missing + counts.breaching;
      const db = target.tenantId === null ? 'shared database' : `tenant ${target.tenantId}'s database`;
      await job.log(
        `as of ${asOf.toISOString()} (${db}): ${counts.missing} active ticket(s) without due dates, ${counts.breaching} past due and not flagged`,
      );

      // Step 1: due dates for active tickets that have none.
      for (;;) {
        throwIfAborted(signal, done);
        const filled = await knex.transaction(async (trx) => {
          const { rows } = await trx.raw(
            `SELECT id, tenant_id, priority, created_at FROM tickets
         WHERE ${ACTIVE} AND ${MISSING_DUE} AND ${TENANT}
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED`,
            [tenantId, tenantId, exclude, SCAN_BATCH_SIZE],
          );
          const batch = rows as { id: number; tenant_id: number; priority: Priority; created_at: Date }[];
          if (!batch.length) return batch;
          await loadSettings(
            shared,
            settingsCache,
            batch.map((r) => r.tenant_id),
          );
          const values: Knex.RawBinding[] = [];
          for (const r of batch) {
            const d = dueDates(settingsCache.get(r.tenant_id) ?? {}, r.priority, new Date(r.created_at));
            values.push(r.id, d.response_due_at, d.resolution_due_at);
          }
          await trx.raw(
            `UPDATE tickets AS t SET response_due_at = coalesce(t.response_due_at, v.r), resolution_due_at = coalesce(t.resolution_due_at, v.s), updated_at = now()
         FROM (VALUES ${batch.map(() => '(?::int, ?::timestamptz, ?::timestamptz)').join(', ')}) AS v(id, r, s)
         WHERE t.id = v.id`,
            values,
          );
          return batch;
        });
        for (const r of filled) {
          bump(r.tenant_id, 'due_dates_set');
          changedIds.add(r.id);
        }
        done += filled.length;
        await reportProgress(job, done, total);
        if (filled.length < SCAN_BATCH_SIZE) break;
      }

      // Step 2: flag breaches (includes tickets whose due dates step 1 just set in the past).
      for (;;) {
        throwIfAborted(signal, done);
        const { rows } = await knex.raw(
          `UPDATE tickets AS t SET sla_breached = true, updated_at = now()
       WHERE t.sla_breached = false AND t.id IN (
         SELECT id FROM tickets
         WHERE ${ACTIVE} AND sla_breached = false AND ${BREACHED} AND ${TENANT}
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)
       RETURNING t.id, t.tenant_id`,
          [asOf, asOf, tenantId, tenantId, exclude, SCAN_BATCH_SIZE],
        );
        for (const r of rows as { id: number; tenant_id: number }[]) {
          bump(r.tenant_id, 'breached');
          changedIds.add(r.id);
        }
        done += rows.length;
        await reportProgress(job, done, total);
        if (rows.length < SCAN_BATCH_SIZE) break;
      }
    },
    (id) => void failed.push(id),
    tenantId,
  );
  for (const id of failed) await job.log(`tenant ${id}'s database could not be scanned`);

  const slugs = await tenantSlugs(shared, Object.keys(perTenant).map(Number));
  const sum: Record<string, number> = {};
  for (const [id, c] of Object.entries(perTenant)) {
    tally(sum, 'due_dates_set', c.due_dates_set);
    tally(sum, 'breached', c.breached);
    await job.log(
      `tenant ${id} (${slugs.get(Number(id)) ?? '?'}): ${c.due_dates_set} ticket(s) got due dates, ${c.breached} flagged sla_breached`,
    );
  }
  const result: TicketSlaResult = {
    changed: changedIds.size,
    due_dates_set: sum.due_dates_set ?? 0,
    breached: sum.breached ?? 0,
    as_of: asOf.toISOString(),
    tenants: perTenant,
  };
  await job.log(
    `done: ${result.changed} ticket(s) changed (${result.due_dates_set} due dates set, ${result.breached} breached)`,
  );
  await job.updateProgress(100);
  return result;
}

/** Loads tenants.settings for the ids not yet in the cache (a platform job: any tenant). */
async function loadSettings(trx: Knex, cache: Map<number, Record<string, unknown>>, ids: number[]): Promise<void> {
  const missing = [...new Set(ids)].filter((id) => !cache.has(id));
  if (!missing.length) return;
  const rows: { id: number; settings: Record<string, unknown> | null }[] = await trx('tenants')
    .whereIn('id', missing)
    .select('id', 'settings');
  for (const r of rows) cache.set(r.id, r.settings ?? {});
}
