import { bodyError, panelRequest, panelUrl, type HttpPanelDeps, type PanelHttpRequest } from './http.js';
import { assertValidAddress, assertValidCreateInput, quotaToMegabytes } from './validate.js';
import type { CreateMailboxInput, MailPanel, MailPanelConfig } from './types.js';

/**
 * cPanel adapter over UAPI (`/execute/<Module>/<function>`), authenticated with an API token:
 * `Authorization: cpanel <user>:<token>` (the token is MailPanelConfig.password). UAPI answers
 * `{status: 1|0, errors: [...]|null, messages, warnings, data, metadata}`, usually with HTTP 200
 * even when the call failed, so the body's `status` decides. Calls used:
 * - Email/add_pop (POST form: email, domain, password, quota in MB; quota omitted = the account's
 *   default; 0 = unlimited) to create;
 * - Email/list_pops (GET, regex = the escaped exact address) to test existence, compared exactly
 *   on our side;
 * - Email/count_pops (GET) as the cheap authenticated call of testConnection.
 */

interface UapiBody {
  status: number | string;
  errors?: unknown;
  data?: unknown;
}

/** The UAPI result object, also when a proxy wraps it as `{result: {...}}` (WHM-style). */
export function unwrapUapi(json: unknown): UapiBody | null {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return null;
  // `status` of any type: the caller reads it with Number(), so 1 and '1' both mean success
  if ('status' in json) return json as UapiBody;
  if ('result' in json && json.result && typeof json.result === 'object' && 'status' in json.result) {
    return json.result as UapiBody;
  }
  return null;
}

/** Perl `quotemeta`: every character but [A-Za-z0-9_] backslash-escaped, for the list_pops regex. */
export function perlQuoteMeta(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, '\\$&');
}

/**
 * The form of Email/add_pop for a validated input. Exported so that tests can check the encoding
 * of hostile values independently of validation.
 */
export function cpanelAddPopForm(input: CreateMailboxInput): URLSearchParams {
  const form = new URLSearchParams();
  form.set('email', input.local_part);
  form.set('domain', input.domain);
  form.set('password', input.password);
  const mb = quotaToMegabytes(input.quota);
  if (mb !== null) form.set('quota', String(mb));
  return form;
}

/**
 * Creates the cPanel adapter. `cfg` was validated by createMailPanel.
 * @param deps fetch and the per-request timeout
 */
export function createCpanelPanel(cfg: MailPanelConfig, deps: HttpPanelDeps): MailPanel {
  const authorization = `cpanel ${cfg.user}:${cfg.password ?? ''}`;

  async function uapi(
    fn: string,
    method: 'GET' | 'POST',
    params: URLSearchParams,
    signal: AbortSignal | undefined,
    secrets: string[] = [],
  ): Promise<UapiBody> {
    const path = `/execute/Email/${fn}`;
    const req: PanelHttpRequest = {
      panel: 'cpanel',
      what: `Email/${fn}`,
      method,
      url: method === 'GET' ? panelUrl(cfg, path, Object.fromEntries(params)) : panelUrl(cfg, path),
      headers: { authorization },
      signal,
      secrets: [cfg.password, ...secrets],
      ...(method === 'POST' ? { form: params } : {}),
    };
    const res = await panelRequest(deps, req);
    const body = unwrapUapi(res.json);
    if (!body) throw bodyError(req, res, res.text, 'the panel did not answer with UAPI JSON');
    if (Number(body.status) !== 1) throw bodyError(req, res, body, 'UAPI status 0 without an error text');
    return body;
  }

  return {
    async createMailbox(input, signal) {
      const valid = assertValidCreateInput(input, 'cpanel');
      await uapi('add_pop', 'POST', cpanelAddPopForm(valid), signal, [input.password]);
    },

    async mailboxExists(domain, localPart, signal) {
      const a = assertValidAddress(domain, localPart, 'cpanel');
      const address = `${a.local_part}@${a.domain}`;
      const body = await uapi(
        'list_pops',
        'GET',
        new URLSearchParams({ regex: `^${perlQuoteMeta(address)}$` }),
        signal,
      );
      const list = Array.isArray(body.data) ? body.data : [];
      return list.some(
        (item) =>
          item &&
          typeof item === 'object' &&
          typeof (item as { email?: unknown }).email === 'string' &&
          (item as { email: string }).email.toLowerCase() === address,
      );
    },

    async testConnection(signal) {
      await uapi('count_pops', 'GET', new URLSearchParams(), signal);
    },
  };
}
