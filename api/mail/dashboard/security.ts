import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';

/**
 * Browser-side protections of the operator dashboard (issue 3 §5): the session cookie
 * (HttpOnly, SameSite=Strict, Secure on https), CSRF tokens bound to the session (HMAC-SHA256 of
 * the session token under APP_KEY, compared in constant time), a pre-session CSRF token for the
 * login form, security headers, and login throttling (rate-limiter-flexible on Redis).
 */

export const SESSION_COOKIE = 'mbx_session';
export const LOGIN_COOKIE = 'mbx_login';

/** Cookie flags of the dashboard. */
export interface CookieOptions {
  secure: boolean;
}

/**
 * Writes a Set-Cookie header (HttpOnly, SameSite=Strict; Secure when asked or when the request came
 * over https, which behind a TLS-terminating proxy Koa knows from X-Forwarded-Proto when TRUST_PROXY
 * is on). Written by hand so that Secure works behind such a proxy too (Koa's cookies refuse Secure
 * on plain http).
 * @param maxAgeSeconds 0 deletes the cookie
 */
export function setCookie(
  ctx: Koa.Context,
  name: string,
  value: string,
  maxAgeSeconds: number,
  opts: CookieOptions & { path?: string },
): void {
  const parts = [
    `${name}=${value}`,
    `Path=${opts.path ?? '/'}`,
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (maxAgeSeconds <= 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  if (opts.secure || ctx.secure) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

/** Reads a cookie value from the request (no signature; values are tokens checked elsewhere). */
export function readCookie(ctx: Koa.Context, name: string): string | null {
  for (const part of (ctx.get('cookie') || '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim() || null;
  }
  return null;
}

function hmac(appKey: Buffer, purpose: string, value: string): string {
  return createHmac('sha256', appKey).update(`mail-dashboard:${purpose}\0${value}`).digest('base64url');
}

/** The CSRF token of a session: HMAC-SHA256(APP_KEY, session token), base64url. */
export function csrfForSession(appKey: Buffer, sessionToken: string): string {
  return hmac(appKey, 'csrf', sessionToken);
}

/** The CSRF token of the login form, bound to the pre-session cookie value. */
export function csrfForLogin(appKey: Buffer, loginCookie: string): string {
  return hmac(appKey, 'login', loginCookie);
}

/** A fresh pre-session cookie value (128 random bits). */
export function newLoginNonce(): string {
  return randomBytes(16).toString('hex');
}

/** Constant-time comparison of a presented CSRF token with the expected one; false for anything malformed. */
export function csrfMatches(expected: string, presented: unknown): boolean {
  if (typeof presented !== 'string' || presented.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(presented), Buffer.from(expected));
}

/**
 * Security headers of every dashboard response: no framing, a same-origin CSP (inline styles only,
 * no scripts at all), no referrer, no sniffing, and no caching of pages that show private data.
 */
export function securityHeaders(ctx: Koa.Context): void {
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set(
    'Content-Security-Policy',
    "default-src 'self'; script-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

export { LoginThrottle, type LoginThrottleOptions } from '../../../lib/login-throttle.js';
