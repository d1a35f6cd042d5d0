import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { login } from '../../../api/auth/service.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, PASSWORD, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

const uniq = () => randomBytes(4).toString('hex');
const email = (tag = 'u') => `${tag}-${uniq()}@example.test`;

/** Issue 8 item 1: /api/users CRUD, the grant rules, the last Super Admin, deactivation. */
describe('/api/users', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;

  const post = (body: Record<string, unknown>, token = a.adminToken) =>
    app.request('POST', '/api/users', { token, body });
  const put = (id: number, body: Record<string, unknown>, token = a.adminToken) =>
    app.request('PUT', `/api/users/${id}`, { token, body });
  const userRow = (id: number) => env.knex('users').where({ id }).first();
  const userCount = async (tenantId: number) =>
    Number((await env.knex('users').where({ tenant_id: tenantId }).count('* as n'))[0].n);

  /** A custom role of the tenant with exactly `permissions`, made through the API by the tenant's Super Admin. */
  async function customRole(f: TenantFixture, permissions: string[]): Promise<{ id: number; name: string }> {
    const res = await app.request('POST', '/api/roles', {
      token: f.adminToken,
      body: { name: `Role ${uniq()}`, permissions },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  }

  /** A user holding `roles` (ids or names), logged in. */
  async function userWith(f: TenantFixture, roles: (number | string)[]) {
    const e = email('holder');
    const res = await post({ name: 'Holder', email: e, password: PASSWORD, roles }, f.adminToken);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return { id: res.body.data.id as number, token: (await login(env.knex, { email: e, password: PASSWORD })).token };
  }

  /** A home base of the tenant, inserted directly; its id. */
  const homeBase = async (tenantId: number) =>
    (
      await env
        .knex('home_bases')
        .insert({
          tenant_id: tenantId,
          name: `Base ${uniq()}`,
          address: 'Jl. Test 1',
          latitude: -6.2,
          longitude: 106.8,
        })
        .returning('id')
    )[0].id as number;

  it('keeps a home base of the tenant; removing the base clears it (foreign key, ON DELETE SET NULL)', async () => {
    const base = await homeBase(a.tenant.id);
    const res = await post({
      name: 'Tech',
      email: email(),
      password: PASSWORD,
      roles: ['technician'],
      home_base_id: base,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.data.home_base_id).to.equal(base);
    await env.knex('home_bases').where({ id: base }).delete();
    expect((await userRow(res.body.data.id)).home_base_id).to.equal(null);
  });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
  });

  it('creates a user: 201 with roles by name and id, no password in the answer, can log in, audited', async () => {
    const staffId = (await env.knex('roles').whereNull('tenant_id').where({ name: 'staff' }).first()).id;
    const e = email('Rina');
    const res = await post({
      name: '  Rina Wijaya ',
      email: e.toUpperCase(),
      password: 'a-long-password',
      phone: '+6281234567890',
      roles: ['technician', staffId, 'TECHNICIAN'],
    });
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({ name: 'Rina Wijaya', email: e.toLowerCase(), phone: '+6281234567890', is_active: true });
    expect(d.home_base_id).to.equal(null);
    expect(d.roles.map((r: { name: string }) => r.name)).to.deep.equal(['technician', 'staff']);
    expect(d.roles.every((r: { is_builtin: boolean }) => r.is_builtin)).to.equal(true);
    expect(d.permissions).to.include.members(['tickets.view', 'invoices.view', 'inventory.view']);
    expect(JSON.stringify(res.body)).not.to.match(/password|a-long-password/);
    const row = await userRow(d.id);
    expect(row.tenant_id).to.equal(a.tenant.id);
    expect(row.password_hash).to.match(/^\$argon2id\$/);
    const session = await login(env.knex, { email: e, password: 'a-long-password' });
    expect(session.user.roles).to.deep.equal(['staff', 'technician']);
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: a.tenant.id, action: 'users.created', subject_id: d.id });
    expect(audit).to.have.length(1);
    expect(audit[0].user_id).to.equal(a.admin.id);
    expect(audit[0].after).to.deep.include({ email: e.toLowerCase(), roles: ['technician', 'staff'], is_active: true });
    expect(JSON.stringify(audit[0])).not.to.include('a-long-password');
    const shown = await app.request('GET', `/api/users/${d.id}`, { token: a.adminToken });
    expect(shown.status).to.equal(200);
    expect(shown.body.data).to.deep.equal(d);
  });

  it('refuses bad bodies with 422 field errors and a taken e-mail with 409, creating nothing', async () => {
    const foreignRole = await customRole(b, ['tickets.view']);
    const foreignBase = await homeBase(b.tenant.id);
    const taken = (await userRow(a.admin.id)).email;
    const ok = { name: 'X', email: email(), password: PASSWORD, roles: ['staff'] };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...ok, name: undefined }, 'name'],
      [{ ...ok, email: 'not-an-email' }, 'email'],
      [{ ...ok, password: 'short' }, 'password'],
      [{ ...ok, phone: '081234567890' }, 'phone'],
      [{ ...ok, phone: '+0812345678' }, 'phone'],
      [{ ...ok, roles: [] }, 'roles'],
      [{ ...ok, roles: undefined }, 'roles'],
      [{ ...ok, roles: ['staff', 'no such role'] }, 'roles.1'],
      [{ ...ok, roles: [foreignRole.id] }, 'roles.0'],
      [{ ...ok, roles: [foreignRole.name] }, 'roles.0'],
      [{ ...ok, home_base_id: foreignBase }, 'home_base_id'],
      [{ ...ok, home_base_id: 2147483647 }, 'home_base_id'],
      [{ ...ok, is_active: 'yes' }, 'is_active'],
    ];
    const before = await userCount(a.tenant.id);
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors), JSON.stringify(body)).to.include(field);
    }
    for (const e of [taken, taken.toUpperCase(), (await userRow(b.admin.id)).email]) {
      const res = await post({ ...ok, email: e });
      expect(res.status, e).to.equal(409);
      expect(res.body.code).to.equal('CONFLICT');
    }
    expect(await userCount(a.tenant.id)).to.equal(before);
  });

  it('lists newest first with search, role and is_active filters, never another tenant’s users', async () => {
    const tag = uniq();
    const clerk = await customRole(a, ['invoices.view']);
    const u1 = (await post({ name: `Ana ${tag}`, email: email(), password: PASSWORD, roles: ['technician'] })).body
      .data;
    const u2 = (await post({ name: `Bob ${tag}`, email: email(), password: PASSWORD, roles: [clerk.id] })).body.data;
    const u3 = (
      await post({ name: `Cut ${tag}`, email: email(), password: PASSWORD, roles: ['staff'], is_active: false })
    ).body.data;
    await post({ name: `Dan ${tag}`, email: email(), password: PASSWORD, roles: ['staff'] }, b.adminToken);
    const list = async (q: string) => {
      const res = await app.request('GET', `/api/users?${q}`, { token: a.adminToken });
      expect(res.status, q).to.equal(200);
      return res.body;
    };
    const ids = (body: { data: { id: number }[] }) => body.data.map((u) => u.id);
    const all = await list(`search=${tag}`);
    expect(ids(all)).to.deep.equal([u3.id, u2.id, u1.id]);
    expect(all).to.include({ total: 3, per_page: 20, current_page: 1, from: 1, to: 3, last_page: 1 });
    expect(ids(await list(`search=${tag}&role=technician`))).to.deep.equal([u1.id]);
    expect(ids(await list(`search=${tag}&role=${clerk.id}`))).to.deep.equal([u2.id]);
    expect(ids(await list(`search=${tag}&role=${encodeURIComponent(clerk.name.toUpperCase())}`))).to.deep.equal([
      u2.id,
    ]);
    expect(ids(await list(`search=${tag}&is_active=false`))).to.deep.equal([u3.id]);
    expect(ids(await list(`search=${tag}&is_active=true&per_page=1&page=2`))).to.deep.equal([u1.id]);
    expect(ids(await list(`search=${u2.email.toUpperCase()}`))).to.deep.equal([u2.id]);
    expect((await list('search=%25')).total).to.equal(0);
    const everyone = await list('per_page=100');
    const tenantIds = await env.knex('users').where({ tenant_id: a.tenant.id }).pluck('id');
    expect(ids(everyone).sort()).to.deep.equal([...tenantIds].sort());
    const bad = await app.request('GET', '/api/users?is_active=maybe&per_page=500', { token: a.adminToken });
    expect(bad.status).to.equal(422);
    expect(Object.keys(bad.body.errors)).to.include.members(['is_active', 'per_page']);
  });

  it('PUT changes the fields given (password write-only), audited; a foreign id is 404, unchanged', async () => {
    const u = (await post({ name: 'Old', email: email(), password: PASSWORD, roles: ['staff'] })).body.data;
    const e = email('new');
    const res = await put(u.id, {
      name: 'New',
      email: e,
      phone: '+628111222333',
      roles: ['technician'],
      password: 'another-pass',
    });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ name: 'New', email: e, phone: '+628111222333', is_active: true });
    expect(res.body.data.roles.map((r: { name: string }) => r.name)).to.deep.equal(['technician']);
    expect((await login(env.knex, { email: e, password: 'another-pass' })).user.id).to.equal(u.id);
    const keep = await put(u.id, { phone: null });
    expect(keep.body.data).to.include({ name: 'New', email: e, phone: null });
    const audit = await env.knex('audit_log').where({ action: 'users.updated', subject_id: u.id }).orderBy('id');
    expect(audit).to.have.length(2);
    expect(audit[0].before).to.include({ name: 'Old', email: u.email });
    expect(audit[0].after).to.include({ name: 'New', password_changed: true, sessions_revoked: 0 });
    expect(audit[1].after).to.include({ password_changed: false });
    expect(JSON.stringify(audit)).not.to.include('another-pass');

    const before = await userRow(u.id);
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'Hijack', password: 'hijacked-password', is_active: false }],
    ] as const) {
      const r = await app.request(method, `/api/users/${u.id}`, { token: b.adminToken, body });
      expect(r.status, method).to.equal(404);
      expect(r.body.code).to.equal('NOT_FOUND');
    }
    expect(await userRow(u.id)).to.deep.equal(before);
    const dup = await put(u.id, { email: (await userRow(a.admin.id)).email });
    expect(dup.status).to.equal(409);
  });

  it('refuses to grant what the caller lacks: roles with foreign permissions are 403 naming them', async () => {
    const small = await customRole(a, ['users.manage', 'tickets.view', 'customers.view']);
    const manager = await userWith(a, [small.id]);
    const narrow = await customRole(a, ['tickets.view']);
    const before = await userCount(a.tenant.id);
    const refused = await post({ name: 'S', email: email(), password: PASSWORD, roles: ['staff'] }, manager.token);
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('FORBIDDEN');
    expect(refused.body.message).to.include('invoices.view').and.include('paypoint.view');
    expect(await userCount(a.tenant.id)).to.equal(before);
    const allowed = await post({ name: 'N', email: email(), password: PASSWORD, roles: [narrow.id] }, manager.token);
    expect(allowed.status).to.equal(201);
    const id = allowed.body.data.id;
    const upgrade = await put(id, { roles: [narrow.id, 'Administrator'] }, manager.token);
    expect(upgrade.status).to.equal(403);
    expect(upgrade.body.message).to.include('settings.manage');
    expect((await app.request('GET', `/api/users/${id}`, { token: a.adminToken })).body.data.roles).to.have.length(1);
    // the caller cannot touch a user holding more than itself (a password reset would be a way in)
    const staff = await userWith(a, ['staff']);
    const takeover = await put(staff.id, { password: 'taken-over-password' }, manager.token);
    expect(takeover.status).to.equal(403);
    expect(takeover.body.message).to.include('invoices.view');
    // nor itself gain what it lacks
    const self = await put(manager.id, { roles: [small.id, 'staff'] }, manager.token);
    expect(self.status).to.equal(403);
  });

  it('only a Super Admin grants Super Admin or changes a Super Admin', async () => {
    const admin = await makeUser(a.tenant.id, 'Administrator');
    const body = { name: 'SA', email: email(), password: PASSWORD, roles: ['Super Admin'] };
    const refused = await post(body, admin.token);
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.equal('Only a Super Admin can grant the Super Admin role.');
    const promote = await put(admin.id, { roles: ['Administrator', 'Super Admin'] }, admin.token);
    expect(promote.status).to.equal(403);
    const change = await put(a.admin.id, { password: 'i-own-you-now' }, admin.token);
    expect(change.status).to.equal(403);
    expect(change.body.message).to.equal('Only a Super Admin can change a Super Admin.');
    const created = await post(body);
    expect(created.status).to.equal(201);
    expect(created.body.data.permissions).to.include('file_manager.admin');
    // an Administrator manages the others
    const tech = await makeUser(a.tenant.id, 'technician');
    expect((await put(tech.id, { roles: ['staff'] }, admin.token)).status).to.equal(200);
  });

  it('keeps the last active Super Admin: no deactivation or demotion, until another one exists', async () => {
    const f = await makeTenant();
    const off = await app.request('PUT', `/api/users/${f.admin.id}`, {
      token: f.adminToken,
      body: { is_active: false },
    });
    expect(off.status).to.equal(422);
    expect(off.body.errors.is_active[0]).to.match(/last active Super Admin/);
    const demote = await app.request('PUT', `/api/users/${f.admin.id}`, {
      token: f.adminToken,
      body: { roles: ['Administrator'] },
    });
    expect(demote.status).to.equal(422);
    expect(Object.keys(demote.body.errors)).to.deep.equal(['roles']);
    expect((await userRow(f.admin.id)).is_active).to.equal(true);
    // an inactive Super Admin does not count
    const second = await post(
      { name: 'SA2', email: email(), password: PASSWORD, roles: ['Super Admin'], is_active: false },
      f.adminToken,
    );
    expect(second.status).to.equal(201);
    expect(
      (await app.request('PUT', `/api/users/${f.admin.id}`, { token: f.adminToken, body: { is_active: false } }))
        .status,
    ).to.equal(422);
    expect((await put(second.body.data.id, { is_active: true }, f.adminToken)).status).to.equal(200);
    const now = await app.request('PUT', `/api/users/${f.admin.id}`, {
      token: f.adminToken,
      body: { roles: ['Administrator'] },
    });
    expect(now.status).to.equal(200);
    expect(now.body.data.roles.map((r: { name: string }) => r.name)).to.deep.equal(['Administrator']);
  });

  it('two Super Admins deactivating each other at once: exactly one deactivation lands', async () => {
    const f = await makeTenant();
    const e = email('sa2');
    const sa2 = (
      await app.request('POST', '/api/users', {
        token: f.adminToken,
        body: { name: 'SA2', email: e, password: PASSWORD, roles: ['Super Admin'] },
      })
    ).body.data;
    const sa2Token = (await login(env.knex, { email: e, password: PASSWORD })).token;
    const [r1, r2] = await Promise.all([
      app.request('PUT', `/api/users/${sa2.id}`, { token: f.adminToken, body: { is_active: false } }),
      app.request('PUT', `/api/users/${f.admin.id}`, { token: sa2Token, body: { is_active: false } }),
    ]);
    const statuses = [r1.status, r2.status].sort();
    expect(statuses[0]).to.equal(200);
    // the loser either waited for the lock (422: it would remove the last one) or its session was already gone (401)
    expect([401, 422]).to.include(statuses[1]);
    const active = await env.knex('users').whereIn('id', [f.admin.id, sa2.id]).where({ is_active: true });
    expect(active).to.have.length(1);
  });

  it('deactivation revokes the sessions at once (401) and refuses login; reactivation lets in', async () => {
    const e = email('leaver');
    const u = (await post({ name: 'Leaver', email: e, password: PASSWORD, roles: ['technician'] })).body.data;
    const t1 = (await login(env.knex, { email: e, password: PASSWORD })).token;
    const t2 = (await login(env.knex, { email: e, password: PASSWORD })).token;
    expect((await app.request('GET', '/api/auth/me', { token: t1 })).status).to.equal(200);
    const res = await put(u.id, { is_active: false });
    expect(res.status).to.equal(200);
    expect(res.body.data.is_active).to.equal(false);
    for (const t of [t1, t2]) {
      const me = await app.request('GET', '/api/auth/me', { token: t });
      expect(me.status).to.equal(401);
      expect(me.body.code).to.equal('UNAUTHENTICATED');
    }
    const open = await env.knex('auth_tokens').where({ user_id: u.id }).whereNull('revoked_at');
    expect(open).to.have.length(0);
    const refused = await app.request('POST', '/api/auth/login', { body: { email: e, password: PASSWORD } });
    expect(refused.status).to.equal(401);
    expect(refused.body.message).to.equal('This account is deactivated.');
    const wrong = await app.request('POST', '/api/auth/login', { body: { email: e, password: 'wrong-password' } });
    expect(wrong.body.message).to.equal('These credentials do not match our records.');
    const audit = await env.knex('audit_log').where({ action: 'users.updated', subject_id: u.id }).first();
    expect(audit.before.is_active).to.equal(true);
    expect(audit.after).to.include({ is_active: false, sessions_revoked: 2 });
    // a token that slipped through (e.g. a login racing the deactivation) is refused as well
    await env.knex('auth_tokens').where({ user_id: u.id }).update({ revoked_at: null });
    expect((await app.request('GET', '/api/auth/me', { token: t1 })).status).to.equal(401);
    expect((await put(u.id, { is_active: true })).status).to.equal(200);
    const back = await app.request('POST', '/api/auth/login', { body: { email: e, password: PASSWORD } });
    expect(back.status).to.equal(200);
  });
});
