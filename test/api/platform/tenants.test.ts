import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, PASSWORD, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { platformAdminToken } from './support.js';
import { login } from '../../../api/auth/service.js';

const uniq = () => randomBytes(4).toString('hex');

/** Issue 13 items 1-2: platform access and tenants. */
describe('/api/platform/tenants: platform admins create and update tenants', function () {
  this.timeout(30_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  let a: TenantFixture;

  before(async () => {
    app = await startTestApp();
    ops = await platformAdminToken();
    a = await makeTenant();
  });

  it('refuses tenant users (403 FORBIDDEN) and anonymous callers (401)', async () => {
    const r = await app.request('GET', '/api/platform/tenants', { token: a.adminToken });
    expect(r.status).to.equal(403);
    expect(r.body.code ?? r.body.error?.code ?? r.text).to.match(/FORBIDDEN/);
    const put = await app.request('PUT', `/api/platform/tenants/${a.tenant.slug}`, {
      token: a.adminToken,
      body: { name: 'x' },
    });
    expect(put.status).to.equal(403);
    expect((await app.request('GET', '/api/platform/tenants')).status).to.equal(401);
  });

  it('creates a tenant with its first admin (201), audited; the admin can log in', async () => {
    const slug = `isp-${uniq()}`;
    const email = `first-${slug}@example.test`;
    const r = await app.request('POST', '/api/platform/tenants', {
      token: ops.token,
      body: {
        slug,
        name: 'New ISP',
        demo_mode: false,
        modules: ['tickets'],
        timezone: 'Asia/Makassar',
        primary_domain: `${slug}.example.net`,
        admin: { email, password: PASSWORD },
      },
    });
    expect(r.status).to.equal(201);
    expect(r.body.data).to.include({ slug, name: 'New ISP', timezone: 'Asia/Makassar', demo_mode: false });
    expect(r.body.data.primary_domain).to.equal(`${slug}.example.net`);
    expect(r.body.data.modules).to.deep.equal(['tickets']);
    expect(r.text).to.not.include(PASSWORD);
    const { token } = await login(env.knex, { email, password: PASSWORD });
    expect(token).to.be.a('string');
    const audit = await env
      .knex('platform_audit_log')
      .where({ action: 'platform.tenant_create', subject_id: r.body.data.id });
    expect(audit).to.have.length(1);
    expect(audit[0].user_id).to.equal(ops.id);
    expect(JSON.stringify(audit[0].after)).to.not.include(PASSWORD);
  });

  it('creates without an admin; 409 for a taken slug or primary domain', async () => {
    const slug = `bare-${uniq()}`;
    const r = await app.request('POST', '/api/platform/tenants', { token: ops.token, body: { slug, name: 'Bare' } });
    expect(r.status).to.equal(201);
    expect(r.body.data.timezone).to.equal('Asia/Jakarta');
    expect(Number((await env.knex('users').where({ tenant_id: r.body.data.id }).count('* as n'))[0].n)).to.equal(0);
    const again = await app.request('POST', '/api/platform/tenants', { token: ops.token, body: { slug, name: 'X' } });
    expect(again.status).to.equal(409);
    const d = `${slug}.example.org`;
    await app.request('PUT', `/api/platform/tenants/${slug}`, { token: ops.token, body: { primary_domain: d } });
    const dup = await app.request('POST', '/api/platform/tenants', {
      token: ops.token,
      body: { slug: `o-${uniq()}`, name: 'X', primary_domain: d },
    });
    expect(dup.status).to.equal(409);
  });

  it('keeps at most one master tenant: 409 for a second, the master can hand the flag on', async () => {
    await env.knex('tenants').update({ is_master: false }); // tests run one at a time in a shard
    const b = await makeTenant();
    const m = `master-${uniq()}`;
    const r = await app.request('POST', '/api/platform/tenants', {
      token: ops.token,
      body: { slug: m, name: 'Master', is_master: true },
    });
    expect(r.status).to.equal(201);
    expect(r.body.data.is_master).to.equal(true);
    const other = await app.request('PUT', `/api/platform/tenants/${b.tenant.slug}`, {
      token: ops.token,
      body: { is_master: true },
    });
    expect(other.status).to.equal(409);
    expect((await env.knex('tenants').where({ id: b.tenant.id }).first('is_master')).is_master).to.equal(false);
    await app.request('PUT', `/api/platform/tenants/${m}`, { token: ops.token, body: { is_master: false } });
    const moved = await app.request('PUT', `/api/platform/tenants/${b.tenant.slug}`, {
      token: ops.token,
      body: { is_master: true },
    });
    expect(moved.status).to.equal(200);
    expect(moved.body.data.is_master).to.equal(true);
    await env.knex('tenants').where({ id: b.tenant.id }).update({ is_master: false });
  });

  const bad: [string, Record<string, unknown>][] = [
    ['slug', { slug: 'Bad_Slug', name: 'x' }],
    ['slug', { slug: '-lead', name: 'x' }],
    ['slug', { slug: 'a'.repeat(64), name: 'x' }],
    ['name', { slug: 'okslug', name: '' }],
    ['name', { slug: 'okslug' }],
    ['demo_mode', { slug: 'okslug', name: 'x', demo_mode: 'yes' }],
    ['modules', { slug: 'okslug', name: 'x', modules: ['nope'] }],
    ['timezone', { slug: 'okslug', name: 'x', timezone: 'WIB' }],
    ['primary_domain', { slug: 'okslug', name: 'x', primary_domain: 'not a domain' }],
    ['admin', { slug: 'okslug', name: 'x', admin: { email: 'x@example.test', password: 'short' } }],
    ['extra', { slug: 'okslug', name: 'x', extra: 1 }],
  ];
  for (const [field, body] of bad)
    it(`422 for a bad ${field}, nothing saved`, async () => {
      const before = await env.knex('tenants').count('* as n');
      const r = await app.request('POST', '/api/platform/tenants', { token: ops.token, body });
      expect(r.status).to.equal(422);
      expect(await env.knex('tenants').count('* as n')).to.deep.equal(before);
    });

  it('shows and updates by slug or id; the slug is immutable; unknown is 404', async () => {
    const byId = await app.request('GET', `/api/platform/tenants/${a.tenant.id}`, { token: ops.token });
    expect(byId.status).to.equal(200);
    expect(byId.body.data.slug).to.equal(a.tenant.slug);
    const bySlug = await app.request('GET', `/api/platform/tenants/${a.tenant.slug}`, { token: ops.token });
    expect(bySlug.body.data.id).to.equal(a.tenant.id);
    const put = await app.request('PUT', `/api/platform/tenants/${a.tenant.slug}`, {
      token: ops.token,
      body: { name: 'Renamed', timezone: 'Asia/Jayapura' },
    });
    expect(put.status).to.equal(200);
    expect(put.body.data).to.include({ name: 'Renamed', timezone: 'Asia/Jayapura', slug: a.tenant.slug });
    const slug = await app.request('PUT', `/api/platform/tenants/${a.tenant.id}`, {
      token: ops.token,
      body: { slug: 'other' },
    });
    expect(slug.status).to.equal(422);
    for (const ref of ['no-such-tenant', '999999999', 'UPPER', 'a.b'])
      expect((await app.request('GET', `/api/platform/tenants/${ref}`, { token: ops.token })).status).to.equal(404);
    const audit = await env
      .knex('platform_audit_log')
      .where({ action: 'platform.tenant_update', subject_id: a.tenant.id });
    expect(audit).to.have.length(1);
    expect(audit[0].before.name).to.equal(`Tenant ${a.tenant.slug}`);
  });
});
