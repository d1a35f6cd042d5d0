import Router from '@koa/router';
import type Koa from 'koa';
import { loginOperator, revokeOperatorSession, OPERATOR_SESSION_TTL_MS } from '../operators/service.js';
import { listDomains } from '../domains/service.js';
import { listApiKeys } from '../keys/service.js';
import { html, notice, csrfField, when, type SafeHtml } from './html.js';
import { createKit, NOTICES, text, type DashboardDeps, type DashRequest, type Kit } from './kit.js';
import {
  csrfForLogin,
  csrfMatches,
  LoginThrottle,
  newLoginNonce,
  readCookie,
  setCookie,
  LOGIN_COOKIE,
  SESSION_COOKIE,
} from './security.js';
import { registerDomainRoutes } from './domains.js';
import { registerKeyRoutes } from './keys.js';

export type { DashboardDeps } from './kit.js';

/**
 * The operator dashboard of the Mailbox API (issue 3 §5; document 3: "A dashboard (login page at
 * {mail_api_base_url}/login) creates API keys"). Server-rendered pages, no scripts, no external
 * assets. Mounted at the root of the Mailbox API app (api/mail/app.ts).
 *
 * Pages: GET/POST /login, POST /logout, GET /dashboard (overview), /dashboard/domains (list, new,
 * edit, mailboxes), /dashboard/keys (list, two-step create, revoke with confirmation).
 * Session: cookie `mbx_session` (a `mbxs` token, 12 h, HttpOnly, SameSite=Strict, Secure on https).
 * Every POST form carries a CSRF token (HMAC of the session under APP_KEY; 403 on mismatch).
 * Login: 5 failures per 15 minutes per IP + e-mail, then 429.
 * @param deps knex, redis, logger and config {mailBaseUrl, appKey, secureCookies?, loginThrottle?}
 * @returns a router (mount with router.routes() / router.allowedMethods())
 */
export function createDashboardRouter(deps: DashboardDeps): Router {
  const router = new Router();
  const kit = createKit(deps);
  const throttle = new LoginThrottle(
    deps.redis,
    deps.config.loginThrottle ?? { points: 5, durationSeconds: 900, keyPrefix: 'rl:mail-dashboard-login' },
  );

  router.get(
    '/login',
    kit.page({ auth: false }, async (ctx, req) => {
      if (req.session) return kit.redirect(ctx, '/dashboard');
      loginPage(kit, ctx, req, 200, {});
    }),
  );

  router.post(
    '/login',
    kit.page({ auth: false }, async (ctx, req) => {
      const nonce = readCookie(ctx, LOGIN_COOKIE);
      if (!nonce || !csrfMatches(csrfForLogin(deps.config.appKey, nonce), req.body._csrf)) {
        return loginPage(kit, ctx, req, 403, {
          error: 'The sign-in form expired. Nothing was submitted; please sign in again.',
        });
      }
      const email = text(req.body.email);
      const password = typeof req.body.password === 'string' ? req.body.password : '';
      if (!email || !password || email.length > 190 || password.length > 1024)
        return loginPage(kit, ctx, req, 422, {
          email: email.slice(0, 190),
          error: 'Enter your e-mail address and password.',
        });
      const wait = await throttle.blockedFor(ctx.ip, email);
      if (wait > 0) {
        ctx.set('Retry-After', String(wait));
        return loginPage(kit, ctx, req, 429, {
          email,
          error: `Too many failed sign-in attempts. Try again in ${Math.ceil(wait / 60)} minute(s).`,
        });
      }
      const result = await loginOperator(deps.knex, { email, password });
      if (!result) {
        await throttle.failed(ctx.ip, email);
        deps.logger.warn({ ip: ctx.ip }, 'dashboard sign-in failed');
        return loginPage(kit, ctx, req, 401, { email, error: 'These credentials do not match our records.' });
      }
      await throttle.succeeded(ctx.ip, email);
      setCookie(ctx, SESSION_COOKIE, result.token, OPERATOR_SESSION_TTL_MS / 1000, { secure: kit.secure });
      setCookie(ctx, LOGIN_COOKIE, '', 0, { secure: kit.secure, path: '/login' });
      deps.logger.info({ operator_id: result.operator.id }, 'dashboard sign-in');
      kit.redirect(ctx, '/dashboard');
    }),
  );

  router.post(
    '/logout',
    kit.page({ auth: true }, async (ctx, req) => {
      await revokeOperatorSession(deps.knex, req.session.sessionId);
      setCookie(ctx, SESSION_COOKIE, '', 0, { secure: kit.secure });
      kit.redirect(ctx, '/login?notice=signed-out');
    }),
  );

  router.get(
    '/dashboard',
    kit.page({ auth: true }, async (ctx, req) => {
      const [domains, keys] = await Promise.all([listDomains(deps.knex), listApiKeys(deps.knex)]);
      const active = keys.filter((k) => !k.revoked_at);
      const mailboxes = domains.reduce((n, d) => n + d.mailbox_count, 0);
      kit.render(
        ctx,
        200,
        'Overview',
        html`<h1>Overview</h1>
          <div class="stats">
            <div class="card stat"><b>${domains.length}</b>domains · <a href="/dashboard/domains">manage</a></div>
            <div class="card stat"><b>${mailboxes}</b>registered mailboxes</div>
            <div class="card stat"><b>${active.length}</b>active API keys · <a href="/dashboard/keys">manage</a></div>
          </div>
          <p>
            <a class="btn" href="/dashboard/keys/new">Create an API key</a>
            <a class="btn secondary" href="/dashboard/domains/new">Add a domain</a>
          </p>
          <h2>Active keys, newest first</h2>
          ${
            active.length
              ? html`<table>
                  <thead>
                    <tr>
                      <th>Name</th>
                      <th>Prefix</th>
                      <th>Domain</th>
                      <th>Last use</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${active.slice(0, 5).map(
                      (k) =>
                        html`<tr>
                          <td>${k.name}</td>
                          <td class="mono">${k.prefix}…</td>
                          <td>${k.domain}</td>
                          <td>${when(k.last_used_at)}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`
              : html`<p class="muted">No active keys yet.</p>`
          }
          <p class="muted">
            API base URL: <code>${deps.config.mailBaseUrl}/api/v1</code> · <a href="/docs">documentation</a>
          </p>`,
        req,
      );
    }),
  );

  registerDomainRoutes(router, kit);
  registerKeyRoutes(router, kit);
  return router;
}

/** The sign-in page; sets a fresh pre-session cookie whose HMAC is the form's CSRF token. */
function loginPage(
  kit: Kit,
  ctx: Koa.Context,
  req: DashRequest,
  status: number,
  o: { email?: string; error?: string },
): void {
  const nonce = newLoginNonce();
  setCookie(ctx, LOGIN_COOKIE, nonce, 3600, { secure: kit.secure, path: '/login' });
  const csrf = csrfForLogin(kit.deps.config.appKey, nonce);
  const info = typeof ctx.query.notice === 'string' ? NOTICES[ctx.query.notice] : undefined;
  const body: SafeHtml = html`<div class="login card">
    <h1>Sign in</h1>
    ${notice('ok', info)}${notice('err', o.error)}
    <form method="post" action="/login">
      ${csrfField(csrf)} <label for="email">E-mail</label
      ><input
        type="email"
        id="email"
        name="email"
        value="${o.email ?? ''}"
        autocomplete="username"
        required
        autofocus
      />
      <label for="password">Password</label
      ><input type="password" id="password" name="password" autocomplete="current-password" required />
      <button class="btn" type="submit">Sign in</button>
    </form>
  </div>`;
  kit.render(ctx, status, 'Sign in', body, req.session ? req : undefined);
}
