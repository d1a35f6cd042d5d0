import { expect } from 'chai';
import { webRoutes } from '../../../api/routes.js';
import { ROLE_PERMISSIONS, ROLES } from '../../../api/tenants/catalog.js';
import { seedDemo } from '../../../db/seeds/demo.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

/**
 * Issue 8 "Tests", generated from the web route table like route-guards.test.ts: every admin route
 * x built-in role -> allowed or 403 as the role's grants say; x a bad or missing token -> 401;
 * x another tenant's record in the path -> 404, nothing changed.
 */

/** The table behind a path's first `:id`, for the foreign-id rows (a new resource adds its line). */
const ID_TABLES: Record<string, string> = {
  '/api/users/:id': 'users',
  '/api/roles/:id': 'roles',
  '/api/packages/:id': 'packages',
  '/api/olts/:id': 'olts',
  '/api/onus/:id': 'onus',
  '/api/nas/:id': 'nas',
  '/api/home-bases/:id': 'home_bases',
  '/api/schedules/:id': 'schedules',
  '/api/tickets/:id': 'tickets',
  '/api/customers/:id': 'customers',
  '/api/invoices/:id': 'invoices',
  '/api/invoices/billing-runs/:id': 'billing_runs',
  '/api/integrations/api-tokens/:id': 'auth_tokens',
  '/api/communications/:id': 'communication_messages',
  '/api/android-apk/configs/:appType': 'apk_app_configs',
  '/api/android-apk/builds/:id': 'apk_builds',
};

const concrete = (p: string, id: number | string = 2147483000) =>
  p.replace(/:[A-Za-z_]+/, String(id)).replace(/:[A-Za-z_]+/g, '2147483000');
const adminRoutes = webRoutes.filter((r) => r.auth === 'login' && r.path.startsWith('/api/'));

/** Row count and newest update of a table for a tenant (what a refused request must leave alone). */
async function state(table: string, tenantId: number) {
  return env
    .knex(table)
    .where({ tenant_id: tenantId })
    .select(env.knex.raw('count(*)::int AS n, max(updated_at) AS u'))
    .first();
}

describe('route table x roles, tokens and foreign ids (issue 8)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  const tokens: Record<string, string> = {};

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    await seedDemo(env.knex, { tenant: b.tenant.slug });
    // records the seed of a non-demo tenant has none of
    await env.knex('roles').insert({ tenant_id: b.tenant.id, name: 'Other tenant role' });
    await env.knex('billing_runs').insert({
      tenant_id: b.tenant.id,
      as_of: new Date().toISOString().slice(0, 10),
      trigger: 'manual',
      status: 'completed',
    });
    for (const role of ROLES) tokens[role] = (await makeUser(a.tenant.id, role)).token;
  });

  it('every admin route refuses a missing, malformed or unknown token with 401 UNAUTHENTICATED', async () => {
    expect(adminRoutes.length).to.be.greaterThan(40);
    for (const r of adminRoutes) {
      for (const token of [undefined, 'not-a-token', 'ispl_999999999_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
        const res = await app.request(r.method.toUpperCase(), concrete(r.path), {
          token,
          body: r.body ? {} : undefined,
        });
        expect(res.status, `${r.method} ${r.path} with ${token}`).to.equal(401);
        expect(res.body.code).to.equal('UNAUTHENTICATED');
      }
    }
  });

  it('every built-in role is let through exactly the routes its permissions grant', async () => {
    const table: string[] = [];
    for (const r of adminRoutes.filter((x) => x.permission)) {
      for (const role of ROLES) {
        const res = await app.request(r.method.toUpperCase(), concrete(r.path), {
          token: tokens[role],
          body: r.body ? {} : undefined,
        });
        const refused = res.status === 403 && res.body.code === 'FORBIDDEN';
        const granted = ROLE_PERMISSIONS[role].includes(r.permission!);
        table.push(`${r.method} ${r.path} ${role}: ${refused ? 403 : res.status}`);
        expect(refused, `${role} on ${r.method} ${r.path} (${res.status} ${JSON.stringify(res.body)})`).to.equal(
          !granted,
        );
      }
    }
    expect(table.some((l) => l.endsWith(': 403'))).to.equal(true);
  });

  it('a user without any role is refused every route that names a permission (403 naming it), and nothing else', async () => {
    const u = await makeUser(a.tenant.id, 'staff');
    await env.knex('user_roles').where({ user_id: u.id }).delete();
    let refused = 0;
    for (const r of adminRoutes.filter((x) => x.path !== '/api/auth/logout')) {
      const res = await app.request(r.method.toUpperCase(), concrete(r.path), {
        token: u.token,
        body: r.body ? {} : undefined,
      });
      const what = `${r.method} ${r.path}: ${res.status} ${JSON.stringify(res.body)}`;
      if (r.permission) {
        expect(res.status, what).to.equal(403);
        expect(res.body.message, what).to.include(r.permission);
        refused++;
      } else expect(res.status, what).to.not.equal(401);
    }
    expect(refused).to.be.greaterThan(40);
  });

  it('another tenant’s record in the path is 404 (reads and deletes) or refused, and stays unchanged', async () => {
    // a first path parameter that is an enum (e.g. {appType} of the app builder) names no record: its
    // module's tests cover the other tenant's rows behind it
    const enumFirst = (r: (typeof adminRoutes)[number]) => {
      const name = /:([A-Za-z_]+)/.exec(r.path)?.[1];
      const props = (r.params?.properties ?? {}) as Record<string, { enum?: unknown }>;
      return !!name && Array.isArray(props[name]?.enum);
    };
    const withId = adminRoutes.filter(
      (r) => /:[A-Za-z_]+/.test(r.path) && !r.path.startsWith('/api/auth/') && !enumFirst(r),
    );
    expect(withId.length).to.be.greaterThan(15);
    const unmapped = withId.map((r) => r.path.replace(/(\/:[A-Za-z_]+).*$/, '$1')).filter((p) => !ID_TABLES[p]);
    expect(unmapped, 'add the table of these paths to ID_TABLES').to.deep.equal([]);
    for (const r of withId) {
      const base = r.path.replace(/(\/:[A-Za-z_]+).*$/, '$1');
      const table = ID_TABLES[base];
      const row = await env.knex(table).where({ tenant_id: b.tenant.id }).orderBy('id').first('id');
      expect(row, `a ${table} row of the other tenant`).to.not.equal(undefined);
      const before = await state(table, b.tenant.id);
      const res = await app.request(r.method.toUpperCase(), concrete(r.path, row.id), {
        token: a.adminToken,
        body: r.body ? {} : undefined,
      });
      const what = `${r.method} ${r.path} with ${table} ${row.id} of the other tenant: ${res.status} ${JSON.stringify(res.body)}`;
      if (r.method === 'get' || r.method === 'delete' || !r.body) expect(res.status, what).to.equal(404);
      else expect([404, 422], what).to.include(res.status);
      expect(await state(table, b.tenant.id), what).to.deep.equal(before);
    }
  });
});
