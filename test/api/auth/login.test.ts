import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, PASSWORD, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

describe('login, me, logout (DESIGN.md §5)', () => {
  let app: TestApp;
  let a: TenantFixture;
  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
  });

  it('logs in with e-mail and password and answers the documented shape', async () => {
    const res = await app.request('POST', '/api/auth/login', {
      body: { email: a.admin.email.toUpperCase(), password: PASSWORD },
    });
    expect(res.status).to.equal(200);
    expect(res.body.token_type).to.equal('Bearer');
    expect(res.body.token).to.match(/^ispl_\d+_[0-9a-f]{72}$/);
    expect(new Date(res.body.expires_at).getTime()).to.be.greaterThan(Date.now());
    expect(res.body.user).to.include({ id: a.admin.id, email: a.admin.email });
    expect(res.body.user.roles).to.deep.equal(['Super Admin']);
    expect(res.body.user.permissions).to.include('settings.manage');
    expect(res.body.tenant).to.include({ id: a.tenant.id, slug: a.tenant.slug });
    const hash = (await env.knex('users').where({ id: a.admin.id }).first()).password_hash;
    expect(hash).to.match(/^\$argon2id\$/);
    expect(app.logs.join('')).not.to.include(PASSWORD);
  });

  it('refuses a wrong password and an unknown e-mail with the same 401', async () => {
    const wrong = await app.request('POST', '/api/auth/login', {
      body: { email: a.admin.email, password: 'nope-nope-nope' },
    });
    const unknown = await app.request('POST', '/api/auth/login', {
      body: { email: 'nobody@example.test', password: PASSWORD },
    });
    expect(wrong.status).to.equal(401);
    expect(unknown.status).to.equal(401);
    expect(wrong.body).to.deep.equal(unknown.body);
    expect(wrong.body.code).to.equal('UNAUTHENTICATED');
  });

  it('validates the payload (422) and malformed JSON (422)', async () => {
    const res = await app.request('POST', '/api/auth/login', { body: { email: 'not-an-email' } });
    expect(res.status).to.equal(422);
    expect(res.body.errors).to.have.keys('email', 'password');
    const bad = await app.request('POST', '/api/auth/login', { raw: '{"email":' });
    expect(bad.status).to.equal(422);
    expect(bad.body.code).to.equal('VALIDATION_FAILED');
  });

  it('me answers the user; logout revokes the token', async () => {
    const { body } = await app.request('POST', '/api/auth/login', {
      body: { email: a.admin.email, password: PASSWORD },
    });
    const me = await app.request('GET', '/api/auth/me', { token: body.token });
    expect(me.status).to.equal(200);
    expect(me.body.user.id).to.equal(a.admin.id);
    const out = await app.request('POST', '/api/auth/logout', { token: body.token });
    expect(out.status).to.equal(200);
    expect((await app.request('GET', '/api/auth/me', { token: body.token })).status).to.equal(401);
  });

  it('refuses an expired login token', async () => {
    const { body } = await app.request('POST', '/api/auth/login', {
      body: { email: a.admin.email, password: PASSWORD },
    });
    const id = Number(body.token.split('_')[1]);
    await env
      .knex('auth_tokens')
      .where({ id })
      .update({ expires_at: new Date(Date.now() - 3600_000) });
    expect((await app.request('GET', '/api/auth/me', { token: body.token })).status).to.equal(401);
  });

  it('answers unknown routes with a JSON 404', async () => {
    const res = await app.request('GET', '/api/nope');
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
  });
});

describe('login throttling (POST /api/auth/login)', () => {
  it('refuses with 429 RATE_LIMITED and Retry-After after the allowed failures, even with the right password; other e-mails unaffected', async () => {
    const app = await startTestApp({
      loginThrottle: { points: 3, durationSeconds: 900, keyPrefix: `t-login-${process.pid}-${Date.now()}` },
    });
    const a = await makeTenant();
    const b = await makeTenant();
    for (let i = 0; i < 3; i++) {
      const r = await app.request('POST', '/api/auth/login', {
        body: { email: a.admin.email, password: 'wrong-password' },
      });
      expect(r.status).to.equal(401);
    }
    const blocked = await app.request('POST', '/api/auth/login', {
      body: { email: a.admin.email, password: PASSWORD },
    });
    expect(blocked.status).to.equal(429);
    expect(blocked.body.code).to.equal('RATE_LIMITED');
    expect(Number(blocked.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(blocked.body).not.to.have.property('token');
    const other = await app.request('POST', '/api/auth/login', { body: { email: b.admin.email, password: PASSWORD } });
    expect(other.status).to.equal(200);
  });

  it('a successful login clears the counter of that IP and e-mail', async () => {
    const app = await startTestApp({
      loginThrottle: { points: 2, durationSeconds: 900, keyPrefix: `t-login2-${process.pid}-${Date.now()}` },
    });
    const a = await makeTenant();
    expect(
      (await app.request('POST', '/api/auth/login', { body: { email: a.admin.email, password: 'wrong-password' } }))
        .status,
    ).to.equal(401);
    expect(
      (await app.request('POST', '/api/auth/login', { body: { email: a.admin.email, password: PASSWORD } })).status,
    ).to.equal(200);
    expect(
      (await app.request('POST', '/api/auth/login', { body: { email: a.admin.email, password: 'wrong-password' } }))
        .status,
    ).to.equal(401);
    expect(
      (await app.request('POST', '/api/auth/login', { body: { email: a.admin.email, password: PASSWORD } })).status,
    ).to.equal(200);
  });
});
