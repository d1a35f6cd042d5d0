/**
 * Errors of the Mailbox API (document 3 "Errors" plus the codes decided in docs/mailbox-api.md) and
 * the one code -> status table. The body is always `{ok: false, error: "<code>", message}`
 * (+ `errors` on invalid_request with field errors, + `request_id` on server_error, + `job_id` where
 * stated). Messages are fixed texts or built from safe values; never a password, a key or SQL.
 */

import { AppError, type AppErrorOptions, type FieldErrors } from '../errors.js';

export type { FieldErrors };

/** Every error code the service answers, with its HTTP status and default message. */
export const MAIL_ERRORS = {
  // document 3's table
  unauthorized: { status: 401, message: 'The bearer token (API key) is missing or wrong.' },
  mailbox_auth_failed: { status: 401, message: 'The mail server refused the mailbox address or password.' },
  forbidden: { status: 403, message: 'The API key lacks the scope this endpoint needs.' },
  mailbox_not_allowed: { status: 403, message: 'The API key may not access this mailbox.' },
  mailbox_not_found: { status: 404, message: 'The mailbox is not registered in the service.' },
  invalid_request: { status: 422, message: 'The request is incomplete or invalid.' },
  mailbox_password_required: {
    status: 422,
    message: 'Send the mailbox password in the X-Mailbox-Password header or the mailbox_password body field.',
  },
  mail_server_error: { status: 502, message: 'The mail server could not be reached or refused the request.' },
  // decided by us (docs/mailbox-api.md)
  bad_request: {
    status: 400,
    message: 'The request is not valid HTTP/1.1 (for example a duplicated Content-Length).',
  },
  domain_not_allowed: { status: 403, message: 'The API key may not create mailboxes in this domain.' },
  domain_not_found: { status: 404, message: 'The domain is not registered in the service.' },
  email_not_found: { status: 404, message: 'No e-mail with this id in the mailbox.' },
  request_not_found: { status: 404, message: 'No mailbox creation request with this job id.' },
  not_found: { status: 404, message: 'Route not found.' },
  method_not_allowed: { status: 405, message: 'Method not allowed on this route.' },
  mailbox_exists: { status: 409, message: 'The mailbox already exists.' },
  panel_not_configured: {
    status: 409,
    message: 'The domain has no mail panel configured; an operator must add one before mailboxes can be created.',
  },
  request_timeout: { status: 408, message: 'The request was not received completely in time.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  headers_too_large: { status: 431, message: 'The request line and headers are larger than 16 KB.' },
  rate_limited: { status: 429, message: 'Too many requests for this API key. Retry later.' },
  server_error: {
    status: 500,
    message: 'Server error. Contact the administrator with this request id and the request time.',
  },
  queue_unavailable: { status: 503, message: 'The job queue is unavailable. Retry later.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type MailErrorCode = keyof typeof MAIL_ERRORS;

/**
 * An error of the Mailbox API's own vocabulary: an AppError (api/errors.ts) whose code is a key of
 * MAIL_ERRORS, which decides the status. Routes and services throw it; the error table and the
 * service's writer (api/mail/middleware/errors.ts) render it.
 */
export class MailApiError extends AppError {
  /**
   * @param code one of MAIL_ERRORS (decides the status)
   * @param message safe message (default: the table's)
   */
  constructor(code: MailErrorCode, message?: string, opts: AppErrorOptions = {}) {
    super(MAIL_ERRORS[code].status, code, message ?? MAIL_ERRORS[code].message, opts);
  }

  /** The Mailbox API error code (the body's `error`). */
  get error(): MailErrorCode {
    return this.code as MailErrorCode;
  }
}

/** 422 invalid_request with field errors; the message is the first reason. */
export function invalidRequest(errors: FieldErrors): MailApiError {
  const first = Object.values(errors)[0]?.[0];
  return new MailApiError('invalid_request', first ?? MAIL_ERRORS.invalid_request.message, { errors });
}
