import { endpoint, present, resolveRoot } from './define.js';
import { exchange, type ExchangeRequest } from './http.js';
import { readResult, type ReadResult } from './read-result.js';
import { getChatProvider } from './index.js';
import type { CallOptions, ChatAccount, ProviderName } from './types.js';

/**
 * Registers the tenant's inbound webhook URL at a provider (issue 11 item 6,
 * `settings.webhook_auto_register`), where the provider documents an API for it:
 * - wablas: "Change Device Webhook URL" `POST {base}/api/device/change-webhook-url` (form
 *   `webhook_url`) and "Change Device Tracking URL" `POST {base}/api/device/change-tracking-url`
 *   (form `tracking_url`, the delivery reports), `Authorization: token.secret_key`; answer
 *   `{status: true, message: 'webhook url successfully changed'}` (wablas.com/documentation/api).
 * - waha: session webhooks (waha.devlike.pro/docs/how-to/webhooks "Session webhooks": `config.webhooks
 *   [{url, events}]`; "Sessions": `GET /api/sessions/{session}`, update `PUT /api/sessions/{session}`
 *   with `{name, config}`): the session's config is read, our URL replaces any earlier webhook on
 *   the same inbound path, with events `message` and `message.ack`; other webhooks and settings are kept.
 * - watzap: "Set Web Hook" `POST https://api.watzap.id/v1/set_webhook` JSON `{api_key, number_key,
 *   endpoint_url}` -> `{status: "200", message: "Sucessfully set Web Hook to url: ...", ack:
 *   "successfully"}` (the WatZap API documentation).
 * - fonnte, ruangwa, messenger, starsender: no registration API in the material we had
 *   (Messenger's callback URL is an app setting, not a page one): `unsupported`.
 * The URL carries the webhook key: it is redacted from every answer and error like a token.
 */

/** The result of one registration. */
export interface RegisterResult {
  status: 'registered' | 'unsupported' | 'failed';
  /** why it failed (never a secret), null otherwise */
  error: string | null;
  /** a failure that may pass (network, 408, 429, 5xx): the job retries it */
  transient: boolean;
}

/** Providers with a registration API. */
export const REGISTERING_PROVIDERS: readonly ProviderName[] = ['wablas', 'waha', 'watzap'];

const ok = (): RegisterResult => ({ status: 'registered', error: null, transient: false });
const failed = (r: Extract<ReadResult, { ok: false }>): RegisterResult => ({
  status: 'failed',
  error: r.error,
  transient: r.transient,
});

function root(account: ChatAccount, opts: CallOptions): { root: string } | { error: string } {
  if (opts.rootOverride) return { root: opts.rootOverride.replace(/\/+$/, '') };
  return resolveRoot(getChatProvider(account.provider), account);
}

/**
 * Registers `webhookUrl` at the account's provider.
 * @param webhookUrl the account's inbound URL (webhook_url + `&account=<id>`)
 * @returns registered, unsupported, or failed with the error and whether it may pass
 */
export async function registerWebhook(
  account: ChatAccount,
  webhookUrl: string,
  opts: CallOptions = {},
): Promise<RegisterResult> {
  if (!REGISTERING_PROVIDERS.includes(account.provider))
    return { status: 'unsupported', error: null, transient: false };
  const r = root(account, opts);
  if ('error' in r) return { status: 'failed', error: `${account.provider}: ${r.error}`, transient: false };
  const key = new URL(webhookUrl).searchParams.get('key');
  const secrets = [account.token, account.secret_key, key, encodeURIComponent(webhookUrl), webhookUrl];
  const call = async (req: Omit<ExchangeRequest, 'call' | 'provider' | 'secrets'>, label: string) =>
    readResult(await exchange({ ...req, call: 'check', provider: account.provider, secrets }, opts), label);

  if (account.provider === 'wablas') {
    if (!present(account.token))
      return { status: 'failed', error: 'wablas: the account has no device token', transient: false };
    const authorization = present(account.secret_key) ? `${account.token}.${account.secret_key}` : account.token;
    for (const [path, field] of [
      ['/api/device/change-webhook-url', 'webhook_url'],
      ['/api/device/change-tracking-url', 'tracking_url'],
    ] as const) {
      const res = await call(
        {
          method: 'POST',
          url: endpoint(r.root, path),
          headers: { authorization },
          form: new URLSearchParams({ [field]: webhookUrl }),
        },
        `wablas ${field}`,
      );
      if (!res.ok) return failed(res);
    }
    return ok();
  }

  if (account.provider === 'watzap') {
    if (!present(account.token) || !present(account.secret_key))
      return { status: 'failed', error: 'watzap: api_key and number_key are required', transient: false };
    const res = await call(
      {
        method: 'POST',
        url: endpoint(r.root, '/set_webhook'),
        headers: {},
        json: { api_key: account.token, number_key: account.secret_key, endpoint_url: webhookUrl },
      },
      'watzap set_webhook',
    );
    if (!res.ok) return failed(res);
    const code = String(res.body.status ?? '');
    if (code && code !== '200')
      return { status: 'failed', error: `watzap set_webhook: code ${code}`, transient: false };
    return ok();
  }

  // waha
  const session = present(account.secret_key) ? account.secret_key.trim() : 'default';
  const headers: Record<string, string> = present(account.token) ? { 'x-api-key': account.token } : {};
  const url = endpoint(r.root, `/api/sessions/${encodeURIComponent(session)}`);
  const current = await call({ method: 'GET', url, headers }, 'waha session');
  if (!current.ok) return failed(current);
  const config = (current.body.config && typeof current.body.config === 'object' ? current.body.config : {}) as Record<
    string,
    unknown
  >;
  const ours = webhookUrl.split('?')[0];
  const kept = (Array.isArray(config.webhooks) ? config.webhooks : []).filter(
    (w) => !(w && typeof w === 'object' && String((w as { url?: unknown }).url ?? '').split('?')[0] === ours),
  );
  const update = await call(
    {
      method: 'PUT',
      url,
      headers,
      json: {
        name: session,
        config: { ...config, webhooks: [...kept, { url: webhookUrl, events: ['message', 'message.ack'] }] },
      },
    },
    'waha session update',
  );
  return update.ok ? ok() : failed(update);
}
