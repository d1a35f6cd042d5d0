import { DelayedError, UnrecoverableError, type Job, type JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import { open } from '../lib/crypto.js';
import {
  addOrUnavailable,
  DEFAULT_JOB_OPTIONS,
  safeJobId,
  SHUTDOWN_ABORT_REASON,
  type JobLike,
  type Queues,
} from './queues.js';
import { jobDeps } from './deps.js';
import {
  createMailPanel,
  defaultPanelPort,
  PanelError,
  redactSecrets,
  type MailPanel,
  type MailPanelConfig,
  type PanelFailureKind,
  type PanelType,
} from './adapters/mail-panel/index.js';

/**
 * Job `mailbox-create` (issue 3 item 2 "Create mailbox", DESIGN.md §3): creates a mailbox in the
 * domain's control panel for a row of mail_mailbox_requests. The initial password is not in the job
 * data: the API sealed it in a mail_sealed_secrets row (AES-256-GCM under APP_KEY, associated data
 * `mailbox-create:<secret id>`, expiring after 15 minutes); the job carries that row's id and
 * deletes the row as soon as it is no longer needed (success, permanent failure, last attempt).
 *
 * Retry or give up (by PanelError.kind, decided by the panel adapters' pure classifiers):
 * - transient -> throw Error: BullMQ retries with exponential backoff; the sealed row is kept until
 *   the last attempt, then the request is marked failed and the row deleted;
 * - rate_limited -> the job is moved to delayed for the panel's Retry-After (default 30 s) without
 *   using an attempt (DelayedError), at most MAX_RATE_LIMIT_DELAYS times, then treated as transient;
 * - permanent, auth, exists (when no earlier run called the panel) -> request failed, row deleted,
 *   UnrecoverableError keeping the cause; `exists` after an earlier run called the panel
 *   (mail_mailbox_requests.panel_called_at, set and committed before each call; or an earlier failed
 *   attempt) means that run created it before it failed or died, and counts as success;
 * - stopped by the worker's shutdown (signal.reason SHUTDOWN_ABORT_REASON) -> nothing recorded, the
 *   sealed row kept: the worker puts the job back in its queue and it runs again;
 * - a domain without a panel, a missing/expired/unreadable sealed row, a worker without APP_KEY
 *   (jobs/deps.ts `appKey`) -> permanent.
 * Idempotent (DESIGN.md §3; issue 7 item 4: a worker killed with -9 mid-job runs it again): a
 * request already created (or failed) is not touched again; the panel's own "exists" after our
 * earlier call completes the request; the unique mail_mailboxes.email is the real guard against
 * registering twice.
 */
export const QUEUE = 'mailbox-create' as const;

/** Purpose of the sealed rows this job reads (mail_sealed_secrets.purpose and the AAD prefix). */
export const SECRET_PURPOSE = 'mailbox-create';
/** Lifetime of a sealed initial password, in ms (15 minutes). */
export const SECRET_TTL_MS = 15 * 60_000;
/** How often a rate-limited job is put back before rate limits count as transient failures. */
export const MAX_RATE_LIMIT_DELAYS = 10;
/** Wait when the panel rate-limits without a Retry-After, in ms. */
export const DEFAULT_RATE_LIMIT_DELAY_MS = 30_000;

/** Job data: ids only (DESIGN.md §3). Never a password. */
export interface MailboxCreateData {
  /** mail_mailbox_requests.id */
  request_id: number;
  /** mail_sealed_secrets.id (uuid) holding the sealed initial password */
  secret_id: string;
}

/** What the processor returns (shown in bull-board). */
export interface MailboxCreateResult {
  status: 'created' | 'already_created' | 'already_failed';
  request_id: number;
  mailbox_id: number | null;
}

/** Failure codes stored in mail_mailbox_requests.error_code (the API maps them to its codes). */
export type MailboxCreateErrorCode = PanelFailureKind | 'no_panel' | 'secret_expired' | 'secret_unreadable';

/** Default options: 5 attempts, exponential backoff from 2 s (2+4+8+16 s, well inside the 15 min secret). */
export const defaultOptions: JobsOptions = {
  ...DEFAULT_JOB_OPTIONS,
  attempts: 5,
  backoff: { type: 'exponential', delay: 2000 },
};

/** Fixed job id of a request: `mailbox-create-<request id>` (dedupes enqueues). */
export function jobId(requestId: number | string): string {
  return safeJobId(QUEUE, requestId);
}

/** The request id inside a job id of this queue, or null when it is not one. */
export function requestIdOf(id: string): number | null {
  const m = /^mailbox-create-([1-9][0-9]{0,15})$/.exec(id);
  return m ? Number(m[1]) : null;
}

/** Associated data a sealed initial password is bound to. */
export function secretAad(secretId: string): string {
  return `${SECRET_PURPOSE}:${secretId}`;
}

/**
 * Enqueues the job for a request (fixed job id; a second enqueue of the same request is a no-op).
 * @returns the BullMQ Job (the API waits on it)
 * @throws the queue's error when Redis is unavailable (the API answers 503 queue_unavailable)
 */
export async function enqueue(
  queues: Queues,
  data: MailboxCreateData,
  opts: JobsOptions = {},
): Promise<Job<MailboxCreateData>> {
  const clean: MailboxCreateData = { request_id: data.request_id, secret_id: data.secret_id };
  return addOrUnavailable(queues.get(QUEUE), QUEUE, clean, {
    ...defaultOptions,
    ...opts,
    jobId: jobId(data.request_id),
  });
}

/**
 * Settings of this job in the current process (tests inject a panel factory). The APP_KEY is not a
 * setting: it comes with the process's job dependencies (jobs/deps.ts `appKey`, set by
 * workers/main.ts startWorkers from the validated configuration).
 */
export interface MailboxCreateSettings {
  /** Builds the panel adapter (default createMailPanel). */
  panelFactory?: (cfg: MailPanelConfig) => MailPanel;
}

let settings: MailboxCreateSettings = {};

/** Sets this job's settings for the process (last call wins; pass {} to reset). */
export function configureMailboxCreate(s: MailboxCreateSettings): void {
  settings = { ...s };
}

/** The parts of a BullMQ Job the processor uses (real Jobs satisfy it; tests pass a fake). */
export interface MailboxCreateJob extends JobLike<MailboxCreateData> {
  attemptsMade: number;
  attemptsStarted?: number;
  opts: { attempts?: number };
  moveToDelayed?(timestamp: number, token?: string): Promise<void>;
}

async function markFailed(
  knex: Knex,
  data: MailboxCreateData,
  code: MailboxCreateErrorCode,
  message: string,
): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx('mail_mailbox_requests')
      .where({ id: data.request_id, status: 'pending' })
      .update({ status: 'failed', error_code: code, error: message.slice(0, 500), updated_at: trx.fn.now() });
    await trx('mail_sealed_secrets').where({ id: data.secret_id }).del();
  });
}

async function giveUp(
  knex: Knex,
  job: MailboxCreateJob,
  code: MailboxCreateErrorCode,
  message: string,
  cause?: unknown,
): Promise<never> {
  await markFailed(knex, job.data, code, message);
  await job.log(`failed (${code}): ${message}`);
  const err = new UnrecoverableError(`${code}: ${message}`);
  if (cause !== undefined) err.cause = cause;
  throw err;
}

function isLastAttempt(job: MailboxCreateJob): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/**
 * BullMQ processor of `mailbox-create`.
 * @param job data {request_id, secret_id}
 * @param token the worker's lock token (needed to move a rate-limited job to delayed)
 * @param signal aborts the panel call when the worker shuts down (the job is retried)
 * @returns {status, request_id, mailbox_id}
 * @throws UnrecoverableError (permanent failure; request marked failed, sealed row deleted),
 *   DelayedError (rate limited, moved to delayed), Error (transient; retried)
 */
export async function process(
  job: MailboxCreateJob,
  token?: string,
  signal?: AbortSignal,
): Promise<MailboxCreateResult> {
  const { knex, logger, appKey } = jobDeps();
  const data = job.data;
  const secrets: string[] = [];
  const safe = (m: string) => redactSecrets(m, secrets);
  await job.log(`request ${data.request_id}: attempt ${job.attemptsMade + 1} of ${job.opts.attempts ?? 1}`);

  const req = await knex('mail_mailbox_requests').where({ id: data.request_id }).first();
  if (!req) {
    await knex('mail_sealed_secrets').where({ id: data.secret_id }).del();
    throw new UnrecoverableError(`mailbox request ${data.request_id} does not exist`);
  }
  if (req.status !== 'pending') {
    await knex('mail_sealed_secrets').where({ id: data.secret_id }).del();
    await job.log(`request already ${req.status}; nothing to do`);
    return {
      status: req.status === 'created' ? 'already_created' : 'already_failed',
      request_id: req.id,
      mailbox_id: req.mailbox_id ?? null,
    };
  }
  const domain = await knex('mail_domains').where({ id: req.domain_id }).first();
  const email = `${req.local_part}@${domain.name}`;
  await job.updateProgress(10);
  if (!domain.panel_type) return giveUp(knex, job, 'no_panel', 'domain has no mail panel');

  const secret = await knex('mail_sealed_secrets')
    .where({ id: data.secret_id, purpose: SECRET_PURPOSE })
    .first('ciphertext', knex.raw('expires_at <= now() AS expired'));
  if (!secret || secret.expired)
    return giveUp(
      knex,
      job,
      'secret_expired',
      'the sealed initial password is missing or expired; send the request again',
    );
  if (!appKey)
    return giveUp(
      knex,
      job,
      'secret_unreadable',
      'the worker has no APP_KEY to open the sealed initial password (startWorkers appKey)',
    );
  let password: string;
  try {
    password = open(appKey, secret.ciphertext, secretAad(data.secret_id));
  } catch {
    return giveUp(knex, job, 'secret_unreadable', 'the sealed initial password cannot be opened (APP_KEY changed?)');
  }
  secrets.push(password);

  try {
    let panelPassword: string | null = null;
    if (domain.panel_password_enc) {
      try {
        panelPassword = open(appKey, domain.panel_password_enc, 'mail_domains.panel_password');
      } catch {
        return await giveUp(knex, job, 'permanent', 'the stored panel password cannot be opened (APP_KEY changed?)');
      }
      secrets.push(panelPassword);
    }
    const type = domain.panel_type as PanelType;
    const cfg: MailPanelConfig = {
      type,
      host: domain.panel_host,
      port: domain.panel_port ?? defaultPanelPort(type, domain.panel_ssl),
      user: domain.panel_user,
      password: panelPassword,
      ssh_key_path: domain.panel_ssh_key_path,
      ssl: domain.panel_ssl,
    };
    const panel = (settings.panelFactory ?? createMailPanel)(cfg);
    await job.updateProgress(30);
    // committed before the call: a run after this one (a retry, or a rerun after a kill -9) knows
    // that the panel may have created the mailbox even if this run never hears its answer
    await knex('mail_mailbox_requests')
      .where({ id: req.id, status: 'pending' })
      .update({ panel_called_at: knex.fn.now() });
    await job.log(`creating ${email} on the ${type} panel ${domain.panel_host}`);
    try {
      await panel.createMailbox(
        { domain: domain.name, local_part: req.local_part, password, real_name: req.real_name, quota: req.quota },
        signal,
      );
    } catch (e) {
      if (!(e instanceof PanelError)) throw e;
      if (e.kind === 'exists' && (req.panel_called_at || job.attemptsMade > 0)) {
        await job.log(`${email} already exists after an earlier run called the panel: treated as created`);
      } else if (
        e.kind === 'rate_limited' &&
        job.moveToDelayed &&
        token &&
        (job.attemptsStarted ?? 0) <= MAX_RATE_LIMIT_DELAYS
      ) {
        const wait = e.retryAfterMs ?? DEFAULT_RATE_LIMIT_DELAY_MS;
        await job.log(`panel rate limit: retrying in ${Math.round(wait / 1000)} s`);
        await job.moveToDelayed(Date.now() + wait, token);
        throw new DelayedError();
      } else if (e.kind === 'exists' || e.kind === 'permanent' || e.kind === 'auth') {
        return await giveUp(knex, job, e.kind, safe(e.message), e);
      } else throw e;
    }
  } catch (e) {
    if (e instanceof UnrecoverableError || e instanceof DelayedError) throw e;
    if (signal?.aborted && signal.reason === SHUTDOWN_ABORT_REASON) {
      await job.log('stopped by the worker shutdown: nothing recorded, the job runs again');
      throw e;
    }
    const kind: MailboxCreateErrorCode = e instanceof PanelError ? e.kind : 'transient';
    const message = safe(e instanceof Error ? e.message : String(e));
    if (isLastAttempt(job)) {
      await markFailed(knex, data, kind, message);
      await job.log(`failed on the last attempt (${kind}): ${message}`);
    } else await job.log(`attempt failed (${kind}), will retry: ${message}`);
    logger?.warn(
      { queue: QUEUE, job_id: job.id, request_id: data.request_id, kind, err: message },
      'mailbox-create attempt failed',
    );
    // the cause stays in memory like giveUp's: BullMQ keeps only message and stack, the worker logs only the message
    throw new Error(`${kind}: ${message}`, { cause: e });
  }

  await job.updateProgress(80);
  const mailboxId = await knex.transaction(async (trx) => {
    await trx('mail_mailboxes')
      .insert({
        domain_id: domain.id,
        email: email.toLowerCase(),
        local_part: req.local_part.toLowerCase(),
        display_name: req.real_name ?? null,
      })
      .onConflict('email')
      .ignore();
    const row = await trx('mail_mailboxes').where({ email: email.toLowerCase() }).first('id');
    await trx('mail_mailbox_requests')
      .where({ id: req.id })
      .update({ status: 'created', mailbox_id: row.id, error: null, error_code: null, updated_at: trx.fn.now() });
    await trx('mail_sealed_secrets').where({ id: data.secret_id }).del();
    return row.id as number;
  });
  await job.updateProgress(100);
  await job.log(`created ${email} (mailbox ${mailboxId})`);
  return { status: 'created', request_id: req.id, mailbox_id: mailboxId };
}
