import { UnrecoverableError, type Job, type Queue } from 'bullmq';
import type { Knex } from 'knex';
import { tenantScopeOf } from '../db/tenant-routing.js';
import { open } from '../lib/crypto.js';
import { PanelError } from './adapters/mail-panel/types.js';
import { jobClock, jobDeps } from './deps.js';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS } from './queues.js';
import { resolveRuntime, type ResolvedRuntime } from './provisioning/runtime.js';
import { isRetryable } from './provisioning/steps.js';

/**
 * Job `customer-mailbox` (issue 13 item 9): creates a customer's mailbox at the mail panel with the
 * generated password sealed on its customer_mailboxes row, then sets customers.email. A mailbox the
 * panel already has is `existed` (its password is not ours: the sealed one is dropped). Retries only
 * network errors, 5xx and 429 (5 attempts); the data is the row id and
 * its tenant (issue 15).
 */
export const QUEUE = 'customer-mailbox' as const;

/** Job data: the customer_mailboxes row (never a password). */
export interface CustomerMailboxData {
  mailbox_id: number;
  /**
   * The row's tenant (issue 15 item 4: its database after its cutover); absent in jobs enqueued before
   * it: taken from the shared row the job names.
   */
  tenant_id?: number;
}

/** The job's answer: what happened at the panel. */
export interface CustomerMailboxResult {
  status: 'created' | 'existed';
  address: string;
}

/** The sealing context of a customer mailbox's initial password. */
export const customerMailboxAad = (tenantId: number, address: string) =>
  `customer_mailboxes:${tenantId}:${address.toLowerCase()}`;

/**
 * Creates the mailbox of a customer_mailboxes row (idempotent: a done row answers its status).
 * @param appKey opens the sealed initial password
 * @param attempt this attempt (1-based) and the job's attempts, for the retry decision
 * @throws Error to retry; UnrecoverableError when it gives up (the row is then `failed`)
 */
export async function createCustomerMailbox(
  knex: Knex,
  rt: ResolvedRuntime,
  appKey: Buffer,
  id: number,
  attempt: { n: number; of: number },
  now: Date,
): Promise<CustomerMailboxResult> {
  const row = await knex('customer_mailboxes').where({ id }).first();
  if (!row) throw new UnrecoverableError(`customer mailbox ${id} not found`);
  if (row.status === 'created' || row.status === 'existed') return { status: row.status, address: row.address };
  const [local, domain] = String(row.address).split('@');
  try {
    const creds = await rt.source.load();
    if (!creds.mailPanel) throw new UnrecoverableError('The mail panel credentials are not saved.');
    const panel = rt.panel(creds.mailPanel);
    let status: CustomerMailboxResult['status'] = 'created';
    if (await panel.mailboxExists(domain, local)) status = 'existed';
    else
      try {
        await panel.createMailbox({
          domain,
          local_part: local,
          password: open(appKey, row.password_enc, customerMailboxAad(row.tenant_id, row.address)),
          quota: row.quota_mb === 0 ? null : `${row.quota_mb}M`,
        });
      } catch (err) {
        if (!(err instanceof PanelError && err.kind === 'exists')) throw err;
        status = 'existed';
      }
    await knex.transaction(async (trx) => {
      await trx('customer_mailboxes')
        .where({ id })
        .update({ status, error: null, updated_at: now, ...(status === 'existed' ? { password_enc: null } : {}) });
      await trx('customers')
        .where({ id: row.customer_id, tenant_id: row.tenant_id })
        .update({ email: row.address, updated_at: now });
    });
    return { status, address: row.address };
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 500);
    if (!(err instanceof UnrecoverableError) && isRetryable(err) && attempt.n < attempt.of)
      throw new Error(message, { cause: err });
    await knex('customer_mailboxes')
      .where({ id })
      .update({ status: 'failed', error: message, password_enc: null, updated_at: now });
    throw new UnrecoverableError(message);
  }
}

/**
 * BullMQ processor of `customer-mailbox`: works on the row in its tenant's database (the tenant's
 * db_mode, issue 15 item 4). A job enqueued before jobs carried `tenant_id` takes the tenant from
 * the shared row it names (a row made before the cutover keeps its id and tenant in the copy).
 * @throws UnrecoverableError (no retry) when such a job names no shared row: its tenant is unknown
 */
export async function process(job: Job<CustomerMailboxData>): Promise<CustomerMailboxResult> {
  const deps = jobDeps();
  if (!deps.appKey) throw new UnrecoverableError('customer-mailbox needs the APP_KEY');
  const rt = resolveRuntime(deps.knex, deps.appKey, deps.provisioning);
  const attempt = { n: job.attemptsMade + 1, of: job.opts.attempts ?? 1 };
  const tenantId = await tenantOfJob(deps.knex, job.data);
  const knex = (await tenantScopeOf(deps.knex, tenantId, deps.appKey, 'job')).knex as Knex;
  return createCustomerMailbox(knex, rt, deps.appKey, job.data.mailbox_id, attempt, jobClock().now());
}

/** The job's tenant: its data's tenant_id, else the tenant of the shared row it names (older jobs). */
async function tenantOfJob(shared: Knex, data: CustomerMailboxData): Promise<number> {
  const given = Number(data.tenant_id);
  if (Number.isSafeInteger(given) && given > 0) return given;
  const row = (await shared('customer_mailboxes').where({ id: data.mailbox_id }).first('tenant_id')) as
    { tenant_id: number } | undefined;
  if (!row)
    throw new UnrecoverableError(
      `customer mailbox ${data.mailbox_id}: the job carries no tenant_id and the shared database has no such ` +
        'row (a cut-over tenant’s row?); create the e-mail account again',
    );
  return Number(row.tenant_id);
}

/**
 * Enqueues the job (fixed id `cmb-{id}`: one per row).
 * @param tenantId the row's tenant: the job then works in its database after its cutover (issue 15)
 * @throws QueueUnavailableError (503) when Redis cannot take it
 */
export function enqueueCustomerMailbox(queue: Queue, id: number, tenantId: number) {
  return addOrUnavailable<CustomerMailboxData>(
    queue,
    'customer-mailbox',
    { mailbox_id: id, tenant_id: tenantId },
    { ...DEFAULT_JOB_OPTIONS, jobId: `cmb-${id}`, attempts: 5 },
  );
}
