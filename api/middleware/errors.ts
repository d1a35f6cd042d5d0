import type { Next } from 'koa';
import { randomUUID } from 'node:crypto';
import { AppError, ValidationFailed } from '../errors.js';
import type { AppContext } from '../context.js';

/** PostgreSQL error codes mapped to client errors (never shown raw). */
const PG_MAP: Record<string, { status: number; code: string; message: string }> = {
  '23505': { status: 409, code: 'CONFLICT', message: 'A record with the same unique value already exists.' },
  '23503': { status: 422, code: 'VALIDATION_FAILED', message: 'A referenced record does not exist.' },
  '23502': { status: 422, code: 'VALIDATION_FAILED', message: 'A required value is missing.' },
  '23514': { status: 422, code: 'VALIDATION_FAILED', message: 'A value is not allowed.' },
  '22P02': { status: 422, code: 'VALIDATION_FAILED', message: 'A value has the wrong format.' },
  '22001': { status: 422, code: 'VALIDATION_FAILED', message: 'A value is too long.' },
  '22003': { status: 422, code: 'VALIDATION_FAILED', message: 'A number is out of range.' },
  '22007': { status: 422, code: 'VALIDATION_FAILED', message: 'A date or time has the wrong format.' },
  '22008': { status: 422, code: 'VALIDATION_FAILED', message: 'A date or time is out of range.' },
};

/**
 * Request id, the one place that writes error bodies, and one log line per request
 * (DESIGN.md §4). AppError -> its status and `{message, code, errors?}`; PostgreSQL constraint
 * errors -> 409/422; anything else -> 500 SERVER_ERROR with the request id, logged with its stack,
 * never shown to the client. Unmatched routes answer 404 NOT_FOUND and a known path with another
 * method 405 METHOD_NOT_ALLOWED (with Allow), both as JSON.
 * The request id is the caller's X-Request-Id when it is 8-64 characters of [A-Za-z0-9._-], else a
 * new UUID; it is sent back in X-Request-Id and is in the log line.
 * @returns the Koa middleware (mounted first by createApp)
 */
export function errorsAndLogging() {
  return async (ctx: AppContext, next: Next): Promise<void> => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = /^[A-Za-z0-9._-]{8,64}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    let err: unknown;
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { message: 'Route not found.', code: 'NOT_FOUND' };
      } else if (ctx.status === 405 && ctx.body === undefined) {
        // the router's allowedMethods() set the status and the Allow header; the body is JSON like every error
        ctx.body = { message: `Method ${ctx.method} is not allowed here; use ${ctx.response.get('Allow') || 'another method'}.`, code: 'METHOD_NOT_ALLOWED' };
      }
    } catch (e) {
      err = e;
      writeError(ctx, e);
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        request_id: requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10,
        tenant_id: ctx.state.tenant?.id ?? null, user_id: ctx.state.auth?.userId ?? null,
      };
      if (ctx.status >= 500) ctx.deps.logger.error({ ...line, err }, 'request failed');
      else ctx.deps.logger.info(line, 'request');
    }
  };
}

/**
 * Writes the error response for any thrown value (DESIGN.md §4 "Error body"); exported for the Koa
 * 'error' fallbacks. Never puts a message, stack or SQL of an unknown error into the body.
 * - AppError: its status, headers (e.g. Retry-After) and `{message, code, errors?}`;
 * - PostgreSQL errors (also wrapped by Objection): 23505 unique -> 409 CONFLICT; 23502 not-null,
 *   23503 foreign key, 23514 check and 22xxx data errors -> 422 VALIDATION_FAILED with
 *   `errors: {<column or "body">: [reason]}` (a fixed text, never the database's message);
 * - body parser errors: malformed JSON (400/415) -> 422 `errors.body`; too large -> 413 PAYLOAD_TOO_LARGE;
 * - anything else -> 500 `{message, code: SERVER_ERROR, request_id}`.
 * @param ctx the request; ctx.state.requestId must be set (errorsAndLogging does)
 * @param e whatever was thrown
 */
export function writeError(ctx: AppContext, e: unknown): void {
  // pg errors carry `code` (SQLSTATE); Objection wraps them (db-errors) and keeps the original as `nativeError`
  const pgError = (e as { nativeError?: unknown })?.nativeError ?? e;
  const pgCode = (pgError as { code?: unknown })?.code;
  if (e instanceof AppError) {
    ctx.status = e.status;
    for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
    ctx.body = e.errors ? { message: e.message, code: e.code, errors: e.errors } : { message: e.message, code: e.code };
  } else if (typeof pgCode === 'string' && PG_MAP[pgCode]) {
    const m = PG_MAP[pgCode];
    ctx.status = m.status;
    const col = (pgError as { column?: string }).column;
    ctx.body = m.status === 422 ? { message: m.message, code: m.code, errors: { [col ?? 'body']: [m.message] } } : { message: m.message, code: m.code };
  } else if ((e as { status?: number; expose?: boolean })?.expose && typeof (e as { status?: number }).status === 'number' && (e as { status: number }).status < 500) {
    // koa-body / http-errors client errors (malformed JSON, body too large)
    const status = (e as { status: number }).status;
    if (status === 400 || status === 415 || status === 422) {
      const v = new ValidationFailed({ body: ['The request body is not valid JSON.'] });
      ctx.status = 422;
      ctx.body = { message: v.message, code: v.code, errors: v.errors };
    } else {
      ctx.status = status;
      ctx.body = { message: status === 413 ? 'The request body is too large.' : 'Bad request.', code: status === 413 ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST' };
    }
  } else {
    ctx.status = 500;
    ctx.body = { message: 'Server error. Contact the administrator with this request id and the request time.', code: 'SERVER_ERROR', request_id: ctx.state.requestId };
  }
}
