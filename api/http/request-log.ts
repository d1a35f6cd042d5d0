import type Koa from 'koa';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../lib/logger.js';
import { MethodNotAllowed, RouteNotFound } from '../errors.js';
import { describeError, type HttpError } from './error-table.js';

/** The part of ctx.state the request log reads and writes. */
export interface RequestLogState {
  requestId: string;
}

/** What a service plugs into requestLog(). */
export interface RequestLogOptions<C extends Koa.Context> {
  /** Renders an HttpError in the service's body; sets ctx.status, headers and ctx.body. */
  writeError(ctx: C, err: HttpError, thrown: unknown): void;
  /** The service's own fields of the log line (tenant, user, key id). Never a header, query or body. */
  logFields(ctx: C): Record<string, unknown>;
  /** The loggable form of the error of a 5xx (default: the error itself, serialised by pino). */
  loggableError?(ctx: C, thrown: unknown): unknown;
  /** Runs first, after the request id is set (e.g. an empty secrets list in ctx.state). */
  start?(ctx: C): void;
  /** Runs after the log line (e.g. dropping the request's secrets from ctx.state). */
  finally?(ctx: C): void;
  /** The logger (default ctx.deps.logger). */
  logger?(ctx: C): Logger;
}

/** The caller's X-Request-Id when it is 8-64 characters of [A-Za-z0-9._-], else a new UUID. */
export function requestIdOf(incoming: string): string {
  return /^[A-Za-z0-9._-]{8,64}$/.test(incoming) ? incoming : randomUUID();
}

/**
 * The one request-log middleware of both services (DESIGN.md §3 "one request log", §4 logging),
 * mounted first: request id (sent back in X-Request-Id), the one place errors are turned into
 * bodies (describeError -> the service's writeError), an unmatched route as 404 and a known path
 * with another method as 405 (with Allow; also for methods the router does not implement, which
 * it answers 501), and one JSON log line per request with request id,
 * method, path, status, ms and the service's fields; a 5xx is logged at error level with the error.
 * @param opts the service's error writer and log fields
 * @returns the Koa middleware
 */
export function requestLog<C extends Koa.ParameterizedContext<RequestLogState> & { deps: { logger: Logger } }>(
  opts: RequestLogOptions<C>,
) {
  return async (ctx: C, next: Koa.Next): Promise<void> => {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(ctx.get('x-request-id'));
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    opts.start?.(ctx);
    let thrown: unknown;
    try {
      await next();
      const routerAnswer = (ctx.status === 405 || ctx.status === 501) && typeof ctx.body === 'string';
      const empty = ctx.body === undefined || ctx.body === null || routerAnswer;
      const allow = ctx.response.get('Allow');
      // 501 is the router's answer to a method it does not implement (TRACE, PROPFIND, ...): 405 on a
      // known path (with Allow), 404 on any other
      const unknownMethod = ctx.status === 501 && empty;
      if ((ctx.status === 404 && empty) || (unknownMethod && !allow))
        opts.writeError(ctx, describeError(new RouteNotFound()), undefined);
      else if ((ctx.status === 405 && empty) || unknownMethod) {
        opts.writeError(ctx, describeError(new MethodNotAllowed(ctx.method, allow)), undefined);
      }
    } catch (e) {
      thrown = e;
      opts.writeError(ctx, describeError(e), e);
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line = {
        request_id: requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 10) / 10,
        ...opts.logFields(ctx),
      };
      const logger = opts.logger ? opts.logger(ctx) : ctx.deps.logger;
      if (ctx.status >= 500) {
        logger.error({ ...line, err: opts.loggableError ? opts.loggableError(ctx, thrown) : thrown }, 'request failed');
      } else logger.info(line, 'request');
      opts.finally?.(ctx);
    }
  };
}

/**
 * Sets status, headers and a body on ctx for an HttpError.
 * @param body the service's body for this error
 */
export function applyError(ctx: Koa.Context, err: HttpError, body: Record<string, unknown>): void {
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  ctx.body = body;
}
