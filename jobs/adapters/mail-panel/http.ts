import { isIP } from 'node:net';
import {
  classifyHttpFailure,
  classifyNetworkError,
  panelErrorText,
  parseRetryAfter,
  redactSecrets,
} from './classify.js';
import { PanelError, type MailPanelConfig, type PanelType } from './types.js';

/**
 * The HTTP exchange shared by the cPanel and DirectAdmin adapters: global fetch (undici) with a
 * per-request timeout combined with the caller's AbortSignal, no redirects followed, failures turned
 * into PanelErrors whose messages carry no secret.
 */

/** What an HTTP adapter needs from createMailPanel. */
export interface HttpPanelDeps {
  fetch: typeof fetch;
  /** per request, in ms */
  timeoutMs: number;
}

/** One request to a panel. Parameters always travel as URLSearchParams (never concatenated). */
export interface PanelHttpRequest {
  panel: PanelType;
  /** short name of the call for messages, e.g. 'Email/add_pop' */
  what: string;
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  /** POST: sent as application/x-www-form-urlencoded */
  form?: URLSearchParams;
  signal?: AbortSignal;
  /** values that must never appear in an error message (passwords, tokens) */
  secrets: ReadonlyArray<string | null | undefined>;
}

/** A 2xx answer, body read. */
export interface PanelHttpResponse {
  status: number;
  headers: Headers;
  text: string;
  /** the body parsed as JSON, or undefined when it is not JSON */
  json: unknown;
}

/** Base URL of an HTTP panel (`https://host:port`); the host was validated by createMailPanel. */
export function panelBaseUrl(cfg: MailPanelConfig): URL {
  const host = isIP(cfg.host) === 6 ? `[${cfg.host}]` : cfg.host;
  return new URL(`${cfg.ssl ? 'https' : 'http'}://${host}:${cfg.port}/`);
}

/** A URL on the panel with the given path and query (URLSearchParams-encoded). */
export function panelUrl(cfg: MailPanelConfig, path: string, query?: Record<string, string>): URL {
  const u = new URL(path, panelBaseUrl(cfg));
  if (query) u.search = new URLSearchParams(query).toString();
  return u;
}

function describeNetworkError(err: unknown, timeoutMs: number): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let i = 0; cur && typeof cur === 'object' && i < 5; i++) {
    const e = cur as { name?: string; code?: string; message?: string; cause?: unknown };
    if (e.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`;
    if (e.name === 'AbortError') return 'aborted';
    parts.push(e.code ? `${e.code}` : String(e.message ?? e.name ?? 'error'));
    cur = e.cause;
  }
  return parts.join(': ') || String(err);
}

function parseJson(text: string): unknown {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

/**
 * Sends the request and returns a 2xx answer.
 * @throws PanelError: network failures and timeouts by classifyNetworkError; non-2xx answers by
 *   classifyHttpFailure (with `status`, and `retryAfterMs` from Retry-After on 429/503);
 *   redirects -> permanent (the panel URL or scheme is wrong, or the panel sent a login page)
 */
export async function panelRequest(deps: HttpPanelDeps, req: PanelHttpRequest): Promise<PanelHttpResponse> {
  const label = `${req.panel} ${req.what}`;
  if (req.signal?.aborted)
    throw new PanelError('transient', `${label}: aborted`, { cause: req.signal.reason, panel: req.panel });
  const signals = [AbortSignal.timeout(deps.timeoutMs)];
  if (req.signal) signals.push(req.signal);
  const signal = AbortSignal.any(signals);
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
  if (req.form) headers['content-type'] = 'application/x-www-form-urlencoded';
  let res: Response;
  let text: string;
  try {
    res = await deps.fetch(req.url, {
      method: req.method,
      headers,
      body: req.form?.toString(),
      redirect: 'manual',
      signal,
    });
    text = await res.text();
  } catch (err) {
    if (req.signal?.aborted) throw new PanelError('transient', `${label}: aborted`, { cause: err, panel: req.panel });
    const msg = redactSecrets(`${label}: ${describeNetworkError(err, deps.timeoutMs)}`, req.secrets);
    throw new PanelError(classifyNetworkError(err), msg, { cause: err, panel: req.panel });
  }
  const json = parseJson(text);
  if (res.status >= 300 && res.status < 400) {
    throw new PanelError(
      'permanent',
      `${label}: the panel answered with a redirect (HTTP ${res.status}); check the scheme, host and port`,
      { status: res.status, panel: req.panel },
    );
  }
  if (res.status < 200 || res.status >= 300) {
    const kind = classifyHttpFailure(res.status, json ?? text);
    const detail = panelErrorText(json ?? text);
    const retryAfterMs =
      kind === 'rate_limited' || res.status === 503 ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
    const msg = redactSecrets(`${label} failed: HTTP ${res.status}${detail ? `: ${detail}` : ''}`, req.secrets);
    throw new PanelError(kind, msg, {
      status: res.status,
      panel: req.panel,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * Builds the PanelError for an error the panel reported inside a 2xx body.
 * @param fallback message used when the body carries no readable text
 */
export function bodyError(
  req: Pick<PanelHttpRequest, 'panel' | 'what' | 'secrets'>,
  res: PanelHttpResponse,
  body: unknown,
  fallback: string,
): PanelError {
  const detail = panelErrorText(body) || fallback;
  const msg = redactSecrets(`${req.panel} ${req.what} failed: ${detail}`, req.secrets);
  return new PanelError(classifyHttpFailure(res.status, body), msg, { status: res.status, panel: req.panel });
}
