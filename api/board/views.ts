/**
 * Server-rendered pages of the operator login in front of bull-board (no scripts, no external
 * assets; every interpolated value is HTML-escaped).
 */

/** Escapes text for HTML element content and double-quoted attributes. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** Content-Security-Policy of these pages: inline styles only, forms post to this origin. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15);width:20rem}
h1{font-size:1.25rem;margin:0 0 1rem}label{display:block;margin:.75rem 0 .25rem;font-size:.9rem}
input{width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #bbb;border-radius:4px}
button{margin-top:1rem;width:100%;padding:.6rem;border:0;border-radius:4px;background:#2b59c3;color:#fff;font-size:1rem;cursor:pointer}
.error{background:#fde8e8;color:#9b1c1c;padding:.5rem;border-radius:4px;font-size:.9rem}a{color:#2b59c3}`;

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
  );
}

function errorBox(error?: string): string {
  return error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '';
}

/** The sign-in form (POST /admin/login). */
export function loginPage(v: { csrf: string; next: string; email?: string; error?: string }): string {
  return page(
    'Sign in · Queues',
    `<h1>Queues · operator sign-in</h1>${errorBox(v.error)}
<form method="post" action="/admin/login">
<input type="hidden" name="_csrf" value="${escapeHtml(v.csrf)}"><input type="hidden" name="next" value="${escapeHtml(v.next)}">
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(v.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

/** Shown at /admin/login and /admin/logout to a signed-in operator: open the board or sign out. */
export function signedInPage(v: { csrf: string; email: string; error?: string }): string {
  return page(
    'Signed in · Queues',
    `<h1>Signed in</h1>${errorBox(v.error)}<p>as ${escapeHtml(v.email)}</p>
<p><a href="/admin/queues">Open the queues</a></p>
<form method="post" action="/admin/logout"><input type="hidden" name="_csrf" value="${escapeHtml(v.csrf)}"><button type="submit">Sign out</button></form>`,
  );
}

/** A short error page (expired form, bad method). */
export function errorPage(v: { title: string; message: string }): string {
  return page(
    v.title,
    `<h1>${escapeHtml(v.title)}</h1>${errorBox(v.message)}<p><a href="/admin/login">Back to sign-in</a></p>`,
  );
}
