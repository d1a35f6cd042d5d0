import { expect } from 'chai';
import { webRoutes } from '../../../api/routes.js';
import { PERMISSIONS, MODULES, ROLE_PERMISSIONS, ROLES } from '../../../api/tenants/catalog.js';
import { DEMO_BLOCKED_ACTIONS, isDemoBlocked } from '../../../api/middleware/demo-guard.js';
import { issueToken, LOGIN_TTL_MS } from '../../../api/auth/service.js';
import { hashPassword } from '../../../api/auth/service.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, PASSWORD, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

/** Koa path -> a concrete path (every parameter a digit id of nothing). */
const concrete = (p: string) => p.replace(/:[A-Za-z_]+/g, '2147483000');

/**
 * Row counts (and the newest updated_at where the table has one) of the tables a refused request
 * could touch, in one query (two per test, hundreds of tests).
 */
async function snapshot(tenantId: number) {
  const { rows } = await env.knex.raw(
    `SELECT ${['tickets', 'customers', 'invoices', 'audit_log', 'auth_tokens']
      .map((t) => {
        const u = t === 'audit_log' ? '' : `, 'u', max(updated_at)`;
        return `(SELECT json_build_object('n', count(*)::int${u}) FROM ${t} WHERE tenant_id = :id) AS ${t}`;
      })
      .join(', ')}`,
    { id: tenantId },
  );
  return rows[0] as Record<string, unknown>;
}

/** PASSWORD's argon2id hash, computed once: every user of this file shares it. */
let passwordHash: Promise<string> | undefined;
/** Login tokens by tenant and permission set: routes guarded by the same permission share users. */
const tokens = new Map<string, Promise<string>>();

/** A user of the tenant with a custom role holding exactly `permissions`; returns its login token. */
function userWith(tenantId: number, permissions: readonly string[]): Promise<string> {
  const key = `${tenantId}:${[...permissions].sort().join(',')}`;
  if (!tokens.has(key)) tokens.set(key, newUserWith(tenantId, permissions));
  return tokens.get(key)!;
}

async function newUserWith(tenantId: number, permissions: readonly string[]): Promise<string> {
  const tag = Math.random().toString(36).slice(2, 10);
  const [role] = await env
    .knex('roles')
    .insert({ name: `custom-${tag}`, tenant_id: tenantId })
    .returning('id');
  if (permissions.length) {
    const ids = await env
      .knex('permissions')
      .whereIn('name', [...permissions])
      .pluck('id');
    await env.knex('role_permissions').insert(ids.map((id: number) => ({ role_id: role.id, permission_id: id })));
  }
  const email = `guard-${tag}@example.test`;
  const [u] = await env
    .knex('users')
    .insert({
      tenant_id: tenantId,
      name: 'Guard',
      email,
      password_hash: await (passwordHash ??= hashPassword(PASSWORD)),
    })
    .returning('id');
  await env.knex('user_roles').insert({ user_id: u.id, role_id: role.id });
  // the login token login() would issue, without its argon2id check (dozens of users here)
  const expires_at = new Date(Date.now() + LOGIN_TTL_MS);
  return (await issueToken(env.knex, 'login', { tenant_id: tenantId, user_id: u.id, name: 'login', expires_at })).token;
}

/**
 * Permission x route and module x route tables generated from the web route table (DESIGN.md §10):
 * every route with a permission refuses a user without it with 403 FORBIDDEN naming it; every route
 * of a module answers 403 module_disabled when the tenant switched it off; neither changes anything.
 */
describe('route guards generated from the route table (permissions, module switches, demo guard)', () => {
  let app: TestApp;
  let a: TenantFixture;
  const guarded = webRoutes.filter((r) => r.permission);
  const moduled = webRoutes.filter((r) => r.module);

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
  });

  it('the catalogue holds every DESIGN §10 identifier, the roles grant only catalogue permissions, routes name only those', () => {
    for (const p of [
      'finance.manage',
      'inventory.view',
      'inventory.manage',
      'partners.view',
      'partners.manage',
      'app_builder.manage',
      'wabot.manage',
      'email.manage',
      'customers.view',
      'customers.manage',
      'customers.import',
      'network.manage',
      'tickets.view',
      'tickets.update',
      'tickets.assign',
      'users.manage',
      'sales.view',
      'settings.view',
      'account.security',
      'file_manager.admin',
    ]) {
      expect(PERMISSIONS, p).to.include(p);
    }
    expect(ROLE_PERMISSIONS['Super Admin']).to.deep.equal(PERMISSIONS);
    for (const role of ROLES)
      for (const p of ROLE_PERMISSIONS[role]) expect(PERMISSIONS, `${role}: ${p}`).to.include(p);
    for (const r of webRoutes) {
      if (r.permission) expect(PERMISSIONS).to.include(r.permission);
      if (r.module) expect(MODULES).to.include(r.module);
      if (r.demoAction) expect(DEMO_BLOCKED_ACTIONS).to.include(r.demoAction);
    }
    expect(guarded.length).to.be.greaterThan(3);
    expect(moduled.length).to.be.greaterThan(0);
  });

  it('the permissions table in the database is the catalogue', async () => {
    const names = await env.knex('permissions').pluck('name');
    expect([...names].sort()).to.deep.equal([...PERMISSIONS].sort());
  });

  for (const r of webRoutes.filter((x) => x.permission)) {
    it(`${r.method.toUpperCase()} ${r.path}: 403 FORBIDDEN naming ${r.permission} without it, nothing changed`, async () => {
      const token = await userWith(
        a.tenant.id,
        PERMISSIONS.filter((p) => p !== r.permission),
      );
      const before = await snapshot(a.tenant.id);
      const res = await app.request(r.method.toUpperCase(), concrete(r.path), { token, body: r.body ? {} : undefined });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('FORBIDDEN');
      expect(res.body.message).to.include(r.permission!);
      expect(await snapshot(a.tenant.id)).to.deep.equal(before);
      const allowed = await userWith(a.tenant.id, [r.permission!]);
      const ok = await app.request(r.method.toUpperCase(), concrete(r.path), {
        token: allowed,
        body: r.body ? {} : undefined,
      });
      expect(ok.body?.message ?? '', 'the permission holder passes the permission check').not.to.include(r.permission!);
    });
  }

  /** One tenant per module (its routes run one after the other and switch it back on), one demo tenant. */
  const moduleTenants = new Map<string, Promise<TenantFixture>>();
  let demoTenant: Promise<TenantFixture> | undefined;

  for (const r of moduled) {
    it(`${r.method.toUpperCase()} ${r.path}: 403 module_disabled when ${r.module} is switched off, nothing changed`, async () => {
      if (!moduleTenants.has(r.module!)) moduleTenants.set(r.module!, makeTenant());
      const t = await moduleTenants.get(r.module!)!;
      await env
        .knex('tenants')
        .where({ id: t.tenant.id })
        .update({ modules: JSON.stringify(MODULES.filter((m) => m !== r.module)) });
      const before = await snapshot(t.tenant.id);
      const res = await app.request(r.method.toUpperCase(), concrete(r.path), {
        token: t.adminToken,
        body: r.body ? {} : undefined,
      });
      expect(res.status).to.equal(403);
      expect(res.body).to.deep.equal({
        message: `The ${r.module} module is disabled for this tenant.`,
        code: 'module_disabled',
      });
      expect(await snapshot(t.tenant.id)).to.deep.equal(before);
      await env
        .knex('tenants')
        .where({ id: t.tenant.id })
        .update({ modules: JSON.stringify([...MODULES]) });
      const on = await app.request(r.method.toUpperCase(), concrete(r.path), {
        token: t.adminToken,
        body: r.body ? {} : undefined,
      });
      expect(on.body.code).not.to.equal('module_disabled');
    });
  }

  for (const r of webRoutes.filter((x) => isDemoBlocked(x.demoAction) && x.auth === 'login')) {
    it(`${r.method.toUpperCase()} ${r.path}: 403 demo_guard_blocked on a demo tenant, nothing changed`, async () => {
      const t = await (demoTenant ??= makeTenant({ demo: true }));
      const before = await snapshot(t.tenant.id);
      const res = await app.request(r.method.toUpperCase(), concrete(r.path), {
        token: t.adminToken,
        body: r.body ? {} : undefined,
      });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('demo_guard_blocked');
      expect(res.body.message).to.include(r.demoAction!);
      expect(await snapshot(t.tenant.id)).to.deep.equal(before);
    });
  }

  it('path ids match digits only: /api/tickets/abc and /api/tickets/0x1 are 404 route-not-found, never the ticket', async () => {
    for (const bad of ['abc', '0x1', '1.0', '%201', '1e3']) {
      const res = await app.request('PATCH', `/api/tickets/${bad}`, { token: a.adminToken, body: { status: 'open' } });
      expect(res.status, bad).to.equal(404);
      expect(res.body).to.deep.equal({ message: 'Route not found.', code: 'NOT_FOUND' });
    }
  });
});

describe('module switches stored per tenant (api/tenants/service.ts setModule)', () => {
  it('switches one module off and on again for one tenant only, in catalogue order', async () => {
    const { setModule } = await import('../../../api/tenants/service.js');
    const t1 = await makeTenant();
    const t2 = await makeTenant();
    const off = await setModule(env.knex, t1.tenant.slug, 'sales', false);
    expect(off).to.deep.equal(MODULES.filter((m) => m !== 'sales'));
    expect((await env.knex('tenants').where({ id: t2.tenant.id }).first()).modules).to.deep.equal([...MODULES]);
    expect(await setModule(env.knex, t1.tenant.id, 'sales', true)).to.deep.equal([...MODULES]);
  });
});
