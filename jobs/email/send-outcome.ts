import { MailAuthError, MailServerError } from '../adapters/mailbox-client/index.js';

/**
 * What a failed SMTP submission of a reply means for its row (issue 9 item 5 "Bad input and
 * failure"); pure, so the rules are testable without a server.
 */

/** The decision for one failed submission. */
export type SendFailure =
  /** The server refused for good (5xx reply, 535 login, TLS refusal): `failed`, not retried. */
  | { kind: 'refused'; code: string; message: string }
  /** Known not sent (no connection, DNS, TLS handshake, 4xx reply, cut before the body): retried. */
  | { kind: 'retry'; code: string; message: string }
  /** The body went out and no final reply came: `failed` with `delivery_unknown`, never resent. */
  | { kind: 'unknown'; code: 'delivery_unknown'; message: string };

/** The SMTP reply code of a classified refusal (`SMTP_554` -> 554), or null without a reply. */
export function replyCode(e: unknown): number | null {
  const m = e instanceof MailServerError ? /^SMTP_(\d{3})$/.exec(e.code) : null;
  return m ? Number(m[1]) : null;
}

/**
 * Classifies a failure of submitTracked.
 * - MailAuthError (535) -> refused `auth_failed`;
 * - a server reply 5xx -> refused `smtp_<code>` with the reply; 4xx -> retry (the server said "not
 *   now": nothing was accepted, whatever the phase);
 * - no reply, body started -> unknown (`delivery_unknown`): the server may have accepted it;
 * - no reply, body not started: a refused certificate or a missing STARTTLS -> refused `tls_failed`
 *   (a setting to fix, not a passing fault); everything else (DNS, refused or dropped connection,
 *   timeout, TLS handshake, abort) -> retry.
 * @param e what submitTracked threw (already a MailAuthError or MailServerError with a safe message)
 * @param bodyStarted SubmitProgress.bodyStarted after the call
 */
export function classifySendFailure(e: unknown, bodyStarted: boolean): SendFailure {
  const message = e instanceof Error ? e.message : String(e);
  if (e instanceof MailAuthError) return { kind: 'refused', code: 'auth_failed', message };
  const reply = replyCode(e);
  if (reply !== null && reply >= 500) return { kind: 'refused', code: `smtp_${reply}`, message };
  if (reply !== null) return { kind: 'retry', code: `smtp_${reply}`, message };
  if (bodyStarted)
    return {
      kind: 'unknown',
      code: 'delivery_unknown',
      message: `The connection was lost after the message was handed to the server, before its answer (${message}); it may have been delivered, so it is not sent again.`,
    };
  const code = e instanceof MailServerError ? e.code : 'SMTP_ERROR';
  if (/^TLS_CERT_|^STARTTLS_UNAVAILABLE$/.test(code)) return { kind: 'refused', code: 'tls_failed', message };
  return { kind: 'retry', code: code.toLowerCase(), message };
}
