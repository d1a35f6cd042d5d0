/**
 * HTML building for the server-rendered operator dashboard (issue 3 §5): a tagged template that
 * escapes every interpolated value unless it is already SafeHtml, and the page layout. No external
 * assets; one small inline style sheet (allowed by the CSP's style-src 'unsafe-inline').
 */

/** A fragment of markup that has already been escaped (or is a trusted constant). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESC: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for use in element content and in quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"'`]/g, (c) => ESC[c]);
}

function render(v: unknown): string {
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === null || v === undefined || v === false) return '';
  return escapeHtml(String(v));
}

/**
 * Tagged template: `html\`<td>${name}</td>\`` escapes `name`; nested html`` fragments and arrays of
 * them are inserted as they are; null, undefined and false render as nothing.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

const CSS = `
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2433;background:#f4f6fa}
header{background:#1d2433;color:#fff;padding:.7rem 1.5rem;display:flex;gap:1.5rem;align-items:center}
header a{color:#cfd8ea;text-decoration:none}header a:hover{color:#fff}header .brand{font-weight:600;color:#fff;margin-right:auto}
header form{margin:0}header button{background:none;border:1px solid #56607a;color:#cfd8ea;padding:.25rem .7rem;border-radius:4px;cursor:pointer}
main{max-width:1240px;margin:1.5rem auto;padding:0 1.5rem}h1{font-size:1.5rem;margin:.2rem 0 1rem}h2{font-size:1.15rem;margin:1.5rem 0 .6rem}
.card{background:#fff;border:1px solid #dfe3ec;border-radius:8px;padding:1.2rem 1.4rem;margin-bottom:1.2rem}
table{width:100%;border-collapse:collapse;background:#fff;border:1px solid #dfe3ec;border-radius:8px;overflow:hidden}
th,td{text-align:left;padding:.55rem .7rem;border-bottom:1px solid #eceff5;vertical-align:top}th{background:#f0f2f7;font-weight:600;font-size:.85rem;color:#4a5470}
label{display:block;font-weight:600;margin:.8rem 0 .25rem}.hint{font-weight:400;color:#65708a;font-size:.85rem}
input[type=text],input[type=email],input[type=password],input[type=number],select{width:100%;max-width:420px;padding:.45rem .6rem;border:1px solid #c4cad8;border-radius:5px;font:inherit}
input[readonly]{background:#eef0f5;color:#4a5470}
fieldset{border:1px solid #dfe3ec;border-radius:6px;margin:1rem 0;padding:.4rem 1rem 1rem}legend{font-weight:600;padding:0 .3rem}
.check{font-weight:400;display:flex;gap:.5rem;align-items:flex-start;margin:.4rem 0}.check input{margin-top:.25rem}
.btn{display:inline-block;background:#2f5bd3;color:#fff;border:0;border-radius:5px;padding:.5rem 1rem;font:inherit;cursor:pointer;text-decoration:none;margin-top:1rem}
.btn.secondary{background:#e6e9f1;color:#1d2433}.btn.danger{background:#c6283b}.btn.small{padding:.2rem .6rem;margin:0;font-size:.85rem}
.error{color:#b3261e;font-size:.88rem;margin:.2rem 0}.alert{padding:.7rem 1rem;border-radius:6px;margin-bottom:1rem}
.alert.err{background:#fde8e8;border:1px solid #f3b5b5}.alert.ok{background:#e6f6ea;border:1px solid #a9dcb6}.alert.warn{background:#fff6de;border:1px solid #efd48a}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.key{display:block;background:#1d2433;color:#9ef0b0;padding:1rem;border-radius:6px;word-break:break-all;font-size:1rem;user-select:all}
.tag{display:inline-block;background:#e8edfb;color:#2f4aa0;border-radius:10px;padding:0 .5rem;margin:0 .2rem .2rem 0;font-size:.82rem}
.nowrap{white-space:nowrap}.muted{color:#65708a}.revoked{color:#b3261e;font-weight:600}.active{color:#237a3b;font-weight:600}
.stats{display:flex;gap:1rem;flex-wrap:wrap}.stat{flex:1;min-width:180px}.stat b{display:block;font-size:1.8rem}
.login{max-width:400px;margin:4rem auto}
`;

/** What the layout needs to know about the signed-in operator (absent on the login page). */
export interface LayoutSession {
  operatorEmail: string;
  csrf: string;
}

/**
 * A complete page.
 * @param title page title (escaped)
 * @param body page content
 * @param session the signed-in operator (adds the navigation and the logout form)
 */
export function layout(title: string, body: SafeHtml, session?: LayoutSession): string {
  const nav = session
    ? html`<header>
        <span class="brand">Mailbox API</span> <a href="/dashboard">Overview</a><a href="/dashboard/domains">Domains</a
        ><a href="/dashboard/keys">API keys</a>
        <span class="muted">${session.operatorEmail}</span>
        <form method="post" action="/logout">${csrfField(session.csrf)}<button type="submit">Sign out</button></form>
      </header>`
    : html`<header><span class="brand">Mailbox API</span></header>`;
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>${title} · Mailbox API</title>
        <style>
          ${new SafeHtml(CSS)}
        </style>
      </head>
      <body>
        ${nav}
        <main>${body}</main>
      </body>
    </html>`.value;
}

/** The hidden CSRF input every state-changing form carries. */
export function csrfField(token: string): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${token}" />`;
}

/** Field errors under an input (Laravel layout: field -> reasons). */
export function fieldErrors(errors: Record<string, string[]> | undefined, field: string): SafeHtml {
  const list = errors?.[field];
  return list?.length ? html`${list.map((m) => html`<p class="error">${m}</p>`)}` : html``;
}

/** A banner for a fixed notice (never reflects request text). */
export function notice(kind: 'ok' | 'err' | 'warn', text: string | null | undefined): SafeHtml {
  return text ? html`<div class="alert ${kind}" role="status">${text}</div>` : html``;
}

/** A timestamp as "2026-11-21 06:00 UTC" (or a dash). */
export function when(iso: string | null | undefined, none = 'never'): string {
  return iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : none;
}
