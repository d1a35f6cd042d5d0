import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { login } from '../../../api/auth/service.js';
import { PERMISSIONS, ROLES, ROLE_PERMISSIONS } from '../../../api/tenants/catalog.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, PASSWORD, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

const uniq = () => randomBytes(4).toString('hex');

/** Issue 8 item 1: /api/roles: built-ins read-only, custom roles, grant rules, a used role stays. */
describe('/api/roles', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;

  const post = (body: Record<string, unknown>, token = a.adminToken) =>
    app.request('POST', '/api/roles', { token, body });
  const roleRow = async (id: number) => {
    const row = await env.knex('roles').where({ id }).first();
    const perms = await env
      .knex('role_permissions as rp')
      .join('permissions as p', 'p.id', 'rp.permission_id')
      .where('rp.role_id', id)
      .orderBy('p.name')
      .pluck('p.name');
    return row ? { ...row, perms } : null;
  };
  const builtinId = async (name: string) =>
    (await env.knex('roles').whereNull('tenant_id').where({ name }).first()).id as number;

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
  });

  it("lists the built-in roles first (with their grants), then the tenant's own, never another's", async () => {
    const mine = (await post({ name: `Mine ${uniq()}`, permissions: ['tickets.view'] })).body.data;
    const theirs = (await post({ name: `Theirs ${uniq()}`, permissions: [] }, b.adminToken)).body.data;
    const res = await app.request('GET', '/api/roles?per_page=100', { token: a.adminToken });
    expect(res.status).to.equal(200);
    const names = res.body.data.map((r: { name: string }) => r.name);
    expect(names.slice(0, 4)).to.deep.equal([...ROLES]);
    expect(names).to.include(mine.name).and.not.include(theirs.name);
    for (const r of res.body.data.slice(0, 4)) {
      expect(r.is_builtin).to.equal(true);
      expect(r.permissions).to.deep.equal([...ROLE_PERMISSIONS[r.name as (typeof ROLES)[number]]].sort());
    }
    const sa = res.body.data[0];
    expect(sa.users_count).to.equal(1); // this tenant's Super Admin only, not every tenant's
    expect(sa.permissions).to.have.length(PERMISSIONS.length);
    const found = await app.request('GET', `/api/roles?search=${encodeURIComponent(mine.name.toUpperCase())}`, {
      token: a.adminToken,
    });
    expect(found.body.data.map((r: { id: number }) => r.id)).to.deep.equal([mine.id]);
    expect(found.body.total).to.equal(1);
  });

  it('creates a custom role (201, audited); names unique in any case, built-in names included', async () => {
    const name = `Billing clerk ${uniq()}`;
    const res = await post({ name: ` ${name} `, permissions: ['invoices.view', 'invoices.manage', 'invoices.view'] });
    expect(res.status).to.equal(201);
    expect(res.body.data).to.include({ name, is_builtin: false, users_count: 0 });
    expect(res.body.data.permissions).to.deep.equal(['invoices.manage', 'invoices.view']);
    const row = await roleRow(res.body.data.id);
    expect(row).to.include({ tenant_id: a.tenant.id });
    expect(row!.perms).to.deep.equal(['invoices.manage', 'invoices.view']);
    const audit = await env.knex('audit_log').where({ action: 'roles.created', subject_id: res.body.data.id }).first();
    expect(audit.after).to.deep.equal({ name, permissions: ['invoices.manage', 'invoices.view'] });
    expect(audit.tenant_id).to.equal(a.tenant.id);

    for (const taken of [name, name.toUpperCase(), 'super admin', 'Technician']) {
      const dup = await post({ name: taken, permissions: [] });
      expect(dup.status, taken).to.equal(409);
      expect(dup.body.code).to.equal('CONFLICT');
    }
    // another tenant may use the same name
    expect((await post({ name, permissions: [] }, b.adminToken)).status).to.equal(201);
    const count = await env.knex('roles').where({ tenant_id: a.tenant.id }).count('* as n');
    for (const [body, field] of [
      [{ name: 'X', permissions: ['invoices.view', 'root.everything'] }, 'permissions.1'],
      [{ name: '', permissions: [] }, 'name'],
      [{ permissions: [] }, 'name'],
      [{ name: 'Y' }, 'permissions'],
      [{ name: 'Z', permissions: 'invoices.view' }, 'permissions'],
    ] as const) {
      const bad = await post(body);
      expect(bad.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(bad.body.errors)).to.include(field);
    }
    expect(await env.knex('roles').where({ tenant_id: a.tenant.id }).count('* as n')).to.deep.equal(count);
  });

  it('refuses to grant permissions the caller lacks, to a new role or one it changes (403 naming them)', async () => {
    const admin = await makeUser(a.tenant.id, 'Administrator');
    const refused = await post({ name: `Files ${uniq()}`, permissions: ['file_manager.admin'] }, admin.token);
    expect(refused.status).to.equal(403);
    expect(refused.body).to.deep.include({ code: 'FORBIDDEN' });
    expect(refused.body.message).to.include('file_manager.admin');
    const small = (await post({ name: `Small ${uniq()}`, permissions: ['users.manage', 'tickets.view'] })).body.data;
    const e = `small-${uniq()}@example.test`;
    await app.request('POST', '/api/users', {
      token: a.adminToken,
      body: { name: 'Small', email: e, password: PASSWORD, roles: [small.id] },
    });
    const token = (await login(env.knex, { email: e, password: PASSWORD })).token;
    // not even onto its own role
    const grow = await app.request('PUT', `/api/roles/${small.id}`, {
      token,
      body: { permissions: ['users.manage', 'tickets.view', 'invoices.manage'] },
    });
    expect(grow.status).to.equal(403);
    expect(grow.body.message).to.include('invoices.manage');
    expect((await roleRow(small.id))!.perms).to.deep.equal(['tickets.view', 'users.manage']);
    // a role carrying a permission the caller lacks may be renamed or trimmed, not widened
    const rich = (await post({ name: `Rich ${uniq()}`, permissions: ['invoices.manage', 'tickets.view'] })).body.data;
    const rename = await app.request('PUT', `/api/roles/${rich.id}`, { token, body: { name: `${rich.name} 2` } });
    expect(rename.status).to.equal(200);
    expect(rename.body.data.permissions).to.deep.equal(['invoices.manage', 'tickets.view']);
    const trim = await app.request('PUT', `/api/roles/${rich.id}`, { token, body: { permissions: ['tickets.view'] } });
    expect(trim.status).to.equal(200);
    expect(trim.body.data.permissions).to.deep.equal(['tickets.view']);
    const audit = await env.knex('audit_log').where({ action: 'roles.updated', subject_id: rich.id }).orderBy('id');
    expect(audit.map((r) => [r.before.permissions, r.after.permissions])).to.deep.equal([
      [
        ['invoices.manage', 'tickets.view'],
        ['invoices.manage', 'tickets.view'],
      ],
      [['invoices.manage', 'tickets.view'], ['tickets.view']],
    ]);
  });

  it('a changed role changes what its holders may do from the next request on', async () => {
    const role = (await post({ name: `Planner ${uniq()}`, permissions: ['tickets.view'] })).body.data;
    const e = `planner-${uniq()}@example.test`;
    await app.request('POST', '/api/users', {
      token: a.adminToken,
      body: { name: 'Planner', email: e, password: PASSWORD, roles: [role.name] },
    });
    const token = (await login(env.knex, { email: e, password: PASSWORD })).token;
    const before = await app.request('GET', '/api/schedules', { token });
    expect(before.status).to.equal(403);
    expect(before.body.message).to.include('schedules.view');
    await app.request('PUT', `/api/roles/${role.id}`, {
      token: a.adminToken,
      body: { permissions: ['tickets.view', 'schedules.view'] },
    });
    expect((await app.request('GET', '/api/schedules', { token })).status).to.equal(200);
  });

  it('keeps the built-in roles read-only (403) and unchanged', async () => {
    for (const name of ROLES) {
      const id = await builtinId(name);
      const before = await roleRow(id);
      const put = await app.request('PUT', `/api/roles/${id}`, {
        token: a.adminToken,
        body: { name: 'Renamed', permissions: [] },
      });
      expect(put.status, name).to.equal(403);
      expect(put.body.code).to.equal('FORBIDDEN');
      expect(put.body.message).to.include('read-only');
      const del = await app.request('DELETE', `/api/roles/${id}`, { token: a.adminToken });
      expect(del.status, name).to.equal(403);
      expect(await roleRow(id)).to.deep.equal(before);
      const shown = await app.request('GET', `/api/roles/${id}`, { token: a.adminToken });
      expect(shown.body.data).to.include({ name, is_builtin: true });
    }
  });

  it('refuses to delete a role a user holds (422, inactive users too), deletes it once free, audited', async () => {
    const role = (await post({ name: `Temp ${uniq()}`, permissions: ['tickets.view'] })).body.data;
    const u = (
      await app.request('POST', '/api/users', {
        token: a.adminToken,
        body: { name: 'T', email: `t-${uniq()}@example.test`, password: PASSWORD, roles: [role.id], is_active: false },
      })
    ).body.data;
    const refused = await app.request('DELETE', `/api/roles/${role.id}`, { token: a.adminToken });
    expect(refused.status).to.equal(422);
    expect(refused.body.code).to.equal('VALIDATION_FAILED');
    expect(refused.body.errors.role[0]).to.match(/in use: 1 user holds it/);
    expect(await roleRow(role.id)).not.to.equal(null);
    await app.request('PUT', `/api/users/${u.id}`, { token: a.adminToken, body: { roles: ['staff'] } });
    const del = await app.request('DELETE', `/api/roles/${role.id}`, { token: a.adminToken });
    expect(del.status).to.equal(200);
    expect(del.body).to.deep.include({ message: 'Role deleted.' });
    expect(del.body.data).to.include({ id: role.id, name: role.name });
    expect(await roleRow(role.id)).to.equal(null);
    const audit = await env.knex('audit_log').where({ action: 'roles.deleted', subject_id: role.id }).first();
    expect(audit.before).to.deep.equal({ name: role.name, permissions: ['tickets.view'] });
    expect((await app.request('GET', `/api/roles/${role.id}`, { token: a.adminToken })).status).to.equal(404);
  });

  it('the database refuses a custom role named like a built-in one (roles_custom_not_builtin)', async () => {
    for (const name of ['Super Admin', 'super admin', 'STAFF']) {
      const err = await env
        .knex('roles')
        .insert({ name, tenant_id: a.tenant.id })
        .then(
          () => null,
          (e: { code?: string; constraint?: string }) => e,
        );
      expect(err, name).to.include({ code: '23514', constraint: 'roles_custom_not_builtin' });
    }
  });

  it("answers 404 for another tenant's role and changes nothing", async () => {
    const theirs = (await post({ name: `Foreign ${uniq()}`, permissions: ['tickets.view'] }, b.adminToken)).body.data;
    const before = await roleRow(theirs.id);
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'Mine now', permissions: [] }],
      ['DELETE', undefined],
    ] as const) {
      const res = await app.request(method, `/api/roles/${theirs.id}`, { token: a.adminToken, body });
      expect(res.status, method).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
    }
    expect(await roleRow(theirs.id)).to.deep.equal(before);
  });
});
