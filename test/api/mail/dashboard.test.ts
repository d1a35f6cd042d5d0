import { expect } from 'chai';
import { open } from '../../../lib/crypto.js';
import { hashToken } from '../../../lib/token.js';
import { addDomain, PANEL_PASSWORD_AAD } from '../../../api/mail/domains/service.js';
import { env } from '../../helpers/env.js';
import {
  Client,
  csrfOf,
  domainName,
  makeOperator,
  OP_PASSWORD,
  startDashboard,
  type DashServer,
} from './dashboard-client.js';

const DOMAIN_FORM = (name: string, extra: Record<string, string> = {}) => ({
  name,
  imap_host: 'imap.example.test',
  imap_port: '993',
  imap_security: 'ssl',
  smtp_host: 'smtp.example.test',
  smtp_port: '465',
  smtp_security: 'ssl',
  ...extra,
});

describe('mail dashboard (issue 3 §5)', () => {
  let dash: DashServer;
  let op: { id: number; email: string };

  before(async () => {
    dash = await startDashboard({
      loginThrottle: { points: 3, durationSeconds: 900, keyPrefix: `t-dash-main-${process.pid}` },
    });
    op = await makeOperator();
  });

  async function signedIn(): Promise<Client> {
    const c = new Client(dash.url);
    const res = await c.login(op.email, OP_PASSWORD);
    expect(res.status).to.equal(303);
    return c;
  }

  describe('sign-in', () => {
    it('redirects every dashboard page to /login without a session, and with a garbage or foreign-kind cookie', async () => {
      for (const path of [
        '/dashboard',
        '/dashboard/domains',
        '/dashboard/domains/new',
        '/dashboard/keys',
        '/dashboard/keys/new',
        '/dashboard/domains/1/mailboxes',
      ]) {
        const res = await new Client(dash.url).get(path);
        expect(res.status, path).to.equal(303);
        expect(res.location, path).to.equal('/login');
      }
      const c = new Client(dash.url);
      c.jar.set('mbx_session', 'mbxs_1_' + 'a'.repeat(72));
      expect((await c.get('/dashboard')).location).to.equal('/login');
    });

    it('refuses a wrong password and an unknown e-mail with the same message and no session', async () => {
      for (const [email, pw] of [
        [op.email, 'wrong password!'],
        ['nobody-here@example.test', OP_PASSWORD],
      ]) {
        const c = new Client(dash.url);
        const res = await c.login(email, pw);
        expect(res.status).to.equal(401);
        expect(res.text).to.include('These credentials do not match our records.');
        expect(c.jar.has('mbx_session')).to.equal(false);
      }
    });

    it('signs in with the right password: HttpOnly SameSite=Strict session cookie, 12 h, not Secure on http; the session row holds only a hash', async () => {
      const c = new Client(dash.url);
      const before = Date.now();
      const res = await c.login(op.email.toUpperCase(), OP_PASSWORD);
      const after = Date.now();
      expect(res.status).to.equal(303);
      expect(res.location).to.equal('/dashboard');
      const cookie = res.setCookies.find((s) => s.startsWith('mbx_session='))!;
      expect(cookie)
        .to.match(/; HttpOnly/)
        .and.match(/; SameSite=Strict/)
        .and.match(/Max-Age=43200/)
        .and.match(/Path=\//);
      expect(cookie).not.to.match(/Secure/);
      const token = c.jar.get('mbx_session')!;
      expect(token).to.match(/^mbxs_\d+_[0-9a-f]{72}$/);
      const row = await env
        .knex('mail_operator_sessions')
        .where({ id: Number(token.split('_')[1]) })
        .first();
      expect(Buffer.compare(row.token_hash, hashToken(token))).to.equal(0);
      expect(JSON.stringify(await env.knex('mail_operator_sessions').select('*'))).not.to.include(token);
      // 12 h from the moment of the login, however long the request took
      expect(new Date(row.expires_at).getTime()).to.be.within(before + 12 * 3600_000, after + 12 * 3600_000);
      const home = await c.get('/dashboard');
      expect(home.status).to.equal(200);
      expect(home.text).to.include(op.email);
    });

    it('marks the session cookie Secure when the base URL is https', async () => {
      const secure = await startDashboard({ mailBaseUrl: 'https://mail.example.test' });
      const c = new Client(secure.url);
      const res = await c.login(op.email, OP_PASSWORD);
      expect(res.status).to.equal(303);
      expect(res.setCookies.find((s) => s.startsWith('mbx_session='))).to.match(/; Secure/);
    });

    it('refuses a sign-in without or with a wrong form token (403) and opens no session', async () => {
      const c = new Client(dash.url);
      await c.get('/login');
      const before = await env.knex('mail_operator_sessions').count({ n: '*' }).first();
      for (const token of [undefined, 'forged-token']) {
        const res = await c.post('/login', { _csrf: token, email: op.email, password: OP_PASSWORD });
        expect(res.status).to.equal(403);
        expect(c.jar.has('mbx_session')).to.equal(false);
      }
      const after = await env.knex('mail_operator_sessions').count({ n: '*' }).first();
      expect(after!.n).to.equal(before!.n);
    });

    it('throttles after 3 failures per IP + e-mail (configured): 429 with Retry-After even for the right password; other e-mails unaffected', async () => {
      const victim = await makeOperator();
      const c = new Client(dash.url);
      for (let i = 0; i < 3; i++) expect((await c.login(victim.email, `wrong-${i}-password`)).status).to.equal(401);
      const blocked = await c.login(victim.email, OP_PASSWORD);
      expect(blocked.status).to.equal(429);
      expect(Number(blocked.headers.get('retry-after'))).to.be.within(1, 900);
      expect(blocked.text).to.include('Too many failed sign-in attempts');
      expect(c.jar.has('mbx_session')).to.equal(false);
      expect((await new Client(dash.url).login(op.email, OP_PASSWORD)).status).to.equal(303);
    });

    it('signs out: the session row is revoked and the old cookie no longer works', async () => {
      const c = await signedIn();
      const token = c.jar.get('mbx_session')!;
      const home = await c.get('/dashboard');
      const res = await c.post('/logout', { _csrf: csrfOf(home.text) });
      expect(res.status).to.equal(303);
      expect(res.location).to.equal('/login?notice=signed-out');
      expect(c.jar.has('mbx_session')).to.equal(false);
      const row = await env
        .knex('mail_operator_sessions')
        .where({ id: Number(token.split('_')[1]) })
        .first();
      expect(row.revoked_at).to.be.instanceOf(Date);
      const stale = new Client(dash.url);
      stale.jar.set('mbx_session', token);
      expect((await stale.get('/dashboard')).location).to.equal('/login');
    });

    it('sends the security headers on every page', async () => {
      const c = await signedIn();
      for (const path of ['/login', '/dashboard', '/dashboard/keys']) {
        const res = await (path === '/login' ? new Client(dash.url) : c).get(path);
        expect(res.headers.get('x-frame-options'), path).to.equal('DENY');
        expect(res.headers.get('content-security-policy'), path)
          .to.include("default-src 'self'")
          .and.include("style-src 'self' 'unsafe-inline'")
          .and.include("frame-ancestors 'none'");
        expect(res.headers.get('referrer-policy'), path).to.equal('no-referrer');
        expect(res.headers.get('cache-control'), path).to.equal('no-store');
        expect(res.text, path).not.to.match(/<script|https?:\/\/(?!127\.0\.0\.1)[a-z]/i);
      }
    });
  });

  describe('domains and mailboxes', () => {
    it('adds a domain with a panel: the password is stored sealed under APP_KEY and shown only as "set"', async () => {
      const c = await signedIn();
      const form = await c.get('/dashboard/domains/new');
      const name = domainName();
      const secret = `Panel-Secret-${Date.now()}`;
      const res = await c.post('/dashboard/domains', {
        _csrf: csrfOf(form.text),
        ...DOMAIN_FORM(name.toUpperCase()),
        panel_type: 'cpanel',
        panel_host: 'panel.example.test',
        panel_port: '',
        panel_user: 'cpuser',
        panel_password: secret,
        panel_ssl: '1',
      });
      expect(res.status).to.equal(303);
      const row = await env.knex('mail_domains').where({ name }).first();
      expect(res.location).to.equal(`/dashboard/domains/${row.id}/mailboxes?notice=domain-created`);
      expect(row).to.include({
        imap_host: 'imap.example.test',
        imap_port: 993,
        smtp_port: 465,
        panel_type: 'cpanel',
        panel_port: 2083,
        panel_user: 'cpuser',
        panel_ssl: true,
      });
      expect(row.panel_password_enc).to.be.a('string').and.not.include(secret);
      expect(JSON.stringify(await env.knex('mail_domains').select('*'))).not.to.include(secret);
      expect(open(dash.appKey, row.panel_password_enc, PANEL_PASSWORD_AAD)).to.equal(secret);
      const list = await c.get('/dashboard/domains');
      expect(list.text).to.include(name).and.include('password set').and.not.include(secret);
      const edit = await c.get(`/dashboard/domains/${row.id}/edit`);
      expect(edit.text).to.include('currently set').and.not.include(secret);
      expect(dash.logs.join('')).not.to.include(secret);
    });

    it('keeps the stored panel password when the edit form leaves it empty, replaces it when given', async () => {
      const c = await signedIn();
      const d = await addDomain(env.knex, dash.appKey, {
        ...DOMAIN_FORM(domainName()),
        panel_type: 'directadmin',
        panel_host: 'da.example.test',
        panel_user: 'admin',
        panel_password: 'first-secret',
      });
      const edit = await c.get(`/dashboard/domains/${d.id}/edit`);
      const base = {
        _csrf: csrfOf(edit.text),
        ...DOMAIN_FORM(d.name),
        imap_host: 'imap2.example.test',
        panel_type: 'directadmin',
        panel_host: 'da.example.test',
        panel_user: 'admin',
        panel_ssl: '1',
      };
      expect((await c.post(`/dashboard/domains/${d.id}`, { ...base, panel_password: '' })).status).to.equal(303);
      let row = await env.knex('mail_domains').where({ id: d.id }).first();
      expect(row.imap_host).to.equal('imap2.example.test');
      expect(open(dash.appKey, row.panel_password_enc, PANEL_PASSWORD_AAD)).to.equal('first-secret');
      expect(
        (await c.post(`/dashboard/domains/${d.id}`, { ...base, panel_password: 'second-secret' })).status,
      ).to.equal(303);
      row = await env.knex('mail_domains').where({ id: d.id }).first();
      expect(open(dash.appKey, row.panel_password_enc, PANEL_PASSWORD_AAD)).to.equal('second-secret');
    });

    it('answers 422 with field errors for bad domain input and writes nothing', async () => {
      const c = await signedIn();
      const form = await c.get('/dashboard/domains/new');
      const cases: [Record<string, string>, string, string][] = [
        [DOMAIN_FORM('not a domain'), 'name', 'must be a domain name'],
        [DOMAIN_FORM(domainName(), { imap_port: '70000' }), 'imap_port', 'must not be greater than 65535'],
        [
          DOMAIN_FORM(domainName(), { smtp_security: 'tls13' }),
          'smtp_security',
          'The selected smtp security is invalid',
        ],
        [DOMAIN_FORM(domainName(), { imap_host: 'bad host!' }), 'imap_host', 'must be a host name or an IP address'],
        [
          DOMAIN_FORM(domainName(), { panel_type: 'cpanel', panel_host: 'p.example.test', panel_user: 'u' }),
          'panel_password',
          'required for cpanel',
        ],
        [
          DOMAIN_FORM(domainName(), {
            panel_type: 'hestia',
            panel_host: 'h.example.test',
            panel_user: 'u',
            panel_ssh_key_path: 'relative/key',
          }),
          'panel_ssh_key_path',
          'absolute file path',
        ],
      ];
      for (const [body, field, message] of cases) {
        const res = await c.post('/dashboard/domains', { _csrf: csrfOf(form.text), ...body });
        expect(res.status, field).to.equal(422);
        expect(res.text, field).to.include(message);
        expect(await env.knex('mail_domains').where({ name: body.name.toLowerCase() }).first(), field).to.equal(
          undefined,
        );
      }
    });

    it('registers mailboxes of a domain (lowercase, unique) and lists them', async () => {
      const c = await signedIn();
      const d = await addDomain(env.knex, dash.appKey, DOMAIN_FORM(domainName()));
      const page = await c.get(`/dashboard/domains/${d.id}/mailboxes`);
      const res = await c.post(`/dashboard/domains/${d.id}/mailboxes`, {
        _csrf: csrfOf(page.text),
        local_part: 'Sales',
        display_name: 'Sales desk',
      });
      expect(res.status).to.equal(303);
      const row = await env
        .knex('mail_mailboxes')
        .where({ email: `sales@${d.name}` })
        .first();
      expect(row).to.include({ domain_id: d.id, local_part: 'sales', display_name: 'Sales desk' });
      const dup = await c.post(`/dashboard/domains/${d.id}/mailboxes`, {
        _csrf: csrfOf(page.text),
        local_part: 'SALES',
      });
      expect(dup.status).to.equal(422);
      expect(dup.text).to.include(`The mailbox sales@${d.name} is already registered.`);
      const bad = await c.post(`/dashboard/domains/${d.id}/mailboxes`, {
        _csrf: csrfOf(page.text),
        local_part: 'a..b',
      });
      expect(bad.status).to.equal(422);
      const list = await c.get(`/dashboard/domains/${d.id}/mailboxes`);
      expect(list.text).to.include(`sales@${d.name}`).and.include('Sales desk');
      expect((await c.get('/dashboard/domains/999999999/mailboxes')).status).to.equal(404);
    });

    it("refuses POSTs without, with a wrong, or with another session's CSRF token: 403 and nothing changed", async () => {
      const c = await signedIn();
      const other = await signedIn();
      const otherToken = csrfOf((await other.get('/dashboard')).text);
      const d = await addDomain(env.knex, dash.appKey, DOMAIN_FORM(domainName()));
      for (const token of [undefined, '', 'x'.repeat(43), otherToken]) {
        const name = domainName();
        const res = await c.post('/dashboard/domains', { _csrf: token, ...DOMAIN_FORM(name) });
        expect(res.status).to.equal(403);
        expect(res.text).to.include('Nothing was changed');
        expect(await env.knex('mail_domains').where({ name }).first()).to.equal(undefined);
        expect(
          (await c.post(`/dashboard/domains/${d.id}/mailboxes`, { _csrf: token, local_part: 'csrf' })).status,
        ).to.equal(403);
        expect(
          (
            await c.post(`/dashboard/domains/${d.id}`, {
              _csrf: token,
              ...DOMAIN_FORM(d.name, { imap_host: 'evil.example.test' }),
            })
          ).status,
        ).to.equal(403);
      }
      expect(await env.knex('mail_mailboxes').where({ domain_id: d.id }).first()).to.equal(undefined);
      expect((await env.knex('mail_domains').where({ id: d.id }).first()).imap_host).to.equal('imap.example.test');
    });
  });
});
