/**
 * Failure kinds of the mailbox client (issue 3, document 3 "Errors") and the pure classifiers that
 * map imapflow / nodemailer errors onto them. Messages are safe to show: they never carry the
 * mailbox password (it is stripped defensively from any server text that is quoted), and no raw
 * library error is kept as `cause` (imapflow errors hold the executed command).
 */

/** Wrong mailbox address or password (IMAP AUTHENTICATIONFAILED, SMTP 535) -> 401 mailbox_auth_failed. */
export class MailAuthError extends Error {
  override name = 'MailAuthError';
  constructor(
    readonly protocol: 'imap' | 'smtp' | 'pop3',
    message = `${protocol.toUpperCase()} login failed: mailbox address or password wrong`,
  ) {
    super(message);
  }
}

/**
 * IMAP or SMTP connection failed, timed out, was aborted, or the server refused (document 3:
 * mail_server_error, 502). `code` is a short machine code (ECONNREFUSED, ETIMEOUT, SMTP_554, ABORTED, ...).
 */
export class MailServerError extends Error {
  override name = 'MailServerError';
  constructor(
    readonly protocol: 'imap' | 'smtp' | 'pop3',
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** No message with that UID in INBOX -> 404 email_not_found. */
export class EmailNotFoundError extends Error {
  override name = 'EmailNotFoundError';
  constructor(readonly uid: string) {
    super(`No e-mail with id ${uid} in this mailbox`);
  }
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

/** Why a server certificate was refused; the key of {@link TLS_CERT_REASONS}. */
type CertProblem = 'untrusted' | 'hostname' | 'expired' | 'not_yet_valid' | 'invalid';

/** Short machine code and safe text per certificate problem (the text ends the error message). */
const TLS_CERT_REASONS: Record<CertProblem, { code: string; text: string }> = {
  untrusted: { code: 'TLS_CERT_UNTRUSTED', text: 'not issued by a trusted certificate authority' },
  hostname: { code: 'TLS_CERT_HOSTNAME', text: 'issued for another host name' },
  expired: { code: 'TLS_CERT_EXPIRED', text: 'expired' },
  not_yet_valid: { code: 'TLS_CERT_NOT_YET_VALID', text: 'not valid yet' },
  invalid: { code: 'TLS_CERT_INVALID', text: 'invalid' },
};

/** Node's (OpenSSL's) certificate verification error codes -> problem. */
const CERT_CODES = new Map<string, CertProblem>([
  ...[
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'CERT_UNTRUSTED',
    'CERT_REJECTED',
    'INVALID_CA',
  ].map((c) => [c, 'untrusted'] as const),
  ['ERR_TLS_CERT_ALTNAME_INVALID', 'hostname'],
  ['HOSTNAME_MISMATCH', 'hostname'],
  ['CERT_HAS_EXPIRED', 'expired'],
  ['CERT_NOT_YET_VALID', 'not_yet_valid'],
  ...[
    'CERT_SIGNATURE_FAILURE',
    'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
    'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
    'ERROR_IN_CERT_NOT_BEFORE_FIELD',
    'ERROR_IN_CERT_NOT_AFTER_FIELD',
    'CERT_CHAIN_TOO_LONG',
    'CERT_REVOKED',
    'PATH_LENGTH_EXCEEDED',
    'INVALID_PURPOSE',
  ].map((c) => [c, 'invalid'] as const),
]);

/**
 * The same problems recognised by Node's message texts: nodemailer re-wraps a failed STARTTLS
 * handshake as `Error initiating TLS - <Node's message>` and drops the code.
 */
const CERT_MESSAGES: [RegExp, CertProblem][] = [
  [/Hostname\/IP does not match certificate|altnames/i, 'hostname'],
  [/certificate has expired/i, 'expired'],
  [/certificate is not yet valid/i, 'not_yet_valid'],
  [/self[- ]signed certificate|unable to (verify the first|get (local )?issuer) certificate/i, 'untrusted'],
  [/certificate (is not trusted|rejected)|invalid CA certificate/i, 'untrusted'],
  [/certificate/i, 'invalid'],
];

/**
 * Recognises TLS failures of either library: a refused server certificate (any of the Node codes
 * above, also as nodemailer's `originalCode` or only in the message), the server not offering
 * STARTTLS when it is required, and other handshake failures (protocol mismatch, connection
 * closed during the handshake).
 * @returns the MailServerError (code TLS_CERT_*, STARTTLS_UNAVAILABLE or TLS_HANDSHAKE), or null when
 *   the error is not a TLS failure
 */
export function classifyTlsError(err: unknown, protocol: 'imap' | 'smtp' | 'pop3'): MailServerError | null {
  const e = (err ?? {}) as LibError & { originalCode?: string; tlsFailed?: boolean };
  const name = protocol.toUpperCase();
  const code = String(e.code ?? '');
  const message = String(e.message ?? '');
  // message texts count only for errors of the TLS layer (never for a server's reply text)
  const tlsContext = e.tlsFailed === true || code === 'ETLS' || code === 'ESOCKET' || /^(ERR_SSL_|ERR_TLS_)/.test(code);
  const problem =
    CERT_CODES.get(code) ??
    CERT_CODES.get(String(e.originalCode ?? '')) ??
    (tlsContext ? CERT_MESSAGES.find(([re]) => re.test(message))?.[1] : undefined);
  if (problem) {
    const r = TLS_CERT_REASONS[problem];
    const text = `TLS certificate of the mail server could not be verified (${name}: ${r.text})`;
    return new MailServerError(protocol, r.code, text);
  }
  const noStarttls =
    (e.tlsFailed === true && /does not support STARTTLS/i.test(message)) ||
    (code === 'ETLS' && e.command === 'STARTTLS' && typeof e.responseCode === 'number') ||
    /does not support required STARTTLS/i.test(message);
  if (noStarttls) {
    return new MailServerError(
      protocol,
      'STARTTLS_UNAVAILABLE',
      `The ${name} server does not offer STARTTLS, which this mailbox requires; nothing was sent without TLS`,
    );
  }
  if (/TIMEOUT/i.test(code)) return null;
  const tlsCode = /^(ERR_SSL_|ERR_TLS_)/.test(code) || /^(ERR_SSL_|ERR_TLS_)/.test(String(e.originalCode ?? ''));
  if (e.tlsFailed === true || code === 'ETLS' || tlsCode) {
    return new MailServerError(protocol, 'TLS_HANDSHAKE', `TLS handshake with the ${name} server failed`);
  }
  return null;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
]);

interface LibError {
  code?: string;
  authenticationFailed?: boolean;
  serverResponseCode?: string;
  responseText?: string;
  responseCode?: number;
  response?: unknown;
  command?: string;
  message?: string;
}

/**
 * Classifies an imapflow failure. TLS failures first ({@link classifyTlsError}: never an
 * authentication error); authentication failures (authenticationFailed flag or the
 * AUTHENTICATIONFAILED response code) -> MailAuthError; everything else -> MailServerError.
 * @param password the mailbox password, stripped from any quoted server text
 */
export function classifyImapError(
  err: unknown,
  password?: string,
): MailAuthError | MailServerError | EmailNotFoundError {
  if (err instanceof MailAuthError || err instanceof MailServerError || err instanceof EmailNotFoundError) return err;
  const tlsError = classifyTlsError(err, 'imap');
  if (tlsError) return tlsError;
  const e = (err ?? {}) as LibError;
  if (e.authenticationFailed || e.serverResponseCode === 'AUTHENTICATIONFAILED') return new MailAuthError('imap');
  const code = String(e.code ?? e.serverResponseCode ?? 'IMAP_ERROR');
  if (NETWORK_CODES.has(code)) return new MailServerError('imap', code, `IMAP connection failed (${code})`);
  if (/TIMEOUT/i.test(code)) return new MailServerError('imap', code, `IMAP server did not answer in time (${code})`);
  if (
    code === 'NoConnection' ||
    code === 'EConnectionClosed' ||
    code === 'ClosedAfterConnectText' ||
    code === 'ClosedAfterConnectTLS'
  ) {
    return new MailServerError('imap', code, 'IMAP connection closed by the server');
  }
  if (e.responseText)
    return new MailServerError(
      'imap',
      code,
      `IMAP server refused the command: ${scrubSecret(e.responseText, password)}`,
    );
  return new MailServerError('imap', code, `IMAP error (${scrubSecret(code, password, 60)})`);
}

/**
 * Classifies a nodemailer SMTP failure: TLS failures first ({@link classifyTlsError}); EAUTH or
 * reply 535 -> MailAuthError; connection,
 * timeout and every other refusal (4xx/5xx) -> MailServerError with code `SMTP_<reply>` or the
 * socket code.
 */
export function classifySmtpError(err: unknown, password?: string): MailAuthError | MailServerError {
  if (err instanceof MailAuthError || err instanceof MailServerError) return err;
  const tlsError = classifyTlsError(err, 'smtp');
  if (tlsError) return tlsError;
  const e = (err ?? {}) as LibError;
  if (
    e.responseCode === 535 ||
    (e.code === 'EAUTH' && (e.responseCode === undefined || e.responseCode === 535 || e.responseCode === 534))
  )
    return new MailAuthError('smtp');
  if (typeof e.responseCode === 'number') {
    const said = typeof e.response === 'string' ? scrubSecret(e.response, password) : String(e.responseCode);
    return new MailServerError(
      'smtp',
      `SMTP_${e.responseCode}`,
      `SMTP server refused (${e.command ?? 'command'}): ${said}`,
    );
  }
  const code = String(e.code ?? 'SMTP_ERROR');
  if (code === 'ECONNECTION' || code === 'ESOCKET' || NETWORK_CODES.has(code))
    return new MailServerError('smtp', code, `SMTP connection failed (${code})`);
  if (code === 'ETIMEDOUT' || /TIMEOUT/i.test(code))
    return new MailServerError('smtp', code, 'SMTP server did not answer in time');
  return new MailServerError('smtp', code, `SMTP error (${scrubSecret(code, password, 60)})`);
}

/** The error thrown when the caller's AbortSignal fires. */
export function abortedError(protocol: 'imap' | 'smtp'): MailServerError {
  return new MailServerError(protocol, 'ABORTED', `${protocol.toUpperCase()} operation aborted`);
}
