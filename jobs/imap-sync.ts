import { UnrecoverableError, type Job, type JobsOptions, type Queue } from 'bullmq';
import type { Knex } from 'knex';
import { ExternalEmailAccount } from '../db/models/index.js';
import { forEachTenantDatabase, tenantScopeOf } from '../db/tenant-routing.js';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike, type JobSchedulerDef } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { MailAuthError, MailServerError, scrubSecret } from './adapters/mailbox-client/index.js';
import { accountLogins, loadAccount } from './email/account.js';
import { syncImap, testImap, type SyncCounts, type TestErrorCode, type TestOutcome } from './email/imap-source.js';
import { syncPop3, testPop3 } from './email/pop3-source.js';

/**
 * Job `imap-sync` (issue 9 item 3): the tenant's mailbox pulled into the inbox
 * (communication_messages, channel email).
 * - `imap-sync-account` {tenant_id, account_id, mode}: mode `sync` (POST .../sync, the scheduler)
 *   imports what is new since the cursor; mode `test` (POST .../test-incoming) imports at most the
 *   newest message not imported yet and leaves the cursor and the sync state alone.
 * - `imap-sync-all` (scheduler, every 5 minutes): one `sync` job per account whose tenant has the
 *   module `email` on, is not in demo mode, and whose account is not `auth_failed`.
 * Read-only on the server: IMAP opens INBOX with EXAMINE and fetches bodies with BODY.PEEK; POP3
 * (incoming_protocol pop3, jobs/email/pop3-source.ts) uses UIDL, TOP and RETR, never DELE;
 * nothing is deleted, flagged or moved. One sync per account at a time (PostgreSQL advisory lock).
 * Failures: a refused login -> `auth_failed` until the next save, UnrecoverableError; network and
 * server errors -> `failed` with the reason, retried (3 attempts). No password in data, logs or errors.
 */
export const QUEUE = 'imap-sync' as const;
/** Job name of one account's sync or test. */
export const ACCOUNT_JOB = 'imap-sync-account';
/** Job name of the scheduler's sweep. */
export const SWEEP_JOB = 'imap-sync-all';
/** The sweep's interval, in ms (5 minutes). */
export const SYNC_INTERVAL_MS = 5 * 60_000;
/** Advisory-lock class of the per-account sync lock (pg_advisory_xact_lock(class, account id)). */
const LOCK_CLASS = 90_901;

/** Job data: ids only (DESIGN.md §3). */
export interface ImapSyncData {
  tenant_id?: number;
  account_id?: number;
  mode?: 'sync' | 'test';
}

/** A sync's result (bull-board shows it). */
export interface ImapSyncResult extends SyncCounts {
  kind: 'sync';
  account_id: number;
  outcome: 'synced' | 'skipped';
}

/** A test's result: the answer of POST .../test-incoming. */
export type ImapTestResult = { kind: 'test' } & TestOutcome;

/** Result of the sweep. */
export interface ImapSweepResult {
  kind: 'sweep';
  enqueued: number;
}

/** Options of the account jobs: three attempts for network trouble. */
export const accountJobOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 3 };

/** Every 5 minutes, upserted by the worker. */
export const scheduler: JobSchedulerDef = {
  id: 'imap-sync-all',
  repeat: { every: SYNC_INTERVAL_MS },
  template: {
    name: SWEEP_JOB,
    data: {},
    opts: {
      attempts: 2,
      backoff: DEFAULT_JOB_OPTIONS.backoff,
      removeOnComplete: DEFAULT_JOB_OPTIONS.removeOnComplete,
      removeOnFail: DEFAULT_JOB_OPTIONS.removeOnFail,
    },
  },
};

/** The deduplication id of an account's sync: `imap-sync-<account id>`. */
export function syncDedupId(accountId: number): string {
  return safeJobId(QUEUE, accountId);
}

/**
 * Enqueues a sync of an account; while one is waiting or running, that one is returned
 * (BullMQ deduplication id `imap-sync-<account id>`, released when the job finishes).
 * @returns the job (its id and state tell the caller which)
 * @throws QueueUnavailableError (503 QUEUE_UNAVAILABLE) when Redis does not take it in time
 */
export async function enqueueSync(queue: Queue, a: { id: number; tenant_id: number }): Promise<Job<ImapSyncData>> {
  return addOrUnavailable<ImapSyncData>(
    queue,
    ACCOUNT_JOB,
    { tenant_id: a.tenant_id, account_id: a.id, mode: 'sync' },
    { ...accountJobOptions, deduplication: { id: syncDedupId(a.id) } },
  );
}

/**
 * Enqueues a connection test of an account (one attempt, its own job every time).
 * @throws QueueUnavailableError (503) when Redis does not take it in time
 */
export async function enqueueTest(queue: Queue, a: { id: number; tenant_id: number }): Promise<Job<ImapSyncData>> {
  return addOrUnavailable<ImapSyncData>(
    queue,
    ACCOUNT_JOB,
    { tenant_id: a.tenant_id, account_id: a.id, mode: 'test' },
    { ...DEFAULT_JOB_OPTIONS, attempts: 1 },
  );
}

/** Runs `fn` holding the account's advisory lock (waits up to 2 minutes for a running sync). */
async function withAccountLock<T>(knex: Knex, accountId: number, fn: () => Promise<T>): Promise<T> {
  return knex.transaction(async (trx) => {
    await trx.raw(`SET LOCAL lock_timeout = '120s'`);
    await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [LOCK_CLASS, accountId]);
    return fn();
  });
}

/** The test-incoming error code of a failure (issue 9 item 2). */
export function testErrorCode(e: unknown): TestErrorCode {
  if (e instanceof MailAuthError) return 'auth_failed';
  const code = e instanceof MailServerError ? e.code : String((e as { code?: string })?.code ?? '');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_failed';
  if (/^(TLS_|STARTTLS_)/.test(code)) return 'tls_failed';
  if (/TIMEOUT|ETIMEDOUT/i.test(code)) return 'timeout';
  if (/^(ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|EPIPE|NoConnection|EConnectionClosed|ClosedAfter)/.test(code))
    return 'connect_failed';
  return 'protocol_error';
}

/** The sweep: one sync job per account that may sync. Platform job (cross-tenant read of account ids). */
async function sweep(): Promise<ImapSweepResult> {
  const deps = jobDeps();
  if (!deps.queues) throw new Error('imap-sync-all needs the queues in the job dependencies');
  const rows: { id: number; tenant_id: number }[] = [];
  // the shared database without the cut-over tenants, then each cut-over tenant's (issue 15 item 4);
  // demo_mode and modules are read from the shared tenants row
  await forEachTenantDatabase(deps.knex, deps.appKey, async (t) => {
    const ids = (
      await deps
        .knex('tenants')
        .where('demo_mode', false)
        .whereRaw(`modules \\? 'email'`)
        .modify((q) => (t.tenantId === null ? q.whereNotIn('id', t.excludeTenantIds) : q.where('id', t.tenantId)))
        .pluck('id')
    ).map(Number);
    if (!ids.length) return;
    rows.push(
      ...(await t
        .knex('external_email_accounts as a')
        .whereIn('a.tenant_id', ids)
        .whereNot('a.sync_status', 'auth_failed')
        .whereNotNull('a.incoming_password_enc')
        .orderBy('a.id')
        .select('a.id', 'a.tenant_id')),
    );
  });
  const queue = deps.queues.get(QUEUE);
  for (const r of rows) await enqueueSync(queue, r);
  return { kind: 'sweep', enqueued: rows.length };
}

/**
 * The processor (BullMQ calls it as `process(job, token, signal)`).
 * @throws UnrecoverableError for a refused login (no retry); MailServerError for network and server
 *   failures (retried)
 */
export async function process(
  job: JobLike<ImapSyncData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<ImapSyncResult | ImapTestResult | ImapSweepResult> {
  if (job.name === SWEEP_JOB) return sweep();
  const { knex: shared, appKey, storage, mailTimeoutMs } = jobDeps();
  const clock = jobClock();
  const tenantId = Number(job.data.tenant_id);
  // every read and write of this run on the tenant's database after its cutover (issue 15 item 4)
  const scope = await tenantScopeOf(shared, tenantId, appKey, 'job');
  const knex = scope.knex as Knex;
  const accountId = Number(job.data.account_id);
  const mode = job.data.mode === 'test' ? 'test' : 'sync';
  const account = await loadAccount(knex, tenantId, accountId);
  if (!account) {
    if (mode === 'test') return { kind: 'test', ok: false, error: { code: 'protocol_error', message: 'No account' } };
    return { kind: 'sync', account_id: accountId, outcome: 'skipped', fetched: 0, imported: 0, skipped: 0 };
  }
  const logins = accountLogins(account, appKey);
  const scrub = (m: string) => logins.secrets.reduce((s, pw) => scrubSecret(s, pw), m);
  const setState = (patch: Partial<ExternalEmailAccount>) =>
    scope
      .query(ExternalEmailAccount)
      .findById(accountId)
      .patch({ ...patch, updated_at: clock.now() });
  const ctx = { knex, storage, account, logins, clock, job, signal, timeoutMs: mailTimeoutMs };
  const pop3 = account.incoming_protocol === 'pop3';
  if (mode === 'test') {
    try {
      const outcome = await withAccountLock(knex, accountId, () => (pop3 ? testPop3(ctx) : testImap(ctx)));
      return { kind: 'test', ...outcome };
    } catch (e) {
      return { kind: 'test', ok: false, error: { code: testErrorCode(e), message: scrub((e as Error).message) } };
    }
  }
  await setState({ sync_status: 'running' });
  try {
    const counts = await withAccountLock(knex, accountId, () => (pop3 ? syncPop3(ctx) : syncImap(ctx)));
    await setState({ sync_status: 'ok', last_synced_at: clock.now(), last_error: null });
    return { kind: 'sync', account_id: accountId, outcome: 'synced', ...counts };
  } catch (e) {
    const message = scrub((e as Error).message ?? String(e));
    if (e instanceof MailAuthError) {
      await setState({ sync_status: 'auth_failed', last_error: message });
      throw new UnrecoverableError(message);
    }
    await setState({ sync_status: 'failed', last_error: message });
    throw e instanceof MailServerError ? e : new Error(message);
  }
}
