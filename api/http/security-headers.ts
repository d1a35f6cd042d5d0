import type Koa from 'koa';

/** Options of securityHeaders(). */
export interface SecurityHeaderOptions {
  /**
   * Path prefixes whose responses default to `Cache-Control: no-store` (e.g. `['/api']`): every API
   * answer may carry a token, a key or personal data. A handler may still set its own value.
   */
  noStore: readonly string[];
}

/**
 * Response headers of every answer of a service (issue 7 item 6, "Headers"), set before the rest of
 * the chain runs so error answers carry them too:
 * - `X-Content-Type-Options: nosniff` on every response;
 * - `Cache-Control: no-store` on the paths under `opts.noStore` (login, token and key creation
 *   answers are under them), unless a later middleware sets another value.
 * Mount it right after the request log (api/app.ts, api/mail/app.ts).
 * @returns the Koa middleware
 */
export function securityHeaders(opts: SecurityHeaderOptions): Koa.Middleware {
  const under = (path: string) => opts.noStore.some((p) => path === p || path.startsWith(`${p}/`));
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (under(ctx.path)) ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
