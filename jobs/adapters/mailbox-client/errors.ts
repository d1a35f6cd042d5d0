/**
 * Failure kinds of the mailbox client (issue 3, document 3 "Errors") and the pure classifiers that
 * map imapflow / nodemailer errors onto them. Messages are safe to show: they never carry the
 * mailbox password (it is stripped defensively from any server text that is quoted), and no raw
 * library error is kept as `cause` (imapflow errors hold the executed command).
 */

/** Wrong mailbox address or password (IMAP AUTHENTICATIONFAILED, SMTP 535) -> 401 mailbox_auth_failed. */
export class MailAuthError extends Error {
  override name = 'MailAuthError';
  constructor(readonly protocol: 'imap' | 'smtp', message = `${protocol.toUpperCase()} login failed: mailbox address or password wrong`) { super(message); }
}

/**
 * IMAP or SMTP connection failed, timed out, was aborted, or the server refused (document 3:
 * mail_server_error, 502). `code` is a short machine code (ECONNREFUSED, ETIMEOUT, SMTP_554, ABORTED, ...).
 */
export class MailServerError extends Error {
  override name = 'MailServerError';
  constructor(readonly protocol: 'imap' | 'smtp', readonly code: string, message: string) { super(message); }
}

/** No message with that UID in INBOX -> 404 email_not_found. */
export class EmailNotFoundError extends Error {
  override name = 'EmailNotFoundError';
  constructor(readonly uid: string) { super(`No e-mail with id ${uid} in this mailbox`); }
}

/**
 * Makes a server text safe to quote: every occurrence of the secret (plain, URI-encoded and
 * base64) becomes `[redacted]`, line breaks become spaces, and the result is cut at `max` characters.
 */
export function scrubSecret(text: string, secret: string | undefined, max = 300): string {
  let out = String(text ?? '');
  if (secret) {
    for (const form of new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')])) {
      if (form) out = out.split(form).join('[redacted]');
    }
  }
  out = out.replace(/[\r\n]+/g, ' ').trim();
  return out.length > max ? `${out.slice(0, max)}...` : out;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ETIMEDOUT']);

interface LibError { code?: string; authenticationFailed?: boolean; serverResponseCode?: string; responseText?: string; responseCode?: number; response?: unknown; command?: string; message?: string }

/**
 * Classifies an imapflow failure. Authentication failures (authenticationFailed flag or the
 * AUTHENTICATIONFAILED response code) -> MailAuthError; everything else -> MailServerError.
 * @param password the mailbox password, stripped from any quoted server text
 */
export function classifyImapError(err: unknown, password?: string): MailAuthError | MailServerError | EmailNotFoundError {
  if (err instanceof MailAuthError || err instanceof MailServerError || err instanceof EmailNotFoundError) return err;
  const e = (err ?? {}) as LibError;
  if (e.authenticationFailed || e.serverResponseCode === 'AUTHENTICATIONFAILED') return new MailAuthError('imap');
  const code = String(e.code ?? e.serverResponseCode ?? 'IMAP_ERROR');
  if (NETWORK_CODES.has(code)) return new MailServerError('imap', code, `IMAP connection failed (${code})`);
  if (/TIMEOUT/i.test(code)) return new MailServerError('imap', code, `IMAP server did not answer in time (${code})`);
  if (code === 'NoConnection' || code === 'EConnectionClosed' || code === 'ClosedAfterConnectText' || code === 'ClosedAfterConnectTLS') {
    return new MailServerError('imap', code, 'IMAP connection closed by the server');
  }
  if (e.responseText) return new MailServerError('imap', code, `IMAP server refused the command: ${scrubSecret(e.responseText, password)}`);
  return new MailServerError('imap', code, `IMAP error (${scrubSecret(code, password, 60)})`);
}

/**
 * Classifies a nodemailer SMTP failure: EAUTH or reply 535 -> MailAuthError; connection,
 * timeout and every other refusal (4xx/5xx) -> MailServerError with code `SMTP_<reply>` or the
 * socket code.
 */
export function classifySmtpError(err: unknown, password?: string): MailAuthError | MailServerError {
  if (err instanceof MailAuthError || err instanceof MailServerError) return err;
  const e = (err ?? {}) as LibError;
  if (e.responseCode === 535 || (e.code === 'EAUTH' && (e.responseCode === undefined || e.responseCode === 535 || e.responseCode === 534))) return new MailAuthError('smtp');
  if (typeof e.responseCode === 'number') {
    const said = typeof e.response === 'string' ? scrubSecret(e.response, password) : String(e.responseCode);
    return new MailServerError('smtp', `SMTP_${e.responseCode}`, `SMTP server refused (${e.command ?? 'command'}): ${said}`);
  }
  const code = String(e.code ?? 'SMTP_ERROR');
  if (code === 'ECONNECTION' || code === 'ESOCKET' || NETWORK_CODES.has(code)) return new MailServerError('smtp', code, `SMTP connection failed (${code})`);
  if (code === 'ETIMEDOUT' || /TIMEOUT/i.test(code)) return new MailServerError('smtp', code, 'SMTP server did not answer in time');
  return new MailServerError('smtp', code, `SMTP error (${scrubSecret(code, password, 60)})`);
}

/** The error thrown when the caller's AbortSignal fires. */
export function abortedError(protocol: 'imap' | 'smtp'): MailServerError {
  return new MailServerError(protocol, 'ABORTED', `${protocol.toUpperCase()} operation aborted`);
}
