import type Koa from 'koa';
import { koaBody } from 'koa-body';
import { refuseHostileBody } from './hostile-input.js';

/** Options of jsonBody(). */
export interface BodyOptions {
  /** Largest JSON (and form) body, e.g. '1mb'; a larger one is 413 PAYLOAD_TOO_LARGE. */
  limit: string;
  /** Also parse application/x-www-form-urlencoded (the web service does; the Mailbox API does not). */
  urlencoded?: boolean;
  /** Only objects and arrays at the top level (koa-body jsonStrict). */
  strict?: boolean;
  /** Which requests get a body parsed (default: POST, PUT and PATCH). */
  when?: (ctx: Koa.Context) => boolean;
}

/** The methods koa-body parses a body for (its default parsedMethods). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The one body-parser factory of both services (DESIGN.md §3 "one HTTP stack"): koa-body for JSON
 * (+ urlencoded forms when asked), never multipart (uploads stream through the storage driver).
 * Parser errors keep their client status: malformed JSON or an unsupported charset -> 400/415
 * (422 VALIDATION_FAILED / invalid_request through the error table), too large -> 413; any other
 * parser failure becomes 400. Requests `when` refuses skip parsing and its content-type checks.
 * A parsed body nested deeper than 64 levels or carrying NUL anywhere is refused with 422 before
 * any route sees it (api/http/hostile-input.ts; issue 7).
 * @returns the Koa middleware
 */
export function jsonBody(opts: BodyOptions): Koa.Middleware {
  const parse = koaBody({
    json: true,
    jsonLimit: opts.limit,
    formLimit: opts.limit,
    urlencoded: opts.urlencoded ?? false,
    multipart: false,
    text: false,
    jsonStrict: opts.strict ?? true,
    onError: (err) => {
      const status = (err as { status?: unknown }).status;
      throw Object.assign(err, {
        status: typeof status === 'number' && status >= 400 && status < 500 ? status : 400,
        expose: true,
      });
    },
  });
  const when = opts.when ?? ((ctx: Koa.Context) => BODY_METHODS.has(ctx.method));
  return (ctx, next) =>
    when(ctx)
      ? parse(ctx, () => {
          refuseHostileBody((ctx.request as { body?: unknown }).body);
          return next();
        })
      : next();
}
