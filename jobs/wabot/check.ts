import { UnrecoverableError } from 'bullmq';
import { jobDeps } from '../deps.js';
import type { JobLike } from '../queues.js';
import { getChatProvider, type Classification, type ProviderName } from '../adapters/chat-providers/index.js';
import type { SendAccount } from './send-config.js';
export { CHECK_JOB } from './send-queue.js';

/**
 * The connection check of `POST /api/wabot/test` without a message (issue 10 item 4): job
 * `wabot-check` on the `wabot-send` queue. For each account asked for it makes the provider's
 * cheapest authenticated read-only call (the adapters' checkConnection: no message is sent) and
 * answers one entry per account. The job carries the tenant and account ids only; the worker opens
 * the secrets through JobDeps.chatConfig and the adapters redact them from every detail. The
 * request waits for the job (bounded) and answers its return value.
 */

/** Job data of a check: ids only. */
export interface WabotCheckData {
  tenant_id: number;
  /** the accounts to check, in configuration order (1..20) */
  account_ids: string[];
}

/** The result of one account's check. */
export interface AccountCheck {
  account_id: string;
  provider: ProviderName | null;
  label: string;
  enabled: boolean;
  /** the provider accepted the credentials (or, `verified` false, the configuration is complete) */
  ok: boolean;
  /** false when the provider documents no read-only call (ruangwa): the key was not verified */
  verified: boolean;
  /**
   * null when ok; else `unreachable` (known not to have reached it: DNS, refused, TLS, 503),
   * `rate_limited`, `provider_error` (500, 502, 504, timeout, unreadable answer), `account_unavailable`
   * (removed meanwhile) or the adapters' permanent codes (`auth_failed`, `device_disconnected`,
   * `invalid_config`, ...)
   */
  code: string | null;
  /** a short text without secrets */
  detail: string;
}

/** What a check returns (bull-board shows it; the request answers `results`). */
export interface WabotCheckResult {
  kind: 'check';
  results: AccountCheck[];
}

/** Deadline of one provider call of a check, in ms (under the request's 15 s wait). */
export const CHECK_TIMEOUT_MS = 10_000;

/** The entry of one classification (pure). */
export function checkEntry(account: SendAccount, c: Classification, verified: boolean): AccountCheck {
  const base = {
    account_id: account.id,
    provider: account.provider,
    label: account.label,
    enabled: account.enabled,
    verified,
  };
  switch (c.kind) {
    case 'sent':
      return { ...base, ok: true, code: null, detail: c.detail };
    case 'retry':
      return { ...base, ok: false, code: 'unreachable', detail: c.detail };
    case 'rate_limited':
      return { ...base, ok: false, code: 'rate_limited', detail: c.detail };
    case 'permanent':
      return { ...base, ok: false, code: c.code, detail: c.detail };
    case 'ambiguous':
      return { ...base, ok: false, code: 'provider_error', detail: c.detail };
  }
}

/**
 * Runs a connection check (see the file comment); the accounts are checked in parallel.
 * @throws UnrecoverableError for data without a tenant or accounts, or a worker without chatConfig
 */
export async function checkAccounts(job: JobLike<WabotCheckData>, signal?: AbortSignal): Promise<WabotCheckResult> {
  const deps = jobDeps();
  const d = job.data ?? ({} as WabotCheckData);
  if (!d.tenant_id || !Array.isArray(d.account_ids) || !d.account_ids.length)
    throw new UnrecoverableError('wabot-check: a check needs tenant_id and account_ids');
  if (!deps.chatConfig) throw new UnrecoverableError('wabot-check: the worker has no chat configuration source');
  const config = await deps.chatConfig(d.tenant_id);
  const opts = deps.chatSend ?? {};
  const results = await Promise.all(
    d.account_ids.map(async (id): Promise<AccountCheck> => {
      const account = config?.accounts.find((a) => a.id === id);
      if (!account)
        return {
          account_id: id,
          provider: null,
          label: '',
          enabled: false,
          ok: false,
          verified: false,
          code: 'account_unavailable',
          detail: 'The account is no longer configured.',
        };
      const provider = getChatProvider(account.provider);
      const outcome = await provider.checkConnection(account, {
        signal,
        timeoutMs: Math.min(opts.timeoutMs ?? CHECK_TIMEOUT_MS, CHECK_TIMEOUT_MS),
        callingCode: config?.callingCode,
        rootOverride: opts.rootOverride,
      });
      return checkEntry(account, provider.classify(outcome), outcome.kind !== 'not_checked');
    }),
  );
  const ok = results.filter((r) => r.ok).length;
  await job.log(`checked ${results.length} account(s): ${ok} ok`);
  return { kind: 'check', results };
}
