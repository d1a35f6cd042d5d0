import type { AppContext } from '../context.js';
import { applyError, requestLog } from '../http/request-log.js';
import type { HttpError } from '../http/error-table.js';
import type { Server } from 'node:http';
import { handleClientErrors } from '../http/client-error.js';
import type { Logger } from '../../lib/logger.js';

/**
 * Renders an HttpError as the web service's body (DESIGN.md §4 "Error body"):
 * `{message, code}` (+ `errors` on 422, + `request_id` on 500 SERVER_ERROR, + an AppError's extra
 * safe fields, e.g. `data` of reply-email's 502).
 * @param ctx the request (ctx.state.requestId set by the request log)
 * @param err the described error (api/http/error-table.ts)
 */
export function writeWebError(ctx: AppContext, err: HttpError): void {
  const body: Record<string, unknown> = { ...err.extra, message: err.message, code: err.code };
  if (err.errors) body.errors = err.errors;
  if (!err.known) body.request_id = ctx.state.requestId;
  applyError(ctx, err, body);
}

/**
 * The web service's request log (api/http/request-log.ts) with its error body and its log fields
 * (tenant id, user id). Mounted first by createApp.
 */
export function errorsAndLogging() {
  return requestLog<AppContext>({
    writeError: writeWebError,
    logFields: (ctx) => ({ tenant_id: ctx.state.tenant?.id ?? null, user_id: ctx.state.auth?.userId ?? null }),
  });
}

/**
 * The web service's answer to Node's own rejections (api/http/client-error.ts): 431 headers over
 * 16 KB, 400 malformed framing, 408 request timeout, as `{message, code, request_id}`. Call it where
 * the server is created (api/server.ts).
 * @param logger optional: one line per answered client error
 */
export function handleWebClientErrors(server: Server, logger?: Logger): void {
  handleClientErrors(server, (e) => ({ message: e.message, code: e.code, request_id: e.requestId }), logger);
}
