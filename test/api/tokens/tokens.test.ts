import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, makeIntegrationToken, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { hashToken } from '../../../lib/token.js';

describe('integration token management (document 1)', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
  });

  it('creates a token: 201 {data, token} with the info shape; the plain token is stored nowhere', async () => {
    const res = await app.request('POST', '/api/integrations/api-tokens', {
      token: a.adminToken,
      body: { name: 'CRM', access: 'read_write' },
    });
    expect(res.status).to.equal(201);
    expect(res.body.token).to.match(/^ispi_\d+_[0-9a-f]{72}$/);
    expect(res.body.data).to.include({ name: 'CRM', access: 'read_write', last_used_at: null, expires_at: null });
    expect(res.body.data.abilities).to.deep.equal([`tenant:${a.tenant.id}`, 'read', 'write']);
    expect(res.body.data.created_by).to.deep.equal({
      id: a.admin.id,
      name: `Tenant ${a.tenant.slug} Admin`,
      email: a.admin.email,
    });
    expect(Object.keys(res.body.data).sort()).to.deep.equal([
      'abilities',
      'access',
      'created_at',
      'created_by',
      'expires_at',
      'id',
      'last_used_at',
      'name',
    ]);
    const row = await env.knex('auth_tokens').where({ id: res.body.data.id }).first();
    expect(Buffer.compare(row.token_hash, hashToken(res.body.token))).to.equal(0);
    const dump = JSON.stringify(await env.knex('auth_tokens').select('*'));
    expect(dump).not.to.include(res.body.token);
    expect(app.logs.join('')).not.to.include(res.body.token);
    const list = await app.request('GET', '/api/integrations/api-tokens', { token: a.adminToken });
    expect(list.text).not.to.include(res.body.token);
  });

  it('defaults access to read', async () => {
    const res = await app.request('POST', '/api/integrations/api-tokens', {
      token: a.adminToken,
      body: { name: 'Helpdesk' },
    });
    expect(res.status).to.equal(201);
    expect(res.body.data.access).to.equal('read');
    expect(res.body.data.abilities).to.deep.equal([`tenant:${a.tenant.id}`, 'read']);
  });

  it('answers 422 with field errors for a bad payload', async () => {
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x', access: 'admin' }, 'access'],
      [{ name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
      [{ name: 'x', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: 42 }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await app.request('POST', '/api/integrations/api-tokens', { token: a.adminToken, body });
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(res.body.errors, JSON.stringify(body)).to.have.property(field);
    }
  });

  it("lists every token of the active tenant, including other admins', and none of another tenant", async () => {
    const other = await makeUser(a.tenant.id, 'Administrator');
    const mine = await app.request('POST', '/api/integrations/api-tokens', {
      token: other.token,
      body: { name: 'by other admin' },
    });
    const foreign = await makeIntegrationToken(b);
    const res = await app.request('GET', '/api/integrations/api-tokens', { token: a.adminToken });
    expect(res.status).to.equal(200);
    const ids = res.body.data.map((t: { id: number }) => t.id);
    expect(ids).to.include(mine.body.data.id);
    expect(ids).not.to.include(foreign.data.id);
  });

  it('revokes: 200, then the token gets 401; 404 for unknown or foreign ids', async () => {
    const t = await makeIntegrationToken(a);
    expect((await app.request('GET', '/api/external/v1/health', { token: t.token })).status).to.not.equal(401);
    const foreign = await makeIntegrationToken(b);
    const f = await app.request('DELETE', `/api/integrations/api-tokens/${foreign.data.id}`, { token: a.adminToken });
    expect(f.status).to.equal(404);
    expect((await env.knex('auth_tokens').where({ id: foreign.data.id }).first()).revoked_at).to.equal(null);
    expect(
      (await app.request('DELETE', '/api/integrations/api-tokens/999999999', { token: a.adminToken })).status,
    ).to.equal(404);
    const r = await app.request('DELETE', `/api/integrations/api-tokens/${t.data.id}`, { token: a.adminToken });
    expect(r.status).to.equal(200);
    const after = await app.request('GET', '/api/external/v1/health', { token: t.token });
    expect(after.status).to.equal(401);
    expect(after.body.code).to.equal('UNAUTHENTICATED');
    expect(
      (await app.request('DELETE', `/api/integrations/api-tokens/${t.data.id}`, { token: a.adminToken })).status,
    ).to.equal(404);
  });

  it('refuses integration tokens, garbage and missing tokens with 401 JSON', async () => {
    const t = await makeIntegrationToken(a, 'read_write');
    for (const token of [
      t.token,
      undefined,
      'garbage',
      a.adminToken.slice(0, -1) + (a.adminToken.endsWith('0') ? '1' : '0'),
    ]) {
      for (const [m, p] of [
        ['GET', '/api/integrations/api-tokens'],
        ['POST', '/api/integrations/api-tokens'],
        ['DELETE', `/api/integrations/api-tokens/${t.data.id}`],
      ]) {
        const res = await app.request(m, p, { token, body: m === 'POST' ? { name: 'x' } : undefined });
        expect(res.status, `${m} ${p} ${token}`).to.equal(401);
        expect(res.body).to.deep.equal({ message: 'Unauthenticated.', code: 'UNAUTHENTICATED' });
        expect(res.headers.get('location')).to.equal(null);
      }
    }
  });

  it('refuses users without settings.manage (technician) with 403', async () => {
    const tech = await makeUser(a.tenant.id, 'technician');
    const res = await app.request('GET', '/api/integrations/api-tokens', { token: tech.token });
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('FORBIDDEN');
  });
});
