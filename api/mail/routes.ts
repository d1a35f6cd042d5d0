import type Router from '@koa/router';
import type Koa from 'koa';
import { mountRoutes, type Input, type RouteDef } from '../http/route.js';
import { apiKeyAuth, requireScope } from './middleware/auth.js';
import { requireMailboxPassword, resolveDomain, resolveMailbox } from './middleware/resolve.js';
import type { MailScope } from './keys/service.js';
import type { MailContext } from './context.js';

/** The Mailbox API's guard fields of a route (document 3 "Authentication"). */
export interface MailGuards {
  /** Scope the API key needs; null = public (no API key). */
  scope: MailScope | null;
  /** `mailbox`: resolve and check `:mailbox`; `domain`: resolve and check `:domain`. */
  resolve?: 'mailbox' | 'domain';
  /** Needs the mailbox password (X-Mailbox-Password or body mailbox_password). */
  password?: boolean;
}

/**
 * A route of the Mailbox API (document 3 "Endpoints"): the shared RouteDef (api/http/route.ts) with
 * the Mailbox API's guards. Paths use Koa syntax (`/api/v1/mailboxes/:mailbox/emails`).
 */
export type MailRouteDef<P = Input, Q = Input, B = Input> = RouteDef<MailContext, P, Q, B> & MailGuards;

/** Any mail route (the element type of the route table). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table holds routes of different input types
export type AnyMailRoute = MailRouteDef<any, any, any>;

/**
 * Declares a mail route with typed input (the handler reads ctx.state.params/query/body without casts).
 * @returns the same definition
 */
export function mailRoute<P = Input, Q = Input, B = Input>(def: MailRouteDef<P, Q, B>): AnyMailRoute {
  return def as AnyMailRoute;
}

/** Hooks every protected route gets. */
export interface MailMountHooks {
  rateLimit: (ctx: MailContext, next: () => Promise<unknown>) => Promise<void>;
  /** The JSON body parser, run after the key, rate limit, scope and path checks (route.ts MountOptions.body). */
  body?: Koa.Middleware;
}

/**
 * Registers the route table on a router through the shared mountRoutes. Order of checks
 * (docs/mailbox-api.md): 401 unauthorized -> 429 rate_limited -> 403 forbidden (scope) -> 404
 * mailbox_not_found / domain_not_found -> 403 mailbox_not_allowed / domain_not_allowed -> body
 * parser (413 payload_too_large, 422 malformed JSON) -> 422 invalid_request (path id, query, body) -> 422
 * mailbox_password_required -> handler (401
 * mailbox_auth_failed, 404 email_not_found, 502 mail_server_error, ...).
 */
export function mountMailRoutes(router: Router, defs: readonly AnyMailRoute[], hooks: MailMountHooks): void {
  mountRoutes<MailContext, AnyMailRoute>(router, defs, {
    body: hooks.body,
    before: (def) => [
      ...(def.scope ? [apiKeyAuth(), hooks.rateLimit, requireScope(def.scope)] : []),
      ...(def.resolve === 'mailbox' ? [resolveMailbox()] : def.resolve === 'domain' ? [resolveDomain()] : []),
    ],
    after: (def) => (def.password ? [requireMailboxPassword()] : []),
  });
}

/** Koa path -> the path as document 3 and the index write it: `/x/:id` -> `/x/{id}`. */
export function publicPath(koaPath: string): string {
  return koaPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}
