import type { Next } from 'koa';
import type Koa from 'koa';
import type * as BullBoardApi from '@bull-board/api';
import type * as BullBoardBullMQ from '@bull-board/api/bullMQAdapter';
import type * as BullBoardKoa from '@bull-board/koa';
import { lazyRequire } from '../../lib/lazy-require.js';
import { QUEUE_NAMES, QueueUnavailableError } from '../../jobs/queues.js';
import { Forbidden, Unauthenticated } from '../errors.js';
import type { AppContext, AppDeps, AppState } from '../context.js';
import {
  closeBoardSession,
  findBoardSession,
  openBoardSession,
  verifyPlatformAdmin,
  type BoardSession,
} from './session.js';
import { clearSessionCookie, csrfToken, csrfValid, sameOrigin, sessionCookie, setSessionCookie } from './csrf.js';
import { LoginThrottle } from '../../lib/login-throttle.js';
import { PAGE_CSP, errorPage, loginPage, signedInPage } from './views.js';

/**
 * bull-board at /admin/queues behind a platform-admin sign-in (issue 2 §9, DESIGN.md §1, §5).
 * - GET /admin/login: the sign-in form (or "signed in as" with a sign-out button).
 * - POST /admin/login: e-mail + password of a platform admin (tenant users are refused like a wrong
 *   password); CSRF-checked; throttled per IP + e-mail (429); on success an HttpOnly SameSite=Lax
 *   session cookie (a 'board' token, 12 h) and 303 to the board.
 * - GET /admin/logout: a confirmation form; POST /admin/logout (CSRF-checked) revokes the session.
 * - /admin/queues and below: bull-board for a valid session. Without one, nobody sees queue data:
 *   the board's HTML pages (GET) redirect to the sign-in form (a browser UI; the APIs never
 *   redirect), and its JSON API /admin/queues/api/* (and any non-GET) answers 401 JSON.
 * The board lists every queue of QUEUE_NAMES; it is built on the first authorised request, so
 * creating the app opens no Redis connection. Redis frozen or gone: its API answers 503
 * QUEUE_UNAVAILABLE (Retry-After) within BOARD_BOUND_MS instead of hanging (runBounded).
 * These are browser pages, not API routes: they are not in the route table or /openapi.json.
 */
export const BOARD_PATH = '/admin/queues';
const LOGIN_PATH = '/admin/login';
const LOGOUT_PATH = '/admin/logout';
/** How long a bull-board request may take before it answers 503 QUEUE_UNAVAILABLE, in ms (issue 7 item 2). */
export const BOARD_BOUND_MS = 1500;
/** How long the Redis ping before a bull-board API call may take, in ms. */
export const BOARD_PING_MS = 500;
/** The paths whose POST forms the app parses before boardRoutes runs (api/app.ts). */
export const BOARD_FORMS: ReadonlySet<string> = new Set([LOGIN_PATH, LOGOUT_PATH]);
/**
 * CSP of bull-board's pages: only `frame-ancestors 'none'`, since its UI loads its own scripts and
 * styles (the sign-in pages have the strict PAGE_CSP of views.ts).
 */
export const BOARD_CSP = "frame-ancestors 'none'";

/**
 * The middleware serving the paths above; every other path goes to `next`.
 * @param opts.throttle login throttle (default: 5 failures per IP + e-mail per minute and
 *   deps.config.loginIpLimit per IP per 15 minutes, in deps.redis with an in-memory fallback)
 */
export function boardRoutes(
  deps: AppDeps,
  opts: { throttle?: LoginThrottle } = {},
): Koa.Middleware<AppState, { deps: AppDeps }> {
  const throttle =
    opts.throttle ??
    new LoginThrottle(deps.redis, {
      points: 5,
      durationSeconds: 60,
      keyPrefix: 'rl:board-login',
      ipPoints: deps.config.loginIpLimit,
      onFallback: () => deps.logger.warn('board sign-in throttle: Redis unavailable, counting in memory'),
    });
  let board: Koa.Middleware | null = null;
  const getBoard = (): Koa.Middleware => {
    if (!board) {
      // loaded here: most processes never serve the board (lib/lazy-require.ts)
      const { createBullBoard } = lazyRequire<typeof BullBoardApi>('@bull-board/api')();
      const { BullMQAdapter } = lazyRequire<typeof BullBoardBullMQ>('@bull-board/api/bullMQAdapter')();
      const { KoaAdapter } = lazyRequire<typeof BullBoardKoa>('@bull-board/koa')();
      const serverAdapter = new KoaAdapter();
      serverAdapter.setBasePath(BOARD_PATH);
      createBullBoard({
        queues: QUEUE_NAMES.map((name) => new BullMQAdapter(deps.queues.get(name))),
        serverAdapter,
        options: { uiConfig: { boardTitle: 'ISP queues', miscLinks: [{ text: 'Sign out', url: LOGOUT_PATH }] } },
      });
      board = serverAdapter.registerPlugin();
    }
    return board;
  };

  const handlers = { login: loginHandler(deps, throttle), logout: logoutHandler(deps) };
  const mw = async (ctx: AppContext, next: Next): Promise<void> => {
    const path = ctx.path;
    if (path === LOGIN_PATH) return handlers.login(ctx);
    if (path === LOGOUT_PATH) return handlers.logout(ctx);
    if (path !== BOARD_PATH && !path.startsWith(`${BOARD_PATH}/`)) return next();
    // bull-board's own pages and API: never framed (clickjacking), never cached (issue 7)
    ctx.set('Content-Security-Policy', BOARD_CSP);
    ctx.set('X-Frame-Options', 'DENY');

    const session = await findBoardSession(deps.knex, sessionCookie(ctx));
    const readOnly = ctx.method === 'GET' || ctx.method === 'HEAD';
    if (!session) {
      if (!readOnly || path.startsWith(`${BOARD_PATH}/api/`)) throw new Unauthenticated('Sign in at /admin/login.');
      ctx.status = 302;
      ctx.redirect(`${LOGIN_PATH}?next=${encodeURIComponent(safeNext(ctx.path))}`);
      return;
    }
    if (!readOnly && !sameOrigin(ctx)) throw new Forbidden('Cross-origin request refused.');
    ctx.state.auth = boardAuth(session);
    ctx.set('Cache-Control', 'no-store');
    await runBounded(deps, ctx, () => getBoard()(ctx, next));
  };
  return mw;
}

/**
 * Runs bull-board with a time bound: its JSON API first pings Redis (BOARD_PING_MS), then the call
 * races BOARD_BOUND_MS; a failed ping, a timeout, or a 5xx of the board while Redis does not answer
 * the ping become 503 QUEUE_UNAVAILABLE with Retry-After. A call that loses the race is abandoned:
 * once the answer is sent, Koa ignores what it sets later.
 * @throws QueueUnavailableError when Redis does not answer in time
 */
async function runBounded(deps: AppDeps, ctx: AppContext, board: () => Promise<unknown>): Promise<void> {
  const api = ctx.path.startsWith(`${BOARD_PATH}/api/`);
  if (api && !(await deps.queues.ping(BOARD_PING_MS))) throw new QueueUnavailableError('bull-board');
  let timer: NodeJS.Timeout | undefined;
  const running = board().then(() => 'done' as const);
  running.catch(() => {
    /* an abandoned call's late failure has nobody to report to */
  });
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), BOARD_BOUND_MS);
  });
  try {
    if ((await Promise.race([running, timeout])) === 'timeout') throw new QueueUnavailableError('bull-board');
  } finally {
    clearTimeout(timer);
  }
  if (api && ctx.status >= 500 && !(await deps.queues.ping(BOARD_PING_MS))) {
    throw new QueueUnavailableError('bull-board');
  }
}

/** The AuthInfo of a board session (for the request log line). */
function boardAuth(s: BoardSession): NonNullable<AppState['auth']> {
  return {
    kind: 'board',
    tokenId: s.tokenId,
    userId: s.userId,
    tenantId: null,
    access: null,
    abilities: [],
    roles: [],
    permissions: [],
    isPlatformAdmin: true,
    expiresAt: s.expiresAt,
  };
}

/** A redirect target after sign-in: only paths of the board itself (no open redirect). */
function safeNext(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length > 500) return BOARD_PATH;
  if (raw !== BOARD_PATH && !raw.startsWith(`${BOARD_PATH}/`)) return BOARD_PATH;
  // eslint-disable-next-line no-control-regex -- matches control characters to refuse them in a redirect target
  if (raw.includes('//') || raw.includes('\\') || raw.includes('..') || /[\s\u0000-\u001f]/.test(raw))
    return BOARD_PATH;
  return raw;
}

function html(ctx: AppContext, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.body = body;
}

function methodNotAllowed(ctx: AppContext): void {
  ctx.set('Allow', 'GET, POST');
  html(ctx, 405, errorPage({ title: 'Method not allowed', message: 'Use the form.' }));
}

function formBody(ctx: AppContext): Record<string, unknown> {
  const b = ctx.request.body;
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Record<string, unknown>) : {};
}

function loginHandler(deps: AppDeps, throttle: LoginThrottle) {
  return async (ctx: AppContext): Promise<void> => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      const session = await findBoardSession(deps.knex, sessionCookie(ctx));
      const csrf = csrfToken(ctx);
      if (session) return html(ctx, 200, signedInPage({ csrf, email: session.email }));
      return html(ctx, 200, loginPage({ csrf, next: safeNext(ctx.query.next) }));
    }
    if (ctx.method !== 'POST') return methodNotAllowed(ctx);

    const body = formBody(ctx);
    const next = safeNext(body.next);
    const email = typeof body.email === 'string' ? body.email.trim() : '';
    const password = typeof body.password === 'string' ? body.password : '';
    if (!csrfValid(ctx, body._csrf)) {
      return html(
        ctx,
        403,
        loginPage({ csrf: csrfToken(ctx, true), next, email, error: 'This form has expired. Please sign in again.' }),
      );
    }
    const csrf = csrfToken(ctx);
    if (!email || !password || email.length > 190 || password.length > 1024) {
      return html(
        ctx,
        422,
        loginPage({ csrf, next, email: email.slice(0, 190), error: 'Enter your e-mail and password.' }),
      );
    }
    let wait: number;
    try {
      wait = await throttle.blockedFor(ctx.ip, email);
    } catch (err) {
      deps.logger.error({ err, request_id: ctx.state.requestId }, 'login throttle unavailable');
      return html(
        ctx,
        503,
        loginPage({ csrf, next, email, error: 'Sign-in is unavailable right now. Try again in a minute.' }),
      );
    }
    if (wait > 0) {
      ctx.set('Retry-After', String(wait));
      return html(
        ctx,
        429,
        loginPage({ csrf, next, email, error: `Too many attempts. Try again in ${wait} seconds.` }),
      );
    }
    const user = await verifyPlatformAdmin(deps.knex, email, password);
    if (!user) {
      await throttle
        .failed(ctx.ip, email)
        .catch((err: unknown) => deps.logger.error({ err }, 'login throttle unavailable'));
      deps.logger.warn({ request_id: ctx.state.requestId, ip: ctx.ip }, 'board sign-in refused');
      return html(
        ctx,
        401,
        loginPage({ csrf, next, email, error: 'These credentials do not match a platform admin account.' }),
      );
    }
    await throttle.succeeded(ctx.ip, email).catch(() => undefined);
    const s = await openBoardSession(deps.knex, user.id, { ip: ctx.ip, userAgent: ctx.get('user-agent') });
    setSessionCookie(ctx, s.token, s.expiresAt);
    csrfToken(ctx, true);
    deps.logger.info({ request_id: ctx.state.requestId, user_id: user.id }, 'board sign-in');
    ctx.status = 303;
    ctx.redirect(next);
  };
}

function logoutHandler(deps: AppDeps) {
  return async (ctx: AppContext): Promise<void> => {
    const session = await findBoardSession(deps.knex, sessionCookie(ctx));
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      if (!session) {
        ctx.status = 302;
        ctx.redirect(LOGIN_PATH);
        return;
      }
      return html(ctx, 200, signedInPage({ csrf: csrfToken(ctx), email: session.email }));
    }
    if (ctx.method !== 'POST') return methodNotAllowed(ctx);
    if (!csrfValid(ctx, formBody(ctx)._csrf)) {
      csrfToken(ctx, true);
      return html(
        ctx,
        403,
        errorPage({ title: 'Form expired', message: 'This form has expired. Reload the page and try again.' }),
      );
    }
    if (session) await closeBoardSession(deps.knex, session);
    clearSessionCookie(ctx);
    ctx.status = 303;
    ctx.redirect(LOGIN_PATH);
  };
}
