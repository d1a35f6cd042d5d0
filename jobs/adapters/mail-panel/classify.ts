import type { PanelFailureKind } from './types.js';

/**
 * Pure classifiers that decide retry or give-up from a panel's answer (DESIGN.md §3: transient ->
 * retry with backoff, permanent -> UnrecoverableError keeping the cause, 429 -> rate limit). They
 * read HTTP statuses, panel error texts (cPanel UAPI `errors`, DirectAdmin `text`/`details`),
 * Node/undici/ssh2 error codes and HestiaCP exit codes. No I/O.
 */

const EXISTS = /already exists?|exists already|already in use|already taken/i;
const AUTH =
  /access denied|permission denied|unauthori[sz]ed|not authori[sz]ed|invalid (api )?token|token (is )?(invalid|expired)|login failed|authentication failed|incorrect (user(name)?|password)|not logged in|you do not have (the )?(permission|access|privilege)|does not belong to you/i;
const RATE = /too many requests|rate.?limit|slow down/i;
const TRANSIENT = /temporar(il)?y|try again|timed? ?out|service unavailable|is locked|server is busy|load average/i;

/**
 * Classifies a panel's error text (already extracted with panelErrorText).
 * @returns the kind the text points to, or null when it says nothing recognisable
 */
export function classifyPanelMessage(text: string): PanelFailureKind | null {
  if (EXISTS.test(text)) return 'exists';
  if (AUTH.test(text)) return 'auth';
  if (RATE.test(text)) return 'rate_limited';
  if (TRANSIENT.test(text)) return 'transient';
  return null;
}

/**
 * Extracts the human-readable error text of a panel answer: cPanel UAPI `{status, errors, ...}`
 * (also inside a WHM-style `{result: {...}}` wrapper), DirectAdmin `{error, text, details}` (JSON or
 * parsed urlencoded), or a plain string (HTML tags stripped). At most 500 characters.
 */
export function panelErrorText(body: unknown): string {
  const parts: string[] = [];
  const push = (v: unknown) => {
    if (typeof v === 'string' && v.trim() !== '') parts.push(v.trim());
    else if (Array.isArray(v)) v.forEach(push);
  };
  if (typeof body === 'string') push(body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' '));
  else if (body && typeof body === 'object') {
    const o = body as Record<string, unknown>;
    const inner =
      o.result && typeof o.result === 'object' && !Array.isArray(o.result) ? (o.result as Record<string, unknown>) : o;
    push(inner.errors);
    push(inner.text);
    push(inner.details);
    push(inner.message);
    if (typeof inner.error === 'string' && !/^(0|1|yes|no|true|false)$/i.test(inner.error)) push(inner.error);
  }
  const text = parts.join(' ');
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}

/**
 * Classifies a failed HTTP exchange with a panel. Pure.
 * @param status HTTP status (a 2xx when the panel reported the error inside the body)
 * @param body the parsed body (object) or the raw text
 * @returns 401/403 -> auth; 429 -> rate_limited; 409 -> exists; 408, 425 and 5xx (but 501, 505)
 *   -> transient; other statuses, including errors inside a 200 body, by the panel's text
 *   ("already exists" -> exists, "access denied" -> auth, "try again" -> transient, ...), else
 *   permanent
 */
export function classifyHttpFailure(status: number, body: unknown): PanelFailureKind {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (status === 409) return 'exists';
  if (status === 408 || status === 425) return 'transient';
  if (status >= 500 && status !== 501 && status !== 505) return 'transient';
  const kind = classifyPanelMessage(panelErrorText(body));
  if (status >= 400) return kind === 'exists' ? 'exists' : 'permanent';
  return kind ?? 'permanent';
}

const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EPIPE',
  'EAI_AGAIN',
  'ESOCKETTIMEDOUT',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
]);
const PERMANENT_CODES = new Set([
  'ENOTFOUND',
  'ENOENT',
  'EACCES',
  'EISDIR',
  'EPERM',
  'ERR_INVALID_URL',
  'UND_ERR_INVALID_ARG',
  'ERR_INVALID_ARG_VALUE',
  'ERR_INVALID_ARG_TYPE',
]);

/**
 * Classifies an error thrown by fetch (undici), node:net/tls or ssh2 before any panel answer. Pure.
 * Follows `cause` chains (fetch wraps the socket error in `TypeError: fetch failed`).
 * @returns ECONNREFUSED, ECONNRESET, ETIMEDOUT, EAI_AGAIN, undici timeouts, AbortSignal.timeout
 *   (TimeoutError), aborts and ssh2 handshake timeouts -> transient; TLS certificate and protocol
 *   errors (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, ERR_TLS_CERT_ALTNAME_INVALID,
 *   ERR_SSL_WRONG_VERSION_NUMBER, ...), ENOTFOUND (the name does not exist), unreadable key files
 *   and ssh2 handshake failures (host key refused, no common algorithm) -> permanent; ssh2
 *   authentication failures -> auth; anything unrecognised -> transient
 */
export function classifyNetworkError(err: unknown): PanelFailureKind {
  const seen = new Set<unknown>();
  let cur: unknown = err;
  for (let depth = 0; cur && typeof cur === 'object' && !seen.has(cur) && depth < 8; depth++) {
    seen.add(cur);
    const e = cur as { name?: unknown; code?: unknown; level?: unknown; cause?: unknown; errors?: unknown };
    if (e.level === 'client-authentication') return 'auth';
    if (e.level === 'client-timeout') return 'transient';
    if (e.level === 'handshake') return 'permanent';
    if (typeof e.code === 'string') {
      const code = e.code;
      if (TRANSIENT_CODES.has(code)) return 'transient';
      if (PERMANENT_CODES.has(code) || /CERT|^UNABLE_TO_|^ERR_TLS_|^ERR_SSL_|^ERR_OSSL_/.test(code)) return 'permanent';
    }
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'transient';
    cur = e.cause ?? (Array.isArray(e.errors) ? e.errors[0] : undefined);
  }
  return 'transient';
}

/**
 * Reads a Retry-After header. Pure.
 * @param value delta-seconds ("120") or an HTTP-date
 * @param now current time in ms since the epoch (for HTTP-dates)
 * @returns the wait in ms (0..86_400_000), or undefined when absent or unreadable
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  let ms: number;
  if (/^[0-9]+$/.test(v)) ms = Number(v) * 1000;
  else {
    const t = Date.parse(v);
    if (Number.isNaN(t)) return undefined;
    ms = t - now;
  }
  return Math.min(Math.max(ms, 0), 86_400_000);
}

/** HestiaCP's return codes (func/main.sh). */
export const HESTIA_EXIT = {
  OK: 0,
  E_ARGS: 1,
  E_INVALID: 2,
  E_NOTEXIST: 3,
  E_EXISTS: 4,
  E_SUSPENDED: 5,
  E_UNSUSPENDED: 6,
  E_INUSE: 7,
  E_LIMIT: 8,
  E_PASSWORD: 9,
  E_FORBIDEN: 10,
  E_DISABLED: 11,
  E_PARSING: 12,
  E_DISK: 13,
  E_LA: 14,
  E_CONNECT: 15,
  E_FTP: 16,
  E_DB: 17,
  E_RRD: 18,
  E_UPDATE: 19,
  E_RESTART: 20,
} as const;

/** Exit code of the adapter's own wrapper when the remote temp file cannot be written (EX_TEMPFAIL). */
export const WRAPPER_TEMPFAIL = 75;

/**
 * Classifies the exit of a failed HestiaCP `v-*` command. Pure.
 * @param code the remote exit code; null when the command ended by a signal or the connection dropped
 * @returns E_EXISTS (4) -> exists; E_DISK, E_LA (load too high), E_CONNECT, E_FTP, E_DB, E_RRD,
 *   E_UPDATE, E_RESTART, 75 (temp file) and null -> transient; E_ARGS, E_INVALID, E_NOTEXIST,
 *   E_SUSPENDED, E_INUSE, E_LIMIT (package full), E_PASSWORD, E_FORBIDEN, E_DISABLED, E_PARSING,
 *   126/127 (command missing) and anything else -> permanent
 */
export function classifyHestiaExit(code: number | null): PanelFailureKind {
  if (code === null) return 'transient';
  if (code === HESTIA_EXIT.E_EXISTS) return 'exists';
  if ((code >= HESTIA_EXIT.E_DISK && code <= HESTIA_EXIT.E_RESTART) || code === WRAPPER_TEMPFAIL) return 'transient';
  return 'permanent';
}

/**
 * Replaces every occurrence of each secret (raw, percent-encoded, form-encoded, JSON-escaped) with
 * `[redacted]`. Secrets shorter than 3 characters are left alone (they would blank out ordinary text).
 */
export function redactSecrets(text: string, secrets: ReadonlyArray<string | null | undefined>): string {
  let out = text;
  for (const s of secrets) {
    if (typeof s !== 'string' || s.length < 3) continue;
    const forms = new Set([
      s,
      encodeURIComponent(s),
      new URLSearchParams({ s }).toString().slice(2),
      JSON.stringify(s).slice(1, -1),
    ]);
    for (const f of [...forms].sort((a, b) => b.length - a.length)) out = out.split(f).join('[redacted]');
  }
  return out;
}
