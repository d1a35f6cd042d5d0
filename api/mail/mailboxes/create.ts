import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { seal } from '../../../lib/crypto.js';
import { validateCreateMailbox } from '../../../jobs/adapters/mail-panel/validate.js';
import * as mailboxCreate from '../../../jobs/mailbox-create.js';
import { MailApiError, invalidRequest } from '../errors.js';
import type { MailContext, MailDeps, ResolvedDomain } from '../context.js';

/**
 * Create mailbox (document 3, issue 3 item 2; docs/mailbox-api.md "Creating mailboxes"):
 * validate -> one transaction writes the request (pending) and the sealed initial password ->
 * enqueue `mailbox-create` with a fixed job id and ids only -> wait on the job up to createWaitMs ->
 * 201 with the mailbox, 202 pending with the job id, or the mapped failure.
 */

/** Default wait of POST .../mailboxes for the job, in ms. */
export const DEFAULT_CREATE_WAIT_MS = 30_000;

/** The validated create-mailbox payload. */
export interface CreateMailboxPayload {
  local_part: string;
  password: string;
  real_name?: string | null;
  quota?: string | null;
}

/** The 201 `data` (document 3 "Create mailbox result"). */
export interface CreatedMailbox {
  email: string;
  username: string;
  domain: string;
  imap_host: string;
  imap_port: number;
  smtp_host: string;
  smtp_port: number;
}

/** Where a request stands, read back from PostgreSQL (the job's outcome lives there). */
export type RequestOutcome =
  | { status: 'pending'; job_id: string }
  | { status: 'created'; job_id: string; data: CreatedMailbox }
  | { status: 'failed'; job_id: string; error_code: string | null; error: string | null };

/**
 * Checks the payload with the rules shared with the panel adapters (validateCreateMailbox).
 * @throws MailApiError 422 invalid_request with field errors (never echoing the password)
 */
export function checkPayload(domain: string, body: CreateMailboxPayload): void {
  const errors = validateCreateMailbox({
    domain,
    local_part: body.local_part,
    password: body.password,
    real_name: body.real_name ?? null,
    quota: body.quota ?? null,
  });
  delete errors.domain; // the path's domain is a registered one
  if (Object.keys(errors).length) throw invalidRequest(errors);
}

/**
 * Writes the request and its sealed password in one transaction, then enqueues the job.
 * @returns the request id and the Job
 * @throws MailApiError 409 mailbox_exists (registered, or a request for it is pending: `job_id`
 *   says which), 409 panel_not_configured, 503 queue_unavailable (the rows are deleted again)
 */
export async function startMailboxCreate(
  deps: MailDeps,
  domain: ResolvedDomain,
  keyId: number,
  body: CreateMailboxPayload,
): Promise<{ requestId: number; job: Job }> {
  const { knex } = deps;
  const localPart = body.local_part.toLowerCase();
  const email = `${localPart}@${domain.name}`;
  if (await knex('mail_mailboxes').where({ email }).first('id'))
    throw new MailApiError('mailbox_exists', `The mailbox ${email} already exists.`);
  if (!domain.panel_type) throw new MailApiError('panel_not_configured');
  await knex('mail_sealed_secrets').where('expires_at', '<', knex.fn.now()).del(); // sweep leftovers of jobs that never ran

  const secretId = randomUUID();
  let requestId: number;
  try {
    requestId = await knex.transaction(async (trx) => {
      const [row] = await trx('mail_mailbox_requests')
        .insert({
          domain_id: domain.id,
          key_id: keyId,
          local_part: localPart,
          real_name: body.real_name ?? null,
          quota: body.quota ?? null,
          status: 'pending',
        })
        .returning('id');
      await trx('mail_sealed_secrets').insert({
        id: secretId,
        purpose: mailboxCreate.SECRET_PURPOSE,
        ciphertext: seal(deps.config.appKey, body.password, mailboxCreate.secretAad(secretId)),
        expires_at: new Date(Date.now() + mailboxCreate.SECRET_TTL_MS),
      });
      return Number(row.id);
    });
  } catch (e) {
    if ((e as { code?: string }).code === '23505') {
      const pending = await knex('mail_mailbox_requests')
        .where({ domain_id: domain.id, status: 'pending' })
        .whereRaw('lower(local_part) = ?', [localPart])
        .first('id');
      throw new MailApiError('mailbox_exists', `A request to create ${email} is already pending.`, {
        extra: pending ? { job_id: mailboxCreate.jobId(pending.id) } : {},
      });
    }
    throw e;
  }

  try {
    // bounded by addOrUnavailable; a job enqueued after its timeout finds no request and ends as a no-op
    const job = await mailboxCreate.enqueue(deps.queues, { request_id: requestId, secret_id: secretId });
    return { requestId, job };
  } catch (e) {
    await knex.transaction(async (trx) => {
      await trx('mail_sealed_secrets').where({ id: secretId }).del();
      await trx('mail_mailbox_requests').where({ id: requestId }).del();
    });
    deps.logger.error(
      { err: e instanceof Error ? e.message : String(e), request_id: requestId },
      'mailbox-create enqueue failed',
    );
    throw new MailApiError('queue_unavailable', undefined, { cause: e, headers: { 'Retry-After': '5' } });
  }
}

/**
 * Reads a request's outcome.
 * @param requestId mail_mailbox_requests.id
 * @param domainId when given, a request of another domain reads as absent
 * @returns the outcome, or null when there is no such request
 */
export async function requestOutcome(
  deps: MailDeps,
  requestId: number,
  domainId?: number,
): Promise<RequestOutcome | null> {
  const q = deps
    .knex('mail_mailbox_requests as r')
    .join('mail_domains as d', 'd.id', 'r.domain_id')
    .leftJoin('mail_mailboxes as m', 'm.id', 'r.mailbox_id')
    .where('r.id', requestId)
    .first(
      'r.id',
      'r.status',
      'r.error',
      'r.error_code',
      'r.local_part',
      'm.email',
      'd.name as domain',
      'd.imap_host',
      'd.imap_port',
      'd.smtp_host',
      'd.smtp_port',
    );
  if (domainId !== undefined) q.where('r.domain_id', domainId);
  const r = await q;
  if (!r) return null;
  const job_id = mailboxCreate.jobId(r.id);
  if (r.status === 'created') {
    const email = r.email ?? `${r.local_part}@${r.domain}`;
    return {
      status: 'created',
      job_id,
      data: {
        email,
        username: email,
        domain: r.domain,
        imap_host: r.imap_host,
        imap_port: r.imap_port,
        smtp_host: r.smtp_host,
        smtp_port: r.smtp_port,
      },
    };
  }
  if (r.status === 'failed') return { status: 'failed', job_id, error_code: r.error_code, error: r.error };
  return { status: 'pending', job_id };
}

/**
 * Waits for the job until it finishes or `ms` passed; the request row decides the outcome (a retry
 * after a transient failure keeps it pending; only the last attempt or a permanent failure ends it).
 */
export async function waitForOutcome(
  ctx: MailContext,
  job: Job,
  requestId: number,
  ms: number,
): Promise<RequestOutcome> {
  const deadline = Date.now() + ms;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    const started = Date.now();
    try {
      await ctx.mailRuntime.waitForJob(job, remaining);
    } catch {
      /* failed or timed out: the row decides */
    }
    const o = (await requestOutcome(ctx.deps, requestId))!;
    if (o.status !== 'pending') return o;
    if ((await job.getState()) === 'failed')
      return { status: 'failed', job_id: o.job_id, error_code: 'transient', error: null };
    if (Date.now() - started < 50) await new Promise((r) => setTimeout(r, 100));
  }
  return (await requestOutcome(ctx.deps, requestId))!;
}

/**
 * Writes the answer for an outcome: created -> `created` status (201 for the create, 200 for the
 * poll) with `{ok, data}`; pending -> 202 `{ok, status: "pending", job_id}`; failed -> the mapped error.
 * @throws MailApiError for a failed request: exists -> 409 mailbox_exists, no_panel -> 409
 *   panel_not_configured, anything else -> 502 mail_server_error with a safe message
 */
export function answerOutcome(ctx: MailContext, o: RequestOutcome, createdStatus: 200 | 201): void {
  if (o.status === 'created') {
    ctx.status = createdStatus;
    ctx.body = { ok: true, status: 'created', data: o.data };
  } else if (o.status === 'pending') {
    ctx.status = 202;
    ctx.body = { ok: true, status: 'pending', job_id: o.job_id };
  } else {
    const extra = { job_id: o.job_id };
    if (o.error_code === 'exists')
      throw new MailApiError('mailbox_exists', 'The mail panel reports that the mailbox already exists.', { extra });
    if (o.error_code === 'no_panel') throw new MailApiError('panel_not_configured', undefined, { extra });
    const why =
      o.error_code === 'auth'
        ? "the mail panel refused the service's credentials"
        : o.error_code === 'permanent'
          ? `the mail panel refused the request${o.error ? `: ${o.error}` : ''}`
          : o.error_code === 'secret_expired' || o.error_code === 'secret_unreadable'
            ? 'the request expired before the mail panel could be reached; send it again'
            : 'the mail panel could not be reached; try again later';
    throw new MailApiError('mail_server_error', `Creating the mailbox failed: ${why}.`, { extra });
  }
}
