import type Router from '@koa/router';
import type { Next } from 'koa';
import { bodyAjv, queryAjv, validate, type Schema } from '../http/validation.js';
import { ValidationFailed } from '../errors.js';
import { invalidRequest } from './errors.js';
import { apiKeyAuth, requireScope } from './middleware/auth.js';
import { requireMailboxPassword, resolveDomain, resolveMailbox } from './middleware/resolve.js';
import { indexResult } from './schemas.js';
import { emailRoutes } from './routes-emails.js';
import { createRoutes } from './routes-create.js';
import type { MailScope } from './keys/service.js';
import type { MailContext } from './context.js';

/** One documented response of a Mailbox API route. */
export interface MailResponseDef { description: string; schema?: Schema }

/**
 * A route of the Mailbox API (document 3 "Endpoints"): the single table both the Koa router and
 * /openapi.json are built from. Its own type (not api/http/route.ts RouteDef) because auth (API keys
 * with scopes, mailbox passwords) and the error body differ from the web service's.
 * Paths use Koa syntax (`/api/v1/mailboxes/:mailbox/emails`).
 */
export interface MailRouteDef {
  method: 'get' | 'post';
  path: string;
  /** One line for the docs. */
  summary: string;
  description?: string;
  /** OpenAPI tag. */
  tag: string;
  /** Scope the API key needs; null = public (no API key). */
  scope: MailScope | null;
  /** `mailbox`: resolve and check `:mailbox`; `domain`: resolve and check `:domain`. */
  resolve?: 'mailbox' | 'domain';
  /** Needs the mailbox password (X-Mailbox-Password or body mailbox_password). */
  password?: boolean;
  params?: Schema;
  query?: Schema;
  body?: Schema;
  /** Success and route-specific responses; the common errors are added by api/mail/openapi.ts. */
  responses: Record<number, MailResponseDef>;
  handler: (ctx: MailContext) => Promise<void> | void;
}

/** Hooks every protected route gets. */
export interface MailMountHooks {
  rateLimit: (ctx: MailContext, next: Next) => Promise<void>;
}

/** Validation against a schema; field errors become 422 invalid_request. */
function check<T>(which: 'query' | 'body', schema: Schema, value: unknown): T {
  try {
    return validate<T>(which === 'body' ? bodyAjv : queryAjv, schema, value);
  } catch (e) {
    if (e instanceof ValidationFailed) throw invalidRequest(e.errors ?? {});
    throw e;
  }
}

/**
 * Registers the route table on a router. Order of checks (docs/mailbox-api.md):
 * 401 unauthorized -> 429 rate_limited -> 403 forbidden (scope) -> 404 mailbox_not_found /
 * domain_not_found -> 403 mailbox_not_allowed / domain_not_allowed -> 422 invalid_request (path id,
 * query, body) -> 422 mailbox_password_required -> handler (401 mailbox_auth_failed, 404
 * email_not_found, 502 mail_server_error, ...). Validated values land in ctx.state.params/query/body.
 */
export function mountMailRoutes(router: Router, defs: MailRouteDef[], hooks: MailMountHooks): void {
  for (const def of defs) {
    const chain: ((ctx: MailContext, next: Next) => Promise<void>)[] = [];
    if (def.scope) chain.push(apiKeyAuth(), hooks.rateLimit, requireScope(def.scope));
    if (def.resolve === 'mailbox') chain.push(resolveMailbox());
    if (def.resolve === 'domain') chain.push(resolveDomain());
    chain.push(async (ctx, next) => {
      ctx.state.params = def.params ? check('query', def.params, { ...ctx.params }) : { ...ctx.params };
      ctx.state.query = def.query ? check('query', def.query, { ...ctx.query }) : {};
      if (def.body) {
        const raw = (ctx.request as unknown as { body?: unknown }).body;
        const body = raw && typeof raw === 'object' && !Array.isArray(raw) ? structuredClone(raw) : raw ?? {};
        ctx.state.body = check('body', def.body, body);
      } else ctx.state.body = {};
      return next();
    });
    if (def.password) chain.push(requireMailboxPassword());
    chain.push(async (ctx) => { await def.handler(ctx); });
    (router as unknown as Record<string, (path: string, ...mw: unknown[]) => void>)[def.method](def.path, ...chain);
  }
}

/** Koa path -> the path as document 3 and the index write it: `/x/:id` -> `/x/{id}`. */
export function publicPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

const AUTH_TEXT = 'Authorization: Bearer <API_KEY> on every endpoint except GET /api/v1. Endpoints that read or send mail also need the mailbox password in the X-Mailbox-Password header or the JSON body field mailbox_password; it is used for that request only and never stored.';

const indexRoute: MailRouteDef = {
  method: 'get', path: '/api/v1', tag: 'index', scope: null,
  summary: 'API index: service, version, documentation links and every endpoint with its scope',
  responses: { 200: { description: 'The API index.', schema: indexResult } },
  handler(ctx) {
    const base = ctx.deps.config.mailBaseUrl;
    ctx.body = {
      ok: true, service: 'Mailbox API', version: 'v1', base_url: base, docs: `${base}/docs`, openapi: `${base}/openapi.json`,
      authentication: AUTH_TEXT,
      endpoints: mailRoutes.map((r) => ({ method: r.method.toUpperCase(), path: publicPath(r.path), scope: r.scope })),
    };
  },
};

/** The Mailbox API's route table, in document 3's order (+ the request poll of docs/mailbox-api.md). */
export const mailRoutes: MailRouteDef[] = [indexRoute, ...emailRoutes, ...createRoutes];
