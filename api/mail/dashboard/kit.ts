import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Knex } from 'knex';
import type { Redis } from 'ioredis';
import { koaBody } from 'koa-body';
import { inspectBody } from '../../http/hostile-input.js';
import type { Logger } from '../../../lib/logger.js';
import { verifyOperatorSession, type OperatorSession } from '../operators/service.js';
import { html, layout, type LayoutSession, type SafeHtml } from './html.js';
import {
  csrfForSession,
  csrfMatches,
  readCookie,
  securityHeaders,
  SESSION_COOKIE,
  type LoginThrottleOptions,
} from './security.js';

/**
 * Plumbing shared by the dashboard's route modules: the page wrapper (security headers, form
 * parsing, session, CSRF, HTML error pages) and the render/redirect helpers.
 */

/** What the dashboard needs (a subset of the Mailbox API app's deps). */
export interface DashboardDeps {
  knex: Knex;
  redis: Redis;
  logger: Logger;
  config: {
    /** Origin the Mailbox API announces; https makes the session cookie Secure. */
    mailBaseUrl: string;
    /** 32-byte APP_KEY: seals panel passwords and keys the CSRF HMAC. */
    appKey: Buffer;
    /** Forces the Secure cookie flag on or off (default: mailBaseUrl is https). */
    secureCookies?: boolean;
    /** Login throttling (default 5 failures per 15 minutes per IP + e-mail). */
    loginThrottle?: LoginThrottleOptions;
  };
}

/** A request as a dashboard handler sees it. */
export interface DashRequest {
  /** The signed-in operator's session (null only on pages that allow anonymous access). */
  session: OperatorSession | null;
  /** The session's CSRF token ('' when anonymous). */
  csrf: string;
  /** The session cookie value ('' when anonymous). */
  token: string;
  /** Parsed urlencoded form (POST) or {}. */
  body: Record<string, unknown>;
}

/** A signed-in request. */
export type AuthedRequest = DashRequest & { session: OperatorSession };

/** Fixed notices shown after a redirect (`?notice=<code>`): request text is never reflected. */
export const NOTICES: Record<string, string> = {
  'domain-created': 'Domain added. Register its mailboxes below.',
  'domain-updated': 'Domain saved.',
  'mailbox-added': 'Mailbox registered.',
  'key-revoked': 'The API key was revoked. Clients using it now get 401 unauthorized.',
  'already-submitted':
    'That form was already submitted; the key it created is in the list below (its plain text is not shown again).',
  'signed-out': 'You are signed out.',
};

/** Where handlers write pages. */
export interface Kit {
  deps: DashboardDeps;
  secure: boolean;
  /**
   * Wraps a handler: security headers, form parsing, session lookup, redirect to /login when a
   * signed-in page has no session, CSRF check on POST (403 page on mismatch), HTML error pages.
   */
  page(
    opts: { auth: false; csrf?: false },
    handler: (ctx: Koa.Context, req: DashRequest) => Promise<void>,
  ): Koa.Middleware;
  page(opts: { auth: true }, handler: (ctx: Koa.Context, req: AuthedRequest) => Promise<void>): Koa.Middleware;
  /** Writes a full page. */
  render(ctx: Koa.Context, status: number, title: string, body: SafeHtml, req?: DashRequest): void;
  /** 303 See Other to a local path. */
  redirect(ctx: Koa.Context, path: string): void;
}

function layoutSession(req?: DashRequest): LayoutSession | undefined {
  return req?.session ? { operatorEmail: req.session.operator.email, csrf: req.csrf } : undefined;
}

async function parseForm(ctx: Koa.Context): Promise<Record<string, unknown>> {
  if (ctx.request.body === undefined && !ctx.req.readableEnded) {
    await koaBody({ urlencoded: true, json: false, multipart: false, text: false, formLimit: '100kb' })(
      ctx,
      async () => {},
    );
  }
  const b: unknown = ctx.request.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

/** Builds the kit for one dashboard router. */
export function createKit(deps: DashboardDeps): Kit {
  const secure = deps.config.secureCookies ?? deps.config.mailBaseUrl.startsWith('https:');
  const render: Kit['render'] = (ctx, status, title, body, req) => {
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = layout(title, body, layoutSession(req));
  };
  const redirect: Kit['redirect'] = (ctx, path) => {
    ctx.redirect(path.startsWith('/') && !path.startsWith('//') ? path : '/dashboard');
    ctx.status = 303;
  };
  const page =
    (opts: { auth: boolean; csrf?: boolean }, handler: (ctx: Koa.Context, req: any) => Promise<void>): Koa.Middleware =>
    async (ctx) => {
      securityHeaders(ctx);
      const req: DashRequest = { session: null, csrf: '', token: '', body: {} };
      try {
        const token = readCookie(ctx, SESSION_COOKIE) ?? '';
        const session = token ? await verifyOperatorSession(deps.knex, token) : null;
        if (session) Object.assign(req, { session, token, csrf: csrfForSession(deps.config.appKey, token) });
        if (ctx.method === 'POST') req.body = await parseForm(ctx);
        // NUL in a field (or absurd nesting) would reach PostgreSQL: the "Bad request" page, nothing changed (issue 7)
        if (inspectBody(req.body)) throw Object.assign(new Error('hostile form body'), { status: 422, expose: true });
        if (opts.auth && !session) return redirect(ctx, '/login');
        if (ctx.method === 'POST' && opts.auth && !csrfMatches(req.csrf, req.body._csrf)) {
          return render(
            ctx,
            403,
            'Forbidden',
            html`<h1>Forbidden</h1>
              <div class="alert err">
                The form's security token is missing or out of date. Nothing was changed. Go back, reload the page and
                try again.
              </div>`,
            req,
          );
        }
        await handler(ctx, req);
      } catch (e) {
        const status = (e as { status?: number; expose?: boolean }).expose
          ? Number((e as { status?: number }).status)
          : 500;
        if (status >= 400 && status < 500) {
          return render(
            ctx,
            status,
            'Bad request',
            html`<h1>Bad request</h1>
              <div class="alert err">The request could not be read.</div>`,
            req,
          );
        }
        const requestId = (ctx.state as { requestId?: string }).requestId ?? randomUUID();
        deps.logger.error(
          { err: e, request_id: requestId, path: ctx.path, method: ctx.method },
          'dashboard request failed',
        );
        render(
          ctx,
          500,
          'Server error',
          html`<h1>Server error</h1>
            <div class="alert err">
              Something went wrong. Contact the administrator with this request id: <code>${requestId}</code>
            </div>`,
          req,
        );
      }
    };
  return { deps, secure, page: page as Kit['page'], render, redirect };
}

/** A positive integer path id (or null for anything else). */
export function pathId(v: unknown): number | null {
  return typeof v === 'string' && /^[1-9][0-9]{0,8}$/.test(v) ? Number(v) : null;
}

/** A form value as trimmed text ('' for absent or non-text values). */
export function text(v: unknown): string {
  return typeof v === 'string' ? v.trim() : Array.isArray(v) && typeof v[0] === 'string' ? v[0].trim() : '';
}

/** A form value as a list of strings (repeated fields). */
export function list(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  return typeof v === 'string' ? [v] : [];
}
