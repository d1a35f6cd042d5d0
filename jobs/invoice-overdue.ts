import type { JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import { DEFAULT_JOB_OPTIONS, type JobLike, type JobSchedulerDef, type Queues } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { addDays, dateIn, isValidTimeZone, type Clock } from '../lib/clock.js';
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
import { forEachTenantDatabase, tenantScopeOf, type ScanTarget } from '../db/tenant-routing.js';
import { settingsOf } from '../api/settings/service.js';
import { suspendForOverdue } from '../api/customers/network-state.js';

/**
 * Job `invoice-overdue` (issue 2 §9): unpaid invoices whose due_date has passed become overdue.
 *
 * "Passed" is decided in the tenant's time zone (tenants.timezone, DESIGN.md §10): an invoice is
 * overdue when `due_date < today`, where today is the tenant's calendar date at the instant the run
 * starts (lib/clock.ts dateIn, the job clock of jobs/deps.ts). An invoice due on D turns overdue at
 * the first run after local midnight of D+1 there: for Asia/Jakarta (UTC+7) the run at 17:05 UTC
 * (the hourly scheduler runs at minute 5 UTC, so at most 65 minutes after local midnight).
 *
 * Then (issue 8 item 2) it isolates: in every tenant whose `isolation_grace_days` setting is not null
 * (null = off, the default), active customers with an invoice overdue for more than that many days
 * (`due_date < today - grace`, today in the tenant's zone; grace 0: any overdue invoice) are
 * suspended with suspend_reason `overdue` through api/customers/network-state.ts suspendForOverdue,
 * in transactions of ISOLATE_BATCH_SIZE customers, each enqueueing their customer-network pushes
 * (the NAS isolates them). Redis down: the batch rolls back and the job fails and retries (the
 * marking is idempotent). A customer suspended by hand is not touched; one reactivated by hand
 * while still overdue is suspended again at the next run.
 *
 * Platform job: it scans every tenant's invoices. This (and ticket-sla) is the one allowed place for
 * a cross-tenant query (DESIGN.md §5); it touches no row through a tenant's request and reports its
 * counts per tenant.
 */
export const QUEUE = 'invoice-overdue' as const;

/** Job data: ids only (DESIGN.md §3). tenant_id limits a run to one tenant; absent = all tenants. */
export interface InvoiceOverdueData {
  tenant_id?: number | null;
}

/** What the processor returns (shown in bull-board as the job's return value). */
export interface InvoiceOverdueResult {
  /** Invoices changed from unpaid to overdue by this run. */
  changed: number;
  /** The instant the run took "today" from (ISO 8601, UTC; the job clock's now at the start). */
  as_of: string;
  /**
   * Today per time zone of the scanned tenants, as compared with due_date: IANA zone -> YYYY-MM-DD
   * (e.g. {"Asia/Jakarta": "..."}). A zone this process cannot resolve is left out, and so are its tenants.
   */
  today: Record<string, string>;
  /** Changed invoices per tenant id. */
  tenants: Record<string, number>;
  /** UPDATE statements run. */
  batches: number;
  /** Customers suspended for overdue invoices per tenant id (tenants with isolation_grace_days set). */
  suspended: Record<string, number>;
}

/** Customers suspended per transaction (each is audited and gets its network push enqueued). */
export const ISOLATE_BATCH_SIZE = 100;

/** Default options of this job: a scan retried a few times, failed runs kept a week, completed trimmed. */
export const defaultOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 3 };

/**
 * Hourly at minute 5 (UTC), registered by the worker with upsertJobScheduler, plus one catch-up run
 * as soon as a worker starts (`immediately`: BullMQ does not keep it, so later runs follow the
 * pattern): invoices that fell due while no worker ran are marked at once, not up to an hour later,
 * and bull-board shows a run right after `npm start`. The scan is idempotent, so the extra run
 * when several workers start is harmless.
 */
export const scheduler: JobSchedulerDef = scanScheduler(
  QUEUE,
  'invoice-overdue-hourly',
  { pattern: '5 * * * *', tz: 'UTC', immediately: true },
  defaultOptions,
);

/**
 * Fixed id of a manual run: one per tenant (or "all") per UTC minute, so repeated clicks or CLI
 * calls within a minute enqueue one job.
 * @param at the enqueue time (default now)
 */
export function jobId(data: InvoiceOverdueData = {}, at: Date = new Date()): string {
  return scanRunId(QUEUE, data, at);
}

/**
 * Enqueues a manual run (the scheduler enqueues the regular ones).
 * @returns the job id (an existing job's id when deduplicated)
 * @throws the queue's error when Redis is unavailable (the API maps it to 503 QUEUE_UNAVAILABLE)
 */
export function enqueue(queues: Queues, data: InvoiceOverdueData = {}, opts: JobsOptions = {}): Promise<string> {
  return enqueueScanRun(queues, QUEUE, data, defaultOptions, jobId(data), opts);
}

/**
 * BullMQ processor: marks overdue invoices in batches of 500 (`UPDATE ... WHERE id IN (SELECT ...
 * FOR UPDATE SKIP LOCKED LIMIT 500)`), so a payment being written concurrently is skipped, not
 * waited for, and picked up by the next run. Idempotent: a second run changes nothing.
 * "Today" comes from the job clock (jobDeps().clock, default the system clock).
 * @param signal checked between batches; when aborted, throws ScanAborted (the job retries)
 * @returns the summary {changed, as_of, today, tenants, batches}
 */
export async function process(
  job: JobLike<InvoiceOverdueData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<InvoiceOverdueResult> {
  return markOverdue(jobDeps().knex, jobClock(), job, signal);
}

async function markOverdue(
  knex: Knex,
  clock: Clock,
  job: JobLike<InvoiceOverdueData>,
  signal?: AbortSignal,
): Promise<InvoiceOverdueResult> {
  const tenantId = job.data?.tenant_id ?? null;
  const asOf = clock.now();
  const today = await todayPerZone(knex, asOf, tenantId, job);
  const zones = Object.entries(today);
  if (!zones.length) {
    await job.log(`as of ${asOf.toISOString()}: no tenant to scan${tenantId ? ` (tenant ${tenantId})` : ''}`);
    await job.updateProgress(100);
    return { changed: 0, as_of: asOf.toISOString(), today, tenants: {}, batches: 0, suspended: {} };
  }
  // Cross-tenant on purpose (platform job, see the file comment). The constant upper bound (the
  // latest of the dates) lets PostgreSQL range-scan the partial index invoices_overdue_scan.
  const latest = zones
    .map(([, d]) => d)
    .sort()
    .at(-1)!;
  const perTenant: Record<string, number> = {};
  let changed = 0;
  let batches = 0;
  await forEachTenantDatabase(
    knex,
    jobDeps().appKey,
    async (target) => {
      const k = target.knex;
      const past = await pastDueOf(knex, target, zones, latest, tenantId);
      if (!past) {
        await job.log(`tenant ${target.tenantId}'s database: its time zone is unknown here, skipped this run`);
        return;
      }
      const [pastDue, pastDueBindings] = past;
      const {
        rows: [{ total }],
      } = await k.raw(`SELECT count(*)::int AS total ${pastDue}`, pastDueBindings);
      const zoneList = zones.map(([tz, d]) => `${d} in ${tz}`).join(', ');
      const scope = tenantId ? ` in tenant ${tenantId}` : '';
      const db = target.tenantId === null ? 'shared database' : `tenant ${target.tenantId}'s database`;
      await job.log(
        `as of ${asOf.toISOString()} (today ${zoneList}): ${total} unpaid invoice(s) past due${scope} (${db})`,
      );
      for (;;) {
        throwIfAborted(signal, changed);
        const { rows } = await k.raw(
          // The batch is picked once in a CTE (a data-locking CTE is evaluated exactly once): as an
          // `IN (SELECT ... LIMIT)` the planner may rescan the subquery and update more than a batch.
          `WITH picked AS (SELECT i.id ${pastDue} ORDER BY i.id LIMIT ? FOR UPDATE OF i SKIP LOCKED)
           UPDATE invoices AS u SET status = 'overdue', updated_at = now()
           FROM picked WHERE u.id = picked.id AND u.status = 'unpaid'
           RETURNING u.id, u.tenant_id`,
          [...pastDueBindings, SCAN_BATCH_SIZE],
        );
        batches += 1;
        for (const r of rows as { tenant_id: number }[]) tally(perTenant, r.tenant_id);
        changed += rows.length;
        await reportProgress(job, changed, total);
        if (rows.length < SCAN_BATCH_SIZE) break;
      }
    },
    (id, err) => void job.log(`tenant ${id}'s database: ${String((err as Error)?.message ?? err).slice(0, 200)}`),
    tenantId,
  );
  const slugs = await tenantSlugs(knex, Object.keys(perTenant).map(Number));
  for (const [id, n] of Object.entries(perTenant)) {
    await job.log(`tenant ${id} (${slugs.get(Number(id)) ?? '?'}): ${n} invoice(s) marked overdue`);
  }
  await job.log(`done: ${changed} invoice(s) marked overdue in ${batches} batch(es)`);
  const suspended = await isolateOverdue(knex, asOf, tenantId, job, signal);
  await job.updateProgress(100);
  return { changed, as_of: asOf.toISOString(), today, tenants: perTenant, batches, suspended };
}

/**
 * The past-due filter (`FROM invoices i ... WHERE ...`) and its bindings for one database of the
 * scan (issue 15: the shared database minus the cut-over tenants, then each cut-over tenant's).
 * The time zone is always the SHARED tenants row's (identity table): a tenant database keeps only
 * the cutover's copy of that row, stale after a change, so its query takes the tenant's today from
 * the shared row instead of joining its own `tenants`.
 * @param zones today per zone (todayPerZone, read on the shared database)
 * @returns null when the cut-over tenant's zone is not one of `zones` (unknown here)
 */
async function pastDueOf(
  shared: Knex,
  target: ScanTarget,
  zones: [string, string][],
  latest: string,
  tenantId: number | null,
): Promise<[string, Knex.RawBinding[]] | null> {
  if (target.tenantId === null) {
    const sql = `FROM invoices i
    JOIN tenants t ON t.id = i.tenant_id
    JOIN (VALUES ${zones.map(() => '(?::text, ?::date)').join(', ')}) AS z(tz, today) ON z.tz = t.timezone
    WHERE i.status = 'unpaid' AND i.due_date < ?::date AND i.due_date < z.today
      AND (?::int IS NULL OR i.tenant_id = ?::int) AND NOT (i.tenant_id = ANY(?::int[]))`;
    return [sql, [...zones.flat(), latest, tenantId, tenantId, target.excludeTenantIds]];
  }
  const t = (await shared('tenants').where({ id: target.tenantId }).first('timezone')) as
    { timezone: string } | undefined;
  const today = zones.find(([tz]) => tz === t?.timezone)?.[1];
  if (!today) return null;
  const sql = `FROM invoices i WHERE i.status = 'unpaid' AND i.due_date < ?::date AND i.tenant_id = ?::int`;
  return [sql, [today, target.tenantId]];
}

/**
 * Suspends (suspend_reason overdue) the active customers overdue beyond their tenant's
 * isolation_grace_days (see the file comment).
 * @returns customers suspended per tenant id
 * Without queue producers (JobDeps.queues: a processor run outside startWorkers) it logs and suspends nobody.
 * @throws QueueUnavailableError when Redis does not take a push (that batch is rolled back; the job retries)
 */
async function isolateOverdue(
  knex: Knex,
  asOf: Date,
  tenantId: number | null,
  job: JobLike<unknown>,
  signal?: AbortSignal,
): Promise<Record<string, number>> {
  const tenants: { id: number; slug: string; timezone: string; settings: Record<string, unknown> | null }[] =
    await knex('tenants')
      .whereRaw(`jsonb_typeof(settings->'isolation_grace_days') = 'number'`)
      .modify((q) => {
        if (tenantId !== null) q.where({ id: tenantId });
      })
      .orderBy('id')
      .select('id', 'slug', 'timezone', 'settings');
  const out: Record<string, number> = {};
  for (const t of tenants) {
    const grace = settingsOf(t).isolation_grace_days;
    if (grace === null || !isValidTimeZone(t.timezone)) continue;
    const cutoff = addDays(dateIn(t.timezone, asOf), -grace);
    const s = await tenantScopeOf(knex, t.id, jobDeps().appKey, 'job');
    let lastId = 0;
    let n = 0;
    for (;;) {
      throwIfAborted(signal, n);
      const ids: number[] = await s
        .table('customers', 'c')
        .where('c.status', 'active')
        .where('c.id', '>', lastId)
        .whereExists((q) => {
          q.from('invoices as i')
            .whereRaw('i.customer_id = c.id AND i.tenant_id = c.tenant_id')
            .where('i.status', 'overdue')
            .where('i.due_date', '<', cutoff);
        })
        .orderBy('c.id')
        .limit(ISOLATE_BATCH_SIZE)
        .pluck('c.id');
      if (!ids.length) break;
      const { queues } = jobDeps();
      if (!queues) {
        // startWorkers always gives producers; a processor run without them (a script, a test) marks only
        await job.log(`tenant ${t.id} (${t.slug}): isolation skipped, this process has no queue producers`);
        break;
      }
      n += (await s.knex.transaction((trx) => suspendForOverdue(trx, queues, t.id, ids))).length;
      lastId = ids[ids.length - 1];
      if (ids.length < ISOLATE_BATCH_SIZE) break;
    }
    if (n) out[String(t.id)] = n;
    await job.log(
      `tenant ${t.id} (${t.slug}): ${n} customer(s) suspended for invoices overdue more than ${grace} day(s) ` +
        `(due before ${cutoff})`,
    );
  }
  return out;
}

/**
 * Today at `asOf` in every time zone of the tenants scanned (all, or `tenantId` only).
 * A zone Intl does not know is logged and left out (its tenants are not scanned this run).
 * @returns IANA zone -> YYYY-MM-DD
 */
async function todayPerZone(
  knex: Knex,
  asOf: Date,
  tenantId: number | null,
  job: JobLike<unknown>,
): Promise<Record<string, string>> {
  const rows: { timezone: string }[] = await knex('tenants')
    .distinct('timezone')
    .orderBy('timezone')
    .modify((q) => {
      if (tenantId !== null) q.where({ id: tenantId });
    });
  const today: Record<string, string> = {};
  for (const { timezone } of rows) {
    if (isValidTimeZone(timezone)) today[timezone] = dateIn(timezone, asOf);
    else await job.log(`time zone ${JSON.stringify(timezone)} is unknown here: its tenants are skipped this run`);
  }
  return today;
}
