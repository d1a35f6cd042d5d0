import {
  bodyError,
  panelRequest,
  panelUrl,
  type HttpPanelDeps,
  type PanelHttpRequest,
  type PanelHttpResponse,
} from './http.js';
import { redactSecrets } from './classify.js';
import { assertValidAddress, assertValidCreateInput, quotaToMegabytes } from './validate.js';
import { PanelError, type CreateMailboxInput, type MailPanel, type MailPanelConfig } from './types.js';

/**
 * DirectAdmin adapter over the legacy API commands (`/CMD_API_*`), HTTP Basic auth with the
 * account password or a login key. Answers come as JSON when `json=yes` is sent, otherwise (older
 * versions) urlencoded: `error=1&text=...&details=...`, lists as `list[]=a&list[]=b`; both are read.
 * Errors come with HTTP 200 and `error=1`; a refused login comes as 401 or as a 200 login page
 * with the `X-DirectAdmin: unauthorized` header. Calls used:
 * - CMD_API_POP action=create (POST form: domain, user, passwd, passwd2, quota in MB, 0 = unlimited;
 *   null quota is sent as 0);
 * - CMD_API_POP action=list (GET) for existence;
 * - CMD_API_SHOW_DOMAINS (GET) as the cheap authenticated call of testConnection.
 */

type DaBody = Record<string, unknown> | unknown[];

/**
 * Parses a DirectAdmin answer: JSON when it is JSON, else urlencoded key=value pairs (`key[]`
 * repeated into an array under `key`). Pure.
 * @returns the parsed body; `{}` for an empty body; null when the body is neither (an HTML page)
 */
export function parseDirectAdminBody(text: string, json: unknown): DaBody | null {
  if (json !== undefined) return json && typeof json === 'object' ? (json as DaBody) : null;
  const t = text.trim();
  if (t === '') return {};
  if (t.startsWith('<') || !t.includes('=')) return null;
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(t)) {
    if (k.endsWith('[]')) {
      const key = k.slice(0, -2);
      const arr = Array.isArray(out[key]) ? (out[key] as unknown[]) : [];
      arr.push(v);
      out[key] = arr;
    } else out[k] = v;
  }
  return out;
}

/** Whether a parsed DirectAdmin body reports an error (`error` other than 0/false/empty). Pure. */
export function isDirectAdminError(body: DaBody): boolean {
  if (Array.isArray(body) || !('error' in body)) return false;
  const e = body.error;
  return !(e === 0 || e === false || e === null || e === '' || (typeof e === 'string' && /^(0|no|false)$/i.test(e)));
}

/**
 * The list of a list answer: a JSON array, `{list: [...]}`, an object keyed 0..n, or the
 * urlencoded `list[]` values. Pure.
 */
export function directAdminList(body: DaBody): string[] {
  let raw: unknown[] = [];
  if (Array.isArray(body)) raw = body;
  else if (Array.isArray(body.list)) raw = body.list;
  else if (Object.keys(body).length > 0 && Object.keys(body).every((k) => /^[0-9]+$/.test(k)))
    raw = Object.values(body);
  return raw.filter((v): v is string => typeof v === 'string');
}

/** The form of CMD_API_POP action=create for a validated input (exported for encoding tests). */
export function directAdminCreateForm(input: CreateMailboxInput): URLSearchParams {
  const form = new URLSearchParams();
  form.set('action', 'create');
  form.set('domain', input.domain);
  form.set('user', input.local_part);
  form.set('passwd', input.password);
  form.set('passwd2', input.password);
  form.set('quota', String(quotaToMegabytes(input.quota) ?? 0));
  return form;
}

/**
 * Creates the DirectAdmin adapter. `cfg` was validated by createMailPanel.
 * @param deps fetch and the per-request timeout
 */
export function createDirectAdminPanel(cfg: MailPanelConfig, deps: HttpPanelDeps): MailPanel {
  const authorization = `Basic ${Buffer.from(`${cfg.user}:${cfg.password ?? ''}`, 'utf8').toString('base64')}`;

  function notApi(req: PanelHttpRequest, res: PanelHttpResponse): PanelError {
    const refused = /unauthori[sz]ed/i.test(res.headers.get('x-directadmin') ?? '') || /login/i.test(res.text);
    const msg = refused
      ? `directadmin ${req.what}: the panel refused the login (it answered with a login page)`
      : `directadmin ${req.what}: the panel did not answer with API data (HTTP ${res.status})`;
    return new PanelError(refused ? 'auth' : 'permanent', redactSecrets(msg, req.secrets), {
      status: res.status,
      panel: 'directadmin',
    });
  }

  async function call(
    command: string,
    method: 'GET' | 'POST',
    params: URLSearchParams,
    signal: AbortSignal | undefined,
    secrets: string[] = [],
  ): Promise<DaBody> {
    const path = `/${command}`;
    const req: PanelHttpRequest = {
      panel: 'directadmin',
      what: command + (params.get('action') ? ` action=${params.get('action')}` : ''),
      method,
      url: panelUrl(cfg, path, method === 'GET' ? { ...Object.fromEntries(params), json: 'yes' } : { json: 'yes' }),
      headers: { authorization },
      signal,
      secrets: [cfg.password, ...secrets],
      ...(method === 'POST' ? { form: params } : {}),
    };
    const res = await panelRequest(deps, req);
    if (/unauthori[sz]ed/i.test(res.headers.get('x-directadmin') ?? '')) throw notApi(req, res);
    const body = parseDirectAdminBody(res.text, res.json);
    if (body === null) throw notApi(req, res);
    if (isDirectAdminError(body)) throw bodyError(req, res, body, 'error=1 without a text');
    return body;
  }

  return {
    async createMailbox(input, signal) {
      const valid = assertValidCreateInput(input, 'directadmin');
      await call('CMD_API_POP', 'POST', directAdminCreateForm(valid), signal, [input.password]);
    },

    async mailboxExists(domain, localPart, signal) {
      const a = assertValidAddress(domain, localPart, 'directadmin');
      const body = await call('CMD_API_POP', 'GET', new URLSearchParams({ action: 'list', domain: a.domain }), signal);
      return directAdminList(body).some((u) => u.toLowerCase() === a.local_part);
    },

    async testConnection(signal) {
      await call('CMD_API_SHOW_DOMAINS', 'GET', new URLSearchParams(), signal);
    },
  };
}
