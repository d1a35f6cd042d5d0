import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

/** Issue 16 item 5: the home base -> warehouse/POP mapping, on its route and on POST/PUT /api/home-bases. */
describe('home base inventory locations', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let warehouse: number;
  let pop: number;
  let techLoc: number;
  let foreign: number;
  let hb: number;

  const loc = async (tenantId: number, type: string, holder: number | null = null) =>
    (
      await env
        .knex('inventory_locations')
        .insert({ tenant_id: tenantId, name: `L ${type}`, type, holder_user_id: holder })
        .returning('id')
    )[0].id as number;
  const map = (id: number, ids: unknown, token = a.adminToken) =>
    app.request('POST', `/api/home-bases/${id}/inventory-locations`, { token, body: { inventory_location_ids: ids } });
  const mapped = async (id: number) =>
    (await env
      .knex('home_base_inventory_locations')
      .where({ home_base_id: id })
      .orderBy('location_id')
      .pluck('location_id')) as number[];

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    warehouse = await loc(a.tenant.id, 'warehouse');
    pop = await loc(a.tenant.id, 'pop');
    const tech = await makeUser(a.tenant.id, 'technician');
    techLoc = await loc(a.tenant.id, 'technician', tech.id);
    foreign = await loc(b.tenant.id, 'warehouse');
    const res = await app.request('POST', '/api/home-bases', {
      token: a.adminToken,
      body: { name: 'Base Dago', address: 'Jl. Dago 1', latitude: -6.88, longitude: 107.61 },
    });
    hb = res.body.data.id;
    expect(res.body.data.inventory_location_ids).to.deep.equal([]);
  });

  it('sets the mapping (200 with inventory_location_ids, audited), replaces it, [] removes it', async () => {
    const res = await map(hb, [pop, warehouse]);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.inventory_location_ids).to.deep.equal([warehouse, pop].sort((x, y) => x - y));
    expect(await mapped(hb)).to.deep.equal([warehouse, pop].sort((x, y) => x - y));
    expect((await map(hb, [pop])).body.data.inventory_location_ids).to.deep.equal([pop]);
    const list = await app.request('GET', '/api/home-bases', { token: a.adminToken });
    expect(list.body.data.find((h: { id: number }) => h.id === hb).inventory_location_ids).to.deep.equal([pop]);
    expect((await map(hb, [])).body.data.inventory_location_ids).to.deep.equal([]);
    expect(await mapped(hb)).to.deep.equal([]);
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: a.tenant.id, action: 'home_bases.inventory_locations_set' })
      .orderBy('id');
    expect(audit).to.have.length(3);
    expect(audit[2].after).to.deep.equal({ inventory_location_ids: [] });
  });

  it('refuses a foreign, missing or technician location (422 inventory_location_ids.N), duplicates, and another tenant’s home base (404); nothing changes', async () => {
    await map(hb, [warehouse]);
    for (const [ids, field] of [
      [[foreign], 'inventory_location_ids.0'],
      [[warehouse, 2147483000], 'inventory_location_ids.1'],
      [[techLoc], 'inventory_location_ids.0'],
      [[pop, pop], 'inventory_location_ids'],
      [['x'], 'inventory_location_ids.0'],
    ] as [unknown[], string][]) {
      const res = await map(hb, ids);
      expect(res.status, JSON.stringify(ids)).to.equal(422);
      expect(Object.keys(res.body.errors), JSON.stringify(res.body)).to.include(field);
    }
    expect(
      (await app.request('POST', `/api/home-bases/${hb}/inventory-locations`, { token: a.adminToken, body: {} }))
        .status,
    ).to.equal(422);
    const theirs = (
      await app.request('POST', '/api/home-bases', {
        token: b.adminToken,
        body: { name: 'B', address: 'Jl. B', latitude: 1, longitude: 1 },
      })
    ).body.data.id;
    expect((await map(theirs, [warehouse])).status).to.equal(404);
    expect(await mapped(theirs)).to.deep.equal([]);
    expect(await mapped(hb)).to.deep.equal([warehouse]);
    const tech = await makeUser(a.tenant.id, 'technician');
    const refused = await map(hb, [pop], tech.token);
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.include('homebase.manage');
  });

  it('POST and PUT /api/home-bases take the same field: set on create, left unchanged when absent, replaced when given', async () => {
    const res = await app.request('POST', '/api/home-bases', {
      token: a.adminToken,
      body: {
        name: 'Base Buah Batu',
        address: 'Jl. BB 2',
        latitude: -6.95,
        longitude: 107.63,
        inventory_location_ids: [pop],
      },
    });
    expect(res.status).to.equal(201);
    expect(res.body.data.inventory_location_ids).to.deep.equal([pop]);
    const id = res.body.data.id;
    const renamed = await app.request('PUT', `/api/home-bases/${id}`, {
      token: a.adminToken,
      body: { name: 'Base BB' },
    });
    expect(renamed.body.data).to.include({ name: 'Base BB' });
    expect(renamed.body.data.inventory_location_ids).to.deep.equal([pop]);
    const replaced = await app.request('PUT', `/api/home-bases/${id}`, {
      token: a.adminToken,
      body: { inventory_location_ids: [warehouse] },
    });
    expect(replaced.body.data.inventory_location_ids).to.deep.equal([warehouse]);
    const bad = await app.request('POST', '/api/home-bases', {
      token: a.adminToken,
      body: { name: 'Bad', address: 'Jl. X', latitude: 0, longitude: 0, inventory_location_ids: [foreign] },
    });
    expect(bad.status).to.equal(422);
    expect(await env.knex('home_bases').where({ tenant_id: a.tenant.id, name: 'Bad' }).first()).to.equal(undefined);
  });
});
