import { parseRetryAfter } from '../mail-panel/classify.js';
import type { Classification, PermanentCode, ProviderOutcome } from './types.js';

/**
 * The classification shared by the seven adapters (issue 10 item 1). Each provider first reads its
 * own documented answers (`BodyReader`, refusals inside a 200 included); what it does not recognise
 * falls back to the HTTP status here. Pure.
 */

/** The wait of a rate-limit answer without a usable Retry-After, in ms (decision). */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;

/** A `response` outcome. */
export type ResponseOutcome = Extract<ProviderOutcome, { kind: 'response' }>;

/**
 * A provider's reading of a response body: a Classification when the body says what happened, or
 * null when it does not (then the status decides; a 2xx that says nothing is `ambiguous`).
 */
export type BodyReader = (res: ResponseOutcome) => Classification | null;

/** The Retry-After of a response in ms, or null when absent or unreadable. */
export function retryAfterMs(res: ResponseOutcome): number | null {
  return parseRetryAfter(res.retryAfter, res.receivedAt) ?? null;
}

/** A `permanent` classification. */
export function permanent(code: PermanentCode, detail: string): Classification {
  return { kind: 'permanent', code, detail };
}

/** A `rate_limited` classification waiting Retry-After (or the default). */
export function rateLimited(res: ResponseOutcome, detail: string): Classification {
  return { kind: 'rate_limited', retryAfterMs: retryAfterMs(res) ?? DEFAULT_RATE_LIMIT_WAIT_MS, detail };
}

/** Trims a provider's text for a detail (at most 300 characters, one line). */
export function shortText(text: unknown): string {
  const s =
    typeof text === 'string'
      ? text
          .replace(/<[^>]*>/g, ' ')
          .replace(/\s+/g, ' ')
          .trim()
      : '';
  return s.length > 300 ? `${s.slice(0, 297)}...` : s;
}

const CREDENTIAL = /token|(api|device|number)[ _-]?key|secret[ _-]?key|credential/i;
const AUTH = /unauthori[sz]ed|not authori[sz]ed|access denied|forbidden|invalid key|secret|session/i;
const RECIPIENT =
  /(phone|number|nomor|target|recipient|chat ?id|group|penerima).*(invalid|not (valid|registered|found|exist)|tidak (valid|terdaftar))|(invalid|unknown|wrong|not registered).*(phone|number|nomor|target|recipient|chat ?id|group)/i;
const DISCONNECTED =
  /disconnect|not connected|tidak terhubung|device (is )?(off|offline)|scan (the )?qr|not (logged|paired)|pairing/i;
const RATE = /too many|rate.?limit|slow down/i;

/**
 * Maps a provider's refusal text (a 2xx with a failure flag, or a 4xx body) to a classification.
 * Checked in this order: rate limits, credential words (token, API/device/number key), invalid
 * recipients, disconnected devices, other authorisation words; anything else is `provider_refused`
 * (quota, expiry, policy). A quota that is "exceeded" is not a rate limit: waiting would not help.
 */
export function refusal(res: ResponseOutcome, text: string): Classification {
  const detail = `${res.provider}: ${shortText(text) || `refused (HTTP ${res.status})`}`;
  if (RATE.test(text)) return rateLimited(res, detail);
  if (CREDENTIAL.test(text)) return permanent('auth_failed', detail);
  if (RECIPIENT.test(text)) return permanent('invalid_recipient', detail);
  if (DISCONNECTED.test(text)) return permanent('device_disconnected', detail);
  if (AUTH.test(text)) return permanent('auth_failed', detail);
  return permanent('provider_refused', detail);
}

/**
 * The status rules: 3xx permanent (unexpected_redirect); 401/403 permanent (auth_failed); 429
 * rate_limited; 408 ambiguous; other 4xx permanent (request_rejected, or what the body text says);
 * 503 retry (the provider is known not to have processed it); 501, 505 permanent; every other 5xx
 * (500, 502, 504, ...) ambiguous; a 2xx the provider's reader did not recognise ambiguous.
 */
export function classifyStatus(res: ResponseOutcome): Classification {
  const s = res.status;
  const text = shortText(res.text);
  const detail = `${res.provider}: HTTP ${s}${text ? `: ${text}` : ''}`;
  if (s >= 200 && s < 300) return { kind: 'ambiguous', detail: `${res.provider}: HTTP ${s} with an unreadable answer` };
  if (s >= 300 && s < 400)
    return permanent('unexpected_redirect', `${res.provider}: HTTP ${s} redirect; check the base URL`);
  if (s === 401 || s === 403) return permanent('auth_failed', detail);
  if (s === 429) return rateLimited(res, detail);
  if (s === 408) return { kind: 'ambiguous', detail };
  if (s === 503) return { kind: 'retry', retryAfterMs: retryAfterMs(res), detail };
  if (s === 501 || s === 505) return permanent('request_rejected', detail);
  if (s >= 500) return { kind: 'ambiguous', detail };
  if (s >= 400) {
    const byText = text ? refusal(res, text) : null;
    return byText && byText.kind === 'permanent' && byText.code !== 'provider_refused'
      ? byText
      : permanent('request_rejected', detail);
  }
  return { kind: 'ambiguous', detail };
}

/**
 * The whole classification of an outcome: `network` not written -> retry, written -> ambiguous;
 * `rejected` -> permanent with its code; `not_checked` -> sent (configuration complete);
 * `response` -> the provider's reader, else classifyStatus.
 */
export function classifyOutcome(outcome: ProviderOutcome, read: BodyReader): Classification {
  switch (outcome.kind) {
    case 'network':
      return outcome.written
        ? { kind: 'ambiguous', detail: outcome.detail }
        : { kind: 'retry', retryAfterMs: null, detail: outcome.detail };
    case 'rejected':
      return permanent(outcome.code, outcome.detail);
    case 'not_checked':
      return { kind: 'sent', messageId: null, state: 'sent', detail: outcome.detail };
    case 'response':
      if (outcome.status === 429) return rateLimited(outcome, `${outcome.provider}: HTTP 429`);
      return read(outcome) ?? classifyStatus(outcome);
  }
}

/** The first string or number found at one of the paths (e.g. ['data', 'messages', 0, 'id']). */
export function pick(value: unknown, ...paths: ReadonlyArray<string | number>[]): string | null {
  for (const path of paths) {
    let cur: unknown = value;
    for (const key of path) {
      if (cur && typeof cur === 'object') cur = (cur as Record<string | number, unknown>)[key];
      else {
        cur = undefined;
        break;
      }
    }
    if (typeof cur === 'string' && cur !== '') return cur;
    if (typeof cur === 'number' && Number.isFinite(cur)) return String(cur);
  }
  return null;
}

/** The object of a JSON body, or null. */
export function bodyObject(res: ResponseOutcome): Record<string, unknown> | null {
  return res.json && typeof res.json === 'object' && !Array.isArray(res.json)
    ? (res.json as Record<string, unknown>)
    : null;
}

/** Whether a flag of a provider body means yes (true, 'true', 1, '1', 'success'). */
export function truthy(v: unknown): boolean {
  return v === true || v === 1 || (typeof v === 'string' && /^(true|1|success|ok)$/i.test(v.trim()));
}

/** Whether a flag of a provider body means no (false, 'false', 0, '0', 'failed', 'error'). */
export function falsy(v: unknown): boolean {
  return v === false || v === 0 || (typeof v === 'string' && /^(false|0|fail(ed)?|error)$/i.test(v.trim()));
}
