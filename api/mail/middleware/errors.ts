import type { Next } from 'koa';
import { randomUUID } from 'node:crypto';
import { MailApiError, MAIL_ERRORS, type MailErrorCode } from '../errors.js';
import { MailAuthError, MailServerError, EmailNotFoundError } from '../../../jobs/adapters/mailbox-client/index.js';
import type { MailContext } from '../context.js';

/**
 * Request id, the one place that writes Mailbox API error bodies, and one log line per request
 * (DESIGN.md §4, document 3 "Errors"). Body: `{ok: false, error, message}`.
 * - MailApiError -> its status, code, message (+ errors, + extra fields, + headers);
 * - the mailbox client's MailAuthError -> 401 mailbox_auth_failed, MailServerError -> 502
 *   mail_server_error, EmailNotFoundError -> 404 email_not_found (fixed messages: the client's own
 *   message is never shown);
 * - koa-body errors: malformed JSON -> 422 invalid_request, too large -> 413 payload_too_large;
 * - an unmatched route -> 404 not_found, a wrong method -> 405 method_not_allowed;
 * - anything else -> 500 server_error with request_id, logged with its stack.
 * The log line holds request id, method, path, status, ms and key id: never a header, a query string
 * or a body. The error of a 5xx is logged with every secret of the request scrubbed from its
 * message and stack (ctx.state.secrets), on top of pino's redaction paths.
 */
export function mailErrorsAndLogging() {
  return async (ctx: MailContext, next: Next): Promise<void> => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = /^[A-Za-z0-9._-]{8,64}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.secrets = [];
    ctx.set('X-Request-Id', requestId);
    let err: unknown;
    try {
      await next();
      if (ctx.status === 404 && (ctx.body === undefined || ctx.body === null)) writeMailError(ctx, new MailApiError('not_found'));
      else if (ctx.status === 405 && (ctx.body === undefined || ctx.body === null || ctx.body === '' || typeof ctx.body === 'string')) writeMailError(ctx, new MailApiError('method_not_allowed'));
    } catch (e) {
      err = e;
      writeMailError(ctx, e);
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        request_id: requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10,
        key_id: ctx.state.key?.id ?? null,
      };
      if (ctx.status >= 500) ctx.deps.logger.error({ ...line, err: safeError(err, ctx.state.secrets) }, 'request failed');
      else ctx.deps.logger.info(line, 'request');
      ctx.state.mailboxPassword = undefined;
      ctx.state.secrets = [];
    }
  };
}

/** Maps any thrown value to its code (and keeps MailApiError details). */
function classify(e: unknown): MailApiError | MailErrorCode {
  if (e instanceof MailApiError) return e;
  if (e instanceof MailAuthError) return 'mailbox_auth_failed';
  if (e instanceof EmailNotFoundError) return 'email_not_found';
  if (e instanceof MailServerError) return 'mail_server_error';
  const http = e as { status?: unknown; expose?: unknown; type?: unknown };
  if (http?.expose && typeof http.status === 'number' && http.status < 500) {
    if (http.status === 413) return 'payload_too_large';
    if (http.status === 400 || http.status === 415 || http.status === 422) {
      return new MailApiError('invalid_request', 'The request body is not valid JSON.', { errors: { body: ['The request body is not valid JSON.'] } });
    }
  }
  return 'server_error';
}

/**
 * Writes the error body for any thrown value.
 * @param ctx the request
 * @param e what was thrown
 */
export function writeMailError(ctx: MailContext, e: unknown): void {
  const c = classify(e);
  const err = typeof c === 'string' ? new MailApiError(c) : c;
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  const body: Record<string, unknown> = { ok: false, error: err.error, message: err.message, ...err.extra };
  if (err.errors) body.errors = err.errors;
  if (err.error === 'server_error') body.request_id = ctx.state.requestId;
  if (err.error === 'mail_server_error' && !(e instanceof MailApiError)) body.message = MAIL_ERRORS.mail_server_error.message;
  ctx.body = body;
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
    if (!(x instanceof Error)) return scrub(typeof x === 'object' ? JSON.stringify(x) ?? '' : x);
    const o = x as Error & { code?: unknown; cause?: unknown };
    return {
      type: o.name, message: scrub(o.message), stack: scrub(o.stack ?? ''),
      ...(o.code !== undefined ? { code: scrub(o.code) } : {}),
      ...(o.cause !== undefined && depth < 3 ? { cause: walk(o.cause, depth + 1) } : {}),
    };
  };
  return walk(e, 0);
}
