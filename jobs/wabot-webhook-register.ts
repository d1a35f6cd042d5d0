import type { Queue } from 'bullmq';
import type { Knex } from 'knex';
import { tenantScopeOf } from '../db/tenant-routing.js';
import { UnrecoverableError } from 'bullmq';
import { addOrUnavailable, DEFAULT_JOB_OPTIONS, safeJobId, type JobLike } from './queues.js';
import { jobClock, jobDeps } from './deps.js';
import { loadChatSendConfig } from './wabot/load-config.js';
import { storeWebhookState } from './wabot/account-states.js';
import { registerWebhook, type RegisterResult } from './adapters/chat-providers/webhook-register.js';
import { openWabotSetting } from '../db/wabot-secrets.js';

/**
 * Job `wabot-webhook-register` (issue 11 item 6, `settings.webhook_auto_register`): registers one
 * account's inbound webhook URL at its provider (jobs/adapters/chat-providers/webhook-register.ts)
 * and stores the result per account (`registered`, `unsupported`, `failed` + error, at) in
 * wabot_account_states, shown by GET /api/wabot/config. Data: {tenant_id, account_id,
 * public_base_url}; the URL's key is opened from the sealed webhook secret here, never carried in
 * job data. Transient failures (network, 408, 429, 5xx) are stored as `failed` "(retrying)" and
 * thrown, so BullMQ retries them (5 attempts, exponential backoff from 5 s); others end the job.
 * Tenants in demo mode are never registered (the config route enqueues nothing for them, and the
 * processor checks again).
 */
export const QUEUE = 'wabot-webhook-register' as const;
export const REGISTER_JOB = 'wabot-webhook-register';

/** Job data: ids and the public base URL, never the key. */
export interface RegisterData {
  tenant_id: number;
  account_id: string;
  public_base_url: string;
}

/** What the job returns. */
export type RegisterJobResult = RegisterResult | { status: 'skipped'; reason: string };

/** 5 attempts, 5 s, 10 s, 20 s, 40 s apart. */
export const REGISTER_JOB_OPTIONS = {
  ...DEFAULT_JOB_OPTIONS,
  attempts: 5,
  backoff: { type: 'exponential', delay: 5000 },
};

/**
 * Adds the registration of one account; the job id names the save (`at`), so a repeated save adds
 * a new registration while a retried enqueue of the same save does not.
 * @param at the save's time (ms since the epoch)
 * @throws QueueUnavailableError when Redis does not take it in time
 */
export async function addRegisterJob(queue: Queue, data: RegisterData, at: number, timeoutMs?: number): Promise<void> {
  await addOrUnavailable(
    queue,
    REGISTER_JOB,
    data,
    { ...REGISTER_JOB_OPTIONS, jobId: safeJobId(REGISTER_JOB, data.tenant_id, data.account_id, at) },
    timeoutMs,
  );
}

/** The inbound URL of an account (api/wabot/service.ts webhookUrl + `&account=`). */
export function accountWebhookUrl(publicBaseUrl: string, slug: string, secret: string, accountId: string): string {
  const root = publicBaseUrl.replace(/\/+$/, '');
  return `${root}/api/wabot/inbound/${encodeURIComponent(slug)}?key=${encodeURIComponent(secret)}&account=${encodeURIComponent(accountId)}`;
}

/**
 * BullMQ processor (see the file comment).
 * @throws Error for a transient provider failure (BullMQ retries); UnrecoverableError for bad data
 */
export async function process(
  job: JobLike<RegisterData>,
  _token?: string,
  signal?: AbortSignal,
): Promise<RegisterJobResult> {
  const d = jobDeps();
  const { tenant_id: tenantId, account_id: accountId, public_base_url: base } = job.data ?? ({} as RegisterData);
  if (!Number.isSafeInteger(tenantId) || !accountId || !base)
    throw new UnrecoverableError('wabot-webhook-register: bad job data');
  const tenant = await d.knex('tenants').where({ id: tenantId }).first('slug', 'demo_mode');
  // the wabot tables in the tenant's database after its cutover (issue 15 item 4)
  const tk = (await tenantScopeOf(d.knex, tenantId, d.appKey, 'job')).knex as Knex;
  const setting = await tk('wabot_settings')
    .where({ tenant_id: tenantId })
    .first('webhook_secret_enc', 'webhook_auto_register');
  const skip = async (reason: string) => {
    await job.log(`skipped: ${reason}`);
    return { status: 'skipped' as const, reason };
  };
  if (!tenant || !setting) return skip('no such tenant or configuration');
  if (tenant.demo_mode) return skip('demo tenant');
  if (!setting.webhook_auto_register) return skip('webhook_auto_register is off');
  const config = d.chatConfig ? await d.chatConfig(tenantId) : await loadChatSendConfig(d.knex, d.appKey, tenantId);
  const account = config?.accounts.find((a) => a.id === accountId && a.enabled);
  if (!account) return skip('account removed or disabled');
  if (!d.appKey) throw new UnrecoverableError('wabot-webhook-register: the worker has no APP_KEY');
  const secret = openWabotSetting(d.appKey, 'webhook_secret', tenantId, setting.webhook_secret_enc);
  const url = accountWebhookUrl(base, tenant.slug, secret, accountId);
  const r = await registerWebhook(account, url, {
    signal,
    timeoutMs: d.chatSend?.timeoutMs,
    rootOverride: d.chatSend?.rootOverride,
    clock: jobClock(),
  });
  const now = jobClock().now();
  if (r.status === 'failed' && r.transient) {
    await storeWebhookState(tk, tenantId, accountId, 'failed', `${r.error} (retrying)`, now);
    await job.log(`transient failure, retrying: ${r.error}`);
    throw new Error(`wabot-webhook-register: ${r.error}`);
  }
  await storeWebhookState(tk, tenantId, accountId, r.status, r.error, now);
  await job.log(`${account.provider} ${accountId}: ${r.status}${r.error ? ` (${r.error})` : ''}`);
  return r;
}
