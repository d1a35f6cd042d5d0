import { MAIL_ERRORS, MailApiError, type MailErrorCode } from '../errors.js';
import { applyError, requestLog } from '../../http/request-log.js';
import type { HttpError } from '../../http/error-table.js';
import type { Server } from 'node:http';
import { handleClientErrors } from '../../http/client-error.js';
import type { Logger } from '../../../lib/logger.js';
import type { MailContext } from '../context.js';

/** DESIGN §4 codes of the shared error table -> the Mailbox API's codes (document 3 "Errors"). */
const MAIL_CODE: Record<string, MailErrorCode> = {
  UNAUTHENTICATED: 'unauthorized',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not_found',
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  VALIDATION_FAILED: 'invalid_request',
  PAYLOAD_TOO_LARGE: 'payload_too_large',
  RATE_LIMITED: 'rate_limited',
  QUEUE_UNAVAILABLE: 'queue_unavailable',
  SERVER_ERROR: 'server_error',
  BAD_REQUEST: 'invalid_request',
  CONFLICT: 'invalid_request',
};

/**
 * Renders an HttpError as the Mailbox API's body (document 3 "Errors"): `{ok: false, error, message}`
 * (+ `errors` on invalid_request with field errors, + extra fields such as `job_id`, + `request_id`
 * on server_error). A code of the shared table is translated to the Mailbox API's code (MAIL_CODE);
 * its message is the Mailbox API's fixed text, except for MailApiError and field-error messages.
 * @param ctx the request
 * @param err the described error (api/http/error-table.ts)
 * @param thrown the original value (decides whether its own message may be shown)
 */
export function writeMailError(ctx: MailContext, err: HttpError, thrown: unknown): void {
  const code = (err.code in MAIL_ERRORS ? err.code : (MAIL_CODE[err.code] ?? 'server_error')) as MailErrorCode;
  const ownMessage = thrown instanceof MailApiError || (code === 'invalid_request' && err.errors);
  const body: Record<string, unknown> = {
    ok: false,
    error: code,
    message: ownMessage ? err.message : MAIL_ERRORS[code].message,
    ...err.extra,
  };
  if (err.errors) body.errors = err.errors;
  if (code === 'server_error') body.request_id = ctx.state.requestId;
  applyError(ctx, { ...err, status: MAIL_ERRORS[code].status }, body);
}

/**
 * The Mailbox API's request log (api/http/request-log.ts) with its error body. The log line holds
 * request id, method, path, status, ms and key id: never a header, a query string or a body. The
 * error of a 5xx is logged with every secret of the request scrubbed from its message and stack
 * (ctx.state.secrets), on top of pino's redaction paths; the request's secrets are dropped after.
 */
export function mailErrorsAndLogging() {
  return requestLog<MailContext>({
    writeError: writeMailError,
    logFields: (ctx) => ({ key_id: ctx.state.key?.id ?? null }),
    start: (ctx) => {
      ctx.state.secrets = [];
    },
    loggableError: (ctx, thrown) => safeError(thrown, ctx.state.secrets ?? []),
    finally: (ctx) => {
      ctx.state.mailboxPassword = undefined;
      ctx.state.secrets = [];
    },
  });
}

/**
 * The loggable form of an error: name, message, stack, code and the cause chain (depth 3), with
 * every secret of the request replaced by `[redacted]`.
 */
export function safeError(e: unknown, secrets: string[]): unknown {
  if (e === undefined || e === null) return undefined;
  const scrub = (s: unknown) => {
    let out = typeof s === 'string' ? s : String(s);
    for (const sec of secrets) if (sec && sec.length >= 3) out = out.split(sec).join('[redacted]');
    return out;
  };
  const walk = (x: unknown, depth: number): unknown => {
    if (!(x instanceof Error)) return scrub(typeof x === 'object' ? (JSON.stringify(x) ?? '') : x);
    const o = x as Error & { code?: unknown; cause?: unknown };
    return {
      type: o.name,
      message: scrub(o.message),
      stack: scrub(o.stack ?? ''),
      ...(o.code !== undefined ? { code: scrub(o.code) } : {}),
      ...(o.cause !== undefined && depth < 3 ? { cause: walk(o.cause, depth + 1) } : {}),
    };
  };
  return walk(e, 0);
}

/** Codes of Node's client errors (api/http/client-error.ts) -> the Mailbox API's codes. */
const CLIENT_ERROR_CODE: Record<string, MailErrorCode> = {
  BAD_REQUEST: 'bad_request',
  HEADERS_TOO_LARGE: 'headers_too_large',
  REQUEST_TIMEOUT: 'request_timeout',
  PAYLOAD_TOO_LARGE: 'payload_too_large',
};

/**
 * The Mailbox API's answer to Node's own rejections (api/http/client-error.ts), as
 * `{ok: false, error, message, request_id}` with Node's status (400 bad_request, 408
 * request_timeout, 413 payload_too_large, 431 headers_too_large). Call it where the server is
 * created (api/mail/server.ts).
 * @param logger optional: one line per answered client error
 */
export function handleMailClientErrors(server: Server, logger?: Logger): void {
  handleClientErrors(
    server,
    (e) => ({
      ok: false,
      error: CLIENT_ERROR_CODE[e.code] ?? 'bad_request',
      message: e.message,
      request_id: e.requestId,
    }),
    logger,
  );
}
