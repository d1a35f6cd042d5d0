import { expect } from 'chai';
import { webRoutes } from '../../../api/routes.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { setModule } from '../../../api/tenants/service.js';

/**
 * Issue 16 item 7: who may call the inventory and supplier routes (Administrator everything;
 * technician and staff the reads and their own requests), and the module switch.
 */
describe('inventory access: role x endpoint, module switch', () => {
  let app: TestApp;
  let a: TenantFixture;
  const tokens: Record<string, string> = {};
  const routes = webRoutes.filter((r) => /^\/api\/(inventory|suppliers)(\/|$)/.test(r.path));
  /** The manager-only routes, written out (everything else needs inventory.view). */
  const MANAGE = new Set([
    'post /api/inventory',
    'put /api/inventory/:id',
    'delete /api/inventory/:id',
    'post /api/inventory/:id/stock-in',
    'post /api/inventory/locations',
    'put /api/inventory/locations/:id',
    'delete /api/inventory/locations/:id',
    'post /api/inventory/counts',
    'post /api/suppliers',
    'put /api/suppliers/:supplier',
    'delete /api/suppliers/:supplier',
    'post /api/inventory/requests/:id/approve',
    'post /api/inventory/requests/:id/reject',
    'post /api/inventory/requests/:id/defer',
    'post /api/inventory/requests/:id/resume',
    'post /api/inventory/requests/:id/process',
    // the supplier import (item 6): all four routes, its polls too
    'post /api/suppliers/:supplier/items/import-preview',
    'get /api/suppliers/:supplier/items/import-previews/:preview',
    'post /api/suppliers/:supplier/items/import',
    'get /api/suppliers/:supplier/items/imports/:import',
  ]);
  const path = (p: string) => p.replace(/:[a-z_]+/g, '2147483000');

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    for (const role of ['Administrator', 'technician', 'staff'])
      tokens[role] = (await makeUser(a.tenant.id, role)).token;
  });

  it('Administrator passes every route; technician and staff only the inventory.view ones (403 FORBIDDEN naming inventory.manage)', async () => {
    expect(routes.length).to.be.greaterThan(35);
    const matrix: string[] = [];
    for (const r of routes) {
      const key = `${r.method} ${r.path}`;
      expect(r.module, key).to.equal('inventory');
      expect(r.permission, key).to.equal(MANAGE.has(key) ? 'inventory.manage' : 'inventory.view');
      for (const role of ['Administrator', 'technician', 'staff']) {
        const res = await app.request(r.method.toUpperCase(), path(r.path), {
          token: tokens[role],
          body: r.body ? {} : undefined,
        });
        const forbidden = res.status === 403 && res.body.code === 'FORBIDDEN';
        const allowed = role === 'Administrator' || !MANAGE.has(key);
        matrix.push(`${key} ${role} ${res.status}`);
        expect(forbidden, `${key} as ${role}: ${res.status} ${JSON.stringify(res.body)}`).to.equal(!allowed);
        if (forbidden) expect(res.body.message).to.include('inventory.manage');
        expect(res.status, key).to.be.lessThan(500);
      }
    }
    expect(matrix.filter((l) => l.endsWith(' 403'))).to.have.length(MANAGE.size * 2);
  });

  it('with the inventory module off every route answers 403 module_disabled and changes nothing; on again it works', async () => {
    const t = await makeTenant();
    const loc = await env
      .knex('inventory_locations')
      .insert({ tenant_id: t.tenant.id, name: 'W', type: 'warehouse' })
      .returning('id');
    await setModule(env.knex, t.tenant.id, 'inventory', false);
    const before = await env.knex('inventory_locations').where({ tenant_id: t.tenant.id }).count('* as n');
    for (const r of [...routes, ...webRoutes.filter((x) => x.path === '/api/home-bases/:id/inventory-locations')]) {
      const res = await app.request(r.method.toUpperCase(), path(r.path), {
        token: t.adminToken,
        body: r.body ? {} : undefined,
      });
      expect(res.status, `${r.method} ${r.path}`).to.equal(403);
      expect(res.body.code).to.equal('module_disabled');
    }
    const hb = await app.request('POST', '/api/home-bases', {
      token: t.adminToken,
      body: { name: 'HB', address: 'Jl. A', latitude: -6.9, longitude: 107.6, inventory_location_ids: [loc[0].id] },
    });
    expect(hb.status).to.equal(403);
    expect(hb.body.code).to.equal('module_disabled');
    expect(await env.knex('home_bases').where({ tenant_id: t.tenant.id }).first()).to.equal(undefined);
    expect(await env.knex('inventory_locations').where({ tenant_id: t.tenant.id }).count('* as n')).to.deep.equal(
      before,
    );
    await setModule(env.knex, t.tenant.id, 'inventory', true);
    expect((await app.request('GET', '/api/inventory/locations', { token: t.adminToken })).body.total).to.equal(1);
  });
});
