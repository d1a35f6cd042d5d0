import { bodyObject, falsy, shortText, type ResponseOutcome } from './classify.js';
import type { ProviderOutcome } from './types.js';

/**
 * How the chat bot's read and setup calls (issue 11 items 3 and 6: wablas's realtime report and
 * device info, webhook registration) read an outcome of the shared HTTP exchange (http.ts). Unlike
 * a send, these calls change nothing a repeat could double, so every failure that may pass is
 * `transient`: no connection, a timeout or reset, 408, 429, any 5xx. 3xx, 401/403, other 4xx,
 * a refusal inside a 2xx (`status: false`) and an unreadable 2xx are not. Pure.
 */

/** A readable JSON object, or why there is none. */
export type ReadResult =
  { ok: true; body: Record<string, unknown>; status: number } | { ok: false; transient: boolean; error: string };

/** The message of a provider's body (`message` when it is a string), or its text trimmed. */
function messageOf(res: ResponseOutcome): string {
  const body = bodyObject(res);
  const m = body && typeof body.message === 'string' ? body.message : null;
  return shortText(m ?? res.text);
}

/**
 * Reads an outcome of a read-only or idempotent call.
 * @param label what was called, for the error text (`wablas report`)
 * @returns the JSON object of a 2xx that does not refuse, or the error with `transient`
 */
export function readResult(outcome: ProviderOutcome, label: string): ReadResult {
  if (outcome.kind === 'network') return { ok: false, transient: true, error: `${label}: ${outcome.detail}` };
  if (outcome.kind === 'rejected') return { ok: false, transient: false, error: outcome.detail };
  if (outcome.kind === 'not_checked') return { ok: false, transient: false, error: outcome.detail };
  const s = outcome.status;
  const text = messageOf(outcome);
  const said = text ? `: ${text}` : '';
  if (s === 408 || s === 429 || s >= 500) return { ok: false, transient: true, error: `${label}: HTTP ${s}${said}` };
  if (s === 401 || s === 403)
    return { ok: false, transient: false, error: `${label}: credentials refused (HTTP ${s})${said}` };
  if (s < 200 || s >= 300) return { ok: false, transient: false, error: `${label}: HTTP ${s}${said}` };
  const body = bodyObject(outcome);
  if (!body) return { ok: false, transient: false, error: `${label}: unreadable answer (HTTP ${s})` };
  if (falsy(body.status) || body.success === false)
    return { ok: false, transient: false, error: `${label}: refused${said}` };
  return { ok: true, body, status: s };
}
