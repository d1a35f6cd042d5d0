import type { Job, Queue } from 'bullmq';
import type { Knex } from 'knex';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { openCredentials, readProvisioningRows, type ProvisioningSection } from './provisioning/credentials.js';
import { CHECKS, type CheckOptions, type CheckProvider } from './provisioning/checks.js';

/**
 * Job `provisioning-check` (issue 13 item 5): one read-only check of the saved provisioning
 * credentials (tenant_db, cloudflare, mail_panel, storage, backup). The data is the provider name
 * only; the processor opens the credentials itself. The outcome is written as that section's
 * `last_test` {ok, at, message} (backup: provisioning_settings.backup_last_test) only if the
 * section did not change while the check ran, so a test of old values never marks new ones.
 */
export const QUEUE = 'provisioning-check' as const;
export const JOB = 'provisioning-check';

/** Job data: the provider only (DESIGN.md §3: never a secret). */
export interface ProvisioningCheckData {
  provider: CheckProvider;
}

/** The job's return value: the answer of POST .../credentials/test/{provider}. */
export interface ProvisioningCheckResult {
  provider: CheckProvider;
  ok: boolean;
  message: string;
  details: Record<string, unknown>;
}

/** Test knobs (fetch, timeouts) for the checks of this process; set by tests, default none. */
let checkOptions: CheckOptions = {};
/** Replaces the checks' options (tests: a short timeout). */
export function configureProvisioningChecks(o: CheckOptions): void {
  checkOptions = o;
}

/**
 * Runs one check and records its outcome.
 * @param knex the database
 * @param appKey the 32-byte APP_KEY opening the secrets
 * @param now when the check finished (the clock's now), for last_test.at
 * @throws Error when a sealed secret does not open (wrong APP_KEY)
 */
export async function runProvisioningCheck(
  knex: Knex,
  appKey: Buffer,
  provider: CheckProvider,
  now: () => Date,
): Promise<ProvisioningCheckResult> {
  const rows = await readProvisioningRows(knex);
  const outcome = await CHECKS[provider](openCredentials(rows, appKey), checkOptions);
  const lastTest = JSON.stringify({ ok: outcome.ok, at: now().toISOString(), message: outcome.message });
  if (provider === 'backup') {
    await knex('provisioning_settings')
      .where({ id: 1, backup_ready: true })
      .whereRaw("date_trunc('milliseconds', updated_at) = ?", [rows.settings.updated_at ?? new Date(0)])
      .update({ backup_last_test: lastTest });
  } else {
    const row = rows.sections.get(provider as ProvisioningSection);
    if (row)
      await knex('provisioning_credentials')
        .where({ section: provider })
        .whereRaw("date_trunc('milliseconds', changed_at) = ?", [row.changed_at])
        .update({ last_test: lastTest });
  }
  return { provider, ...outcome };
}

/** BullMQ processor of `provisioning-check`. */
export async function process(job: Job<ProvisioningCheckData>): Promise<ProvisioningCheckResult> {
  const { knex, appKey } = jobDeps();
  if (!appKey) throw new Error('provisioning-check needs the APP_KEY');
  const provider = job.data.provider;
  if (!(provider in CHECKS)) throw new Error(`unknown provider ${String(provider).slice(0, 40)}`);
  return runProvisioningCheck(knex, appKey, provider, () => jobClock().now());
}

/**
 * Enqueues a check (one attempt: a check is not retried, its answer is the point).
 * @throws QueueUnavailableError (503) when Redis cannot take it
 */
export function enqueueProvisioningCheck(queue: Queue, provider: CheckProvider) {
  return addOrUnavailable<ProvisioningCheckData>(
    queue,
    JOB,
    { provider },
    {
      ...DEFAULT_JOB_OPTIONS,
      attempts: 1,
      removeOnComplete: { age: 3600, count: 200 },
    },
  );
}
