import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../context.js';

/**
 * Cookies and CSRF protection of the bull-board pages (/admin/login, /admin/logout, /admin/queues).
 *
 * CSRF: the double-submit cookie pattern plus an Origin check. GET of a form sets the cookie
 * `isp_board_csrf` (256 random bits, HttpOnly, SameSite=Strict, Path=/admin) when it is missing and
 * puts the same value in a hidden `_csrf` field; a POST is accepted only when field and cookie are
 * equal (constant-time compare) and, when the browser sends an Origin header, its host is ours. A
 * page on another site can neither read the cookie nor make the browser send it (Strict), so it
 * cannot produce a matching pair; the Origin check covers a sibling subdomain that could plant a
 * cookie. The pattern needs no server state, so it works across several web processes. The token
 * rotates at sign-in. bull-board's own JSON API (PUT/POST from its UI) is protected by the
 * SameSite=Lax session cookie (not sent on cross-site requests) and the same Origin check.
 */

/** Cookie holding the bull-board session token (`ispb_...`, HttpOnly, SameSite=Lax, Path=/admin). */
export const SESSION_COOKIE = 'isp_board_session';
/** Cookie holding the CSRF secret (64 hex characters) the board's forms are checked against. */
export const CSRF_COOKIE = 'isp_board_csrf';
const COOKIE_PATH = '/admin';
const TOKEN_SHAPE = /^[0-9a-f]{64}$/;

/** Whether cookies get the Secure flag: an https request, or secureCookies set in the config. */
function secure(ctx: AppContext): boolean {
  const on = ctx.secure || ctx.deps.config.secureCookies === true;
  // Behind a TLS proxy without TRUST_PROXY, Koa thinks the request is plain http and refuses Secure.
  if (on && !ctx.secure) ctx.cookies.secure = true;
  return on;
}

/** Sets the session cookie (HttpOnly, SameSite=Lax, Path=/admin, expiring with the session). */
export function setSessionCookie(ctx: AppContext, token: string, expires: Date): void {
  ctx.cookies.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: COOKIE_PATH,
    expires,
    secure: secure(ctx),
    overwrite: true,
  });
}

/** Removes the session cookie. */
export function clearSessionCookie(ctx: AppContext): void {
  ctx.cookies.set(SESSION_COOKIE, '', {
    httpOnly: true,
    sameSite: 'lax',
    path: COOKIE_PATH,
    expires: new Date(0),
    secure: secure(ctx),
    overwrite: true,
  });
}

/** The session cookie's value, if any. */
export function sessionCookie(ctx: AppContext): string | undefined {
  return ctx.cookies.get(SESSION_COOKIE) || undefined;
}

/**
 * The CSRF token for a form: the cookie's value when it is well formed, else a new one (cookie set).
 * @param rotate force a new token (after sign-in)
 */
export function csrfToken(ctx: AppContext, rotate = false): string {
  const current = ctx.cookies.get(CSRF_COOKIE);
  if (!rotate && current && TOKEN_SHAPE.test(current)) return current;
  const token = randomBytes(32).toString('hex');
  ctx.cookies.set(CSRF_COOKIE, token, {
    httpOnly: true,
    sameSite: 'strict',
    path: COOKIE_PATH,
    secure: secure(ctx),
    overwrite: true,
  });
  return token;
}

/** True when the request carries no Origin header or one naming this host. */
export function sameOrigin(ctx: AppContext): boolean {
  const origin = ctx.get('origin');
  if (!origin) return true;
  try {
    return new URL(origin).host === ctx.host;
  } catch {
    return false;
  }
}

/**
 * Checks a form submission: the `_csrf` field equals the CSRF cookie, and the Origin (if sent) is ours.
 * @param field the submitted `_csrf` value
 */
export function csrfValid(ctx: AppContext, field: unknown): boolean {
  const cookie = ctx.cookies.get(CSRF_COOKIE);
  if (typeof field !== 'string' || !cookie || !TOKEN_SHAPE.test(cookie) || !TOKEN_SHAPE.test(field)) return false;
  return timingSafeEqual(Buffer.from(field), Buffer.from(cookie)) && sameOrigin(ctx);
}
