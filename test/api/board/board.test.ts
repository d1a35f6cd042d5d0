import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, PASSWORD } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { createPlatformAdmin } from '../../../api/tenants/service.js';
import { QUEUE_NAMES } from '../../../jobs/queues.js';
import { hashToken } from '../../../lib/token.js';

/** A minimal browser: a cookie jar (name -> value) and fetch without following redirects. */
class Browser {
  cookies = new Map<string, string>();
  /** Raw Set-Cookie headers of the last response. */
  lastSetCookie: string[] = [];
  constructor(readonly base: string) {}

  async fetch(
    method: string,
    path: string,
    opts: { form?: Record<string, string>; json?: unknown; headers?: Record<string, string> } = {},
  ) {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | URLSearchParams | undefined;
    if (opts.form) body = new URLSearchParams(opts.form);
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(this.base + path, { method, headers, body, redirect: 'manual' });
    this.lastSetCookie = res.headers.getSetCookie();
    for (const c of this.lastSetCookie) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (!value || /expires=Thu, 01 Jan 1970/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, headers: res.headers, text, json };
  }

  /** GET /admin/login and read the CSRF token from the form. */
  async csrf(): Promise<string> {
    const page = await this.fetch('GET', '/admin/login');
    const m = /name="_csrf" value="([0-9a-f]{64})"/.exec(page.text);
    if (!m) throw new Error(`no csrf field in: ${page.text.slice(0, 200)}`);
    return m[1];
  }

  async login(email: string, password: string, extra: Record<string, string> = {}) {
    const csrf = await this.csrf();
    return this.fetch('POST', '/admin/login', { form: { _csrf: csrf, email, password, ...extra } });
  }
}

const uniq = () => randomBytes(4).toString('hex');

describe('bull-board at /admin/queues behind the platform-admin sign-in', () => {
  let app: TestApp;
  let admin: { id: number; email: string };
  const adminPassword = 'platform-secret-pw';

  before(async () => {
    app = await startTestApp();
    admin = await createPlatformAdmin(env.knex, { email: `ops-${uniq()}@example.test`, password: adminPassword });
  });

  it('shows no queue data without a session: HTML pages redirect to the sign-in, the JSON API answers 401', async () => {
    const b = new Browser(app.url);
    for (const path of ['/admin/queues', '/admin/queues/', '/admin/queues/queue/invoice-overdue']) {
      const res = await b.fetch('GET', path);
      expect(res.status, path).to.equal(302);
      expect(res.headers.get('location'), path).to.match(/^\/admin\/login\?next=/);
      expect(res.text, path).not.to.match(/<script|__basePath__/);
    }
    for (const [method, path] of [
      ['GET', '/admin/queues/api/queues'],
      ['GET', '/admin/queues/api/redis/stats'],
      ['PUT', '/admin/queues/api/queues/invoice-overdue/pause'],
      ['POST', '/admin/queues/api/queues/ticket-sla/add'],
    ] as const) {
      const res = await b.fetch(method, path, method === 'GET' ? {} : { json: {} });
      expect(res.status, `${method} ${path}`).to.equal(401);
      expect(res.headers.get('content-type')).to.match(/application\/json/);
      expect(res.json).to.deep.equal({ message: 'Sign in at /admin/login.', code: 'UNAUTHENTICATED' });
      expect(res.headers.get('location')).to.equal(null);
    }
    b.cookies.set('isp_board_session', 'ispb_1_' + 'a'.repeat(72));
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(401);
    const loginToken = await makeTenant();
    b.cookies.set('isp_board_session', loginToken.adminToken);
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(401);
  });

  it('serves the sign-in form with a CSRF field and an HttpOnly SameSite=Strict CSRF cookie', async () => {
    const b = new Browser(app.url);
    const page = await b.fetch('GET', '/admin/login');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    expect(page.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    expect(page.text).to.include('<form method="post" action="/admin/login">');
    const cookie = b.lastSetCookie.find((c) => c.startsWith('isp_board_csrf='))!;
    expect(cookie)
      .to.match(/httponly/i)
      .and.to.match(/samesite=strict/i)
      .and.to.match(/path=\/admin/i);
    expect(page.text).to.include(`value="${b.cookies.get('isp_board_csrf')}"`);
  });

  it("refuses a tenant admin's correct credentials and opens no session", async () => {
    const t = await makeTenant();
    const b = new Browser(app.url);
    const res = await b.login(t.admin.email, PASSWORD);
    expect(res.status).to.equal(401);
    expect(res.text).to.include('These credentials do not match a platform admin account.');
    expect(b.cookies.has('isp_board_session')).to.equal(false);
    expect(
      await env.knex('auth_tokens').where({ user_id: t.admin.id, type: 'board' }).count('* as n').first(),
    ).to.deep.equal({ n: 0 });
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(401);
  });

  it('refuses a wrong password of a platform admin', async () => {
    const b = new Browser(app.url);
    const res = await b.login(admin.email, 'wrong-password');
    expect(res.status).to.equal(401);
    expect(b.cookies.has('isp_board_session')).to.equal(false);
  });

  it('signs a platform admin in: HttpOnly SameSite=Lax cookie, a board token row, and the board lists every queue', async () => {
    const b = new Browser(app.url);
    const before = Date.now();
    const res = await b.login(admin.email.toUpperCase(), adminPassword);
    const after = Date.now();
    expect(res.status).to.equal(303);
    expect(res.headers.get('location')).to.equal('/admin/queues');
    const cookie = b.lastSetCookie.find((c) => c.startsWith('isp_board_session='))!;
    expect(cookie)
      .to.match(/httponly/i)
      .and.to.match(/samesite=lax/i)
      .and.to.match(/path=\/admin/i)
      .and.to.match(/expires=/i);
    const token = b.cookies.get('isp_board_session')!;
    expect(token).to.match(/^ispb_\d+_[0-9a-f]{72}$/);
    const row = await env
      .knex('auth_tokens')
      .where({ id: Number(token.split('_')[1]) })
      .first();
    expect(row).to.include({ type: 'board', user_id: admin.id, tenant_id: null, revoked_at: null });
    expect(Buffer.compare(row.token_hash, hashToken(token))).to.equal(0);
    // 12 h from the moment of the login, however long the request took
    expect(new Date(row.expires_at).getTime()).to.be.within(before + 12 * 3_600_000, after + 12 * 3_600_000);
    expect(JSON.stringify(await env.knex('auth_tokens').select('*'))).not.to.include(token);
    expect(app.logs.join('')).not.to.include(token).and.not.to.include(adminPassword);

    const api = await b.fetch('GET', '/admin/queues/api/queues');
    expect(api.status).to.equal(200);
    const names = (api.json.queues as { name: string }[]).map((q) => q.name);
    expect(names).to.include.members(['invoice-overdue', 'ticket-sla']);
    expect(names).to.have.members([...QUEUE_NAMES]);
    const ui = await b.fetch('GET', '/admin/queues');
    expect(ui.status).to.equal(200);
    expect(ui.headers.get('content-type')).to.match(/text\/html/);
    expect(ui.text)
      .to.include('/admin/queues/')
      .and.to.match(/<script/);
    const script = /src="(static\/js\/[^"]+\.js)"/.exec(ui.text)![1];
    const asset = await b.fetch('GET', `/admin/queues/${script}`);
    expect(asset.status).to.equal(200);
    expect(asset.headers.get('content-type')).to.match(/javascript/);
    expect((await new Browser(app.url).fetch('GET', `/admin/queues/${script}`)).status).to.equal(302);
  });

  it('refuses a sign-in or sign-out with a bad or missing CSRF token (403), leaving the session intact', async () => {
    const b = new Browser(app.url);
    await b.csrf();
    const wrong = await b.fetch('POST', '/admin/login', {
      form: { _csrf: 'f'.repeat(64), email: admin.email, password: adminPassword },
    });
    expect(wrong.status).to.equal(403);
    expect(b.cookies.has('isp_board_session')).to.equal(false);
    const fresh = new Browser(app.url);
    const noCookie = await fresh.fetch('POST', '/admin/login', {
      form: { _csrf: 'a'.repeat(64), email: admin.email, password: adminPassword },
    });
    expect(noCookie.status).to.equal(403);
    const foreignOrigin = new Browser(app.url);
    const csrf = await foreignOrigin.csrf();
    const cross = await foreignOrigin.fetch('POST', '/admin/login', {
      form: { _csrf: csrf, email: admin.email, password: adminPassword },
      headers: { origin: 'https://evil.example' },
    });
    expect(cross.status).to.equal(403);

    expect((await b.login(admin.email, adminPassword)).status).to.equal(303);
    const out = await b.fetch('POST', '/admin/logout', { form: { _csrf: 'e'.repeat(64) } });
    expect(out.status).to.equal(403);
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(200);
  });

  it('refuses cross-origin writes to the board API even with a session', async () => {
    const b = new Browser(app.url);
    expect((await b.login(admin.email, adminPassword)).status).to.equal(303);
    const res = await b.fetch('PUT', '/admin/queues/api/queues/invoice-overdue/pause', {
      json: {},
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).to.equal(403);
    expect(res.json.code).to.equal('FORBIDDEN');
  });

  it('signs out: the session row is revoked and the old cookie no longer opens the board', async () => {
    const b = new Browser(app.url);
    expect((await b.login(admin.email, adminPassword)).status).to.equal(303);
    const token = b.cookies.get('isp_board_session')!;
    const confirm = await b.fetch('GET', '/admin/logout');
    expect(confirm.status).to.equal(200);
    const csrf = /name="_csrf" value="([0-9a-f]{64})"/.exec(confirm.text)![1];
    const out = await b.fetch('POST', '/admin/logout', { form: { _csrf: csrf } });
    expect(out.status).to.equal(303);
    expect(out.headers.get('location')).to.equal('/admin/login');
    expect(b.cookies.has('isp_board_session')).to.equal(false);
    const row = await env
      .knex('auth_tokens')
      .where({ id: Number(token.split('_')[1]) })
      .first();
    expect(row.revoked_at).to.be.instanceOf(Date);
    b.cookies.set('isp_board_session', token);
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(401);
    expect((await b.fetch('GET', '/admin/queues')).status).to.equal(302);
  });

  it('refuses an expired session and a user who is no longer a platform admin', async () => {
    const other = await createPlatformAdmin(env.knex, { email: `ops-${uniq()}@example.test`, password: adminPassword });
    const b = new Browser(app.url);
    expect((await b.login(other.email, adminPassword)).status).to.equal(303);
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(200);
    await env.knex('users').where({ id: other.id }).update({ is_platform_admin: false });
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(401);
    await env.knex('users').where({ id: other.id }).update({ is_platform_admin: true });
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(200);
    const id = Number(b.cookies.get('isp_board_session')!.split('_')[1]);
    await env
      .knex('auth_tokens')
      .where({ id })
      .update({ expires_at: new Date(Date.now() - 3600_000) });
    expect((await b.fetch('GET', '/admin/queues/api/queues')).status).to.equal(401);
  });

  it('throttles failed sign-ins per IP and e-mail: the sixth attempt within a minute gets 429, even with the right password', async () => {
    const victim = await createPlatformAdmin(env.knex, {
      email: `ops-${uniq()}@example.test`,
      password: adminPassword,
    });
    const b = new Browser(app.url);
    for (let i = 0; i < 5; i++)
      expect((await b.login(victim.email, `wrong-${i}`)).status, `attempt ${i + 1}`).to.equal(401);
    const blocked = await b.login(victim.email, adminPassword);
    expect(blocked.status).to.equal(429);
    expect(Number(blocked.headers.get('retry-after'))).to.be.within(1, 60);
    expect(b.cookies.has('isp_board_session')).to.equal(false);
    // another e-mail from the same IP is not affected
    expect((await b.login(admin.email, adminPassword)).status).to.equal(303);
  });

  it('redirects after sign-in only within the board (no open redirect)', async () => {
    const b = new Browser(app.url);
    const ok = await b.login(admin.email, adminPassword, { next: '/admin/queues/queue/ticket-sla' });
    expect(ok.headers.get('location')).to.equal('/admin/queues/queue/ticket-sla');
    for (const next of ['https://evil.example/', '//evil.example', '/admin/queues/../../api/x', '/api/auth/me']) {
      const c = new Browser(app.url);
      const res = await c.login(admin.email, adminPassword, { next });
      expect(res.headers.get('location'), next).to.equal('/admin/queues');
    }
  });
});
