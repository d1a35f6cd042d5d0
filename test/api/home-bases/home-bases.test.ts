import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

/** Issue 8 item 3: /api/home-bases CRUD (homebase.manage), ranges checked, audit, tenant confinement. */
describe('/api/home-bases', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };
  const body = { name: 'POP Buah Batu', address: 'Jl. Buah Batu 211, Bandung', latitude: -6.9389, longitude: 107.6256 };
  const create = (x: Record<string, unknown>, f: TenantFixture = a) =>
    app.request('POST', '/api/home-bases', { token: f.adminToken, body: x });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
  });

  it('creates a home base (201, audited); a technician reads it but may not write', async () => {
    const res = await create(body);
    expect(res.status).to.equal(201);
    expect(res.body.data).to.include(body);
    const id = res.body.data.id;
    const audit = await env.knex('audit_log').where({ action: 'home_bases.created', subject_id: id });
    expect(audit).to.have.length(1);
    expect(audit[0].after).to.deep.equal(body);
    const shown = await app.request('GET', `/api/home-bases/${id}`, { token: tech.token });
    expect(shown.body.data).to.deep.equal(res.body.data);
    const refused = await app.request('POST', '/api/home-bases', { token: tech.token, body });
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.include('homebase.manage');
  });

  it('requires every field and checks the ranges (422), creating nothing', async () => {
    const count = async () =>
      Number((await env.knex('home_bases').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n);
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [{ ...body, name: undefined }, 'name'],
      [{ ...body, address: undefined }, 'address'],
      [{ ...body, latitude: undefined }, 'latitude'],
      [{ ...body, longitude: undefined }, 'longitude'],
      [{ ...body, latitude: 90.5 }, 'latitude'],
      [{ ...body, latitude: -91 }, 'latitude'],
      [{ ...body, longitude: 180.01 }, 'longitude'],
      [{ ...body, longitude: '107.6' }, 'longitude'],
      [{ ...body, name: ' ' }, 'name'],
    ];
    for (const [x, field] of cases) {
      const res = await create(JSON.parse(JSON.stringify(x)));
      expect(res.status, JSON.stringify(x)).to.equal(422);
      expect(Object.keys(res.body.errors), JSON.stringify(x)).to.include(field);
    }
    expect(await count()).to.equal(before);
    const edge = await create({ ...body, name: 'Edge', latitude: -90, longitude: 180 });
    expect(edge.status).to.equal(201);
  });

  it('PUT changes the fields sent (audited) and answers 404 for another tenant, changing nothing', async () => {
    const id = (await create({ ...body, name: 'Old name' })).body.data.id;
    const res = await app.request('PUT', `/api/home-bases/${id}`, { token: a.adminToken, body: { name: 'New name' } });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ name: 'New name', address: body.address, latitude: body.latitude });
    const [audit] = await env.knex('audit_log').where({ action: 'home_bases.updated', subject_id: id });
    expect([audit.before.name, audit.after.name]).to.deep.equal(['Old name', 'New name']);
    const before = await env.knex('home_bases').where({ id }).first();
    expect((await app.request('GET', `/api/home-bases/${id}`, { token: b.adminToken })).status).to.equal(404);
    const put = await app.request('PUT', `/api/home-bases/${id}`, { token: b.adminToken, body: { name: 'x' } });
    expect(put.status).to.equal(404);
    expect(await env.knex('home_bases').where({ id }).first()).to.deep.equal(before);
    const bad = await app.request('PUT', `/api/home-bases/${id}`, { token: a.adminToken, body: { latitude: 100 } });
    expect(bad.status).to.equal(422);
  });

  it("lists newest first with search over name and address; never another tenant's", async () => {
    const tag = `Gudang-${Date.now().toString(36)}`;
    const x = (await create({ ...body, name: `${tag} utara` })).body.data.id;
    const y = (await create({ ...body, name: 'Kantor', address: `Jl. ${tag} 5` })).body.data.id;
    await create({ ...body, name: `${tag} b` }, b);
    const res = await app.request('GET', `/api/home-bases?search=${tag.toLowerCase()}`, { token: tech.token });
    expect(res.status).to.equal(200);
    expect(res.body.per_page).to.equal(20);
    expect(res.body.data.map((r: { id: number }) => r.id)).to.deep.equal([y, x]);
  });
});
