import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { todayIn } from '../../../lib/clock.js';

/** Issue 8 item 3: /api/packages CRUD + DELETE (unused deleted, used deactivated), audit, tenant confinement. */
describe('/api/packages', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };
  let seq = 0;

  const create = (body: Record<string, unknown>, f: TenantFixture = a) =>
    app.request('POST', '/api/packages', { token: f.adminToken, body });
  const name = (p: string) => `${p} ${++seq}-${Date.now().toString(36)}`;
  const audits = (action: string, id: number) =>
    env.knex('audit_log').where({ tenant_id: a.tenant.id, action, subject_type: 'packages', subject_id: id });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
  });

  it('creates a package: 201 with the DESIGN §6 fields and defaults, audited; a technician reads it', async () => {
    const res = await create({ name: 'Home 30', price: 275000.5, speed_down_kbps: 30000, speed_up_kbps: 15000 });
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(Object.keys(d)).to.have.members([
      'id',
      'name',
      'description',
      'price',
      'speed_down_kbps',
      'speed_up_kbps',
      'service_type',
      'is_active',
      'is_partner_package',
      'created_at',
      'updated_at',
    ]);
    expect(d).to.include({
      name: 'Home 30',
      description: null,
      price: 275000.5,
      speed_down_kbps: 30000,
      speed_up_kbps: 15000,
      service_type: 'pppoe',
      is_active: true,
      is_partner_package: false,
    });
    const [audit] = await audits('packages.created', d.id);
    expect(audit.after).to.include({ name: 'Home 30', price: 275000.5, is_partner_package: false });
    const shown = await app.request('GET', `/api/packages/${d.id}`, { token: tech.token });
    expect(shown.status).to.equal(200);
    expect(shown.body.data).to.deep.equal(d);
    const refused = await app.request('POST', '/api/packages', { token: tech.token, body: { name: 'x', price: 1 } });
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.include('customers.manage');
  });

  it('refuses bad bodies with 422 field errors and creates nothing', async () => {
    const count = async () =>
      Number((await env.knex('packages').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n);
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [{ price: 1000 }, 'name'],
      [{ name: 'No price' }, 'price'],
      [{ name: 'Cents', price: 10.125 }, 'price'],
      [{ name: 'Negative', price: -1 }, 'price'],
      [{ name: 'Text price', price: '1000' }, 'price'],
      [{ name: 'Type', price: 1, service_type: 'fiber' }, 'service_type'],
      [{ name: 'Speed', price: 1, speed_down_kbps: 1.5 }, 'speed_down_kbps'],
      [{ name: '   ', price: 1 }, 'name'],
      [{ name: 'Flag', price: 1, is_partner_package: 'yes' }, 'is_partner_package'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors), JSON.stringify(body)).to.include(field);
    }
    expect(await count()).to.equal(before);
  });

  it('lists newest first (per_page 20) with is_partner_package, is_active, service_type and search filters', async () => {
    const tag = name('Filter');
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ name: `${tag} home ${i}`, price: 100 + i })).body.data.id);
    const partner = (await create({ name: `${tag} partner`, price: 90, is_partner_package: true })).body.data.id;
    const old = (await create({ name: `${tag} retired`, price: 80, is_active: false, service_type: 'static' })).body
      .data.id;
    await create({ name: `${tag} other tenant`, price: 1 }, b);
    const list = async (q: string) => {
      const res = await app.request('GET', `/api/packages?${q}`, { token: tech.token });
      expect(res.status, q).to.equal(200);
      return res.body;
    };
    const all = await list(`search=${encodeURIComponent(tag)}`);
    expect(all.per_page).to.equal(20);
    expect(all.data.map((p: { id: number }) => p.id)).to.deep.equal([old, partner, ...ids.reverse()]);
    expect(
      (await list(`search=${encodeURIComponent(tag)}&is_partner_package=true`)).data.map((p: { id: number }) => p.id),
    ).to.deep.equal([partner]);
    const inactive = await list(`search=${encodeURIComponent(tag)}&is_active=false`);
    expect(inactive.data.map((p: { id: number }) => p.id)).to.deep.equal([old]);
    expect((await list(`search=${encodeURIComponent(tag)}&service_type=static`)).total).to.equal(1);
    expect((await list(`search=${encodeURIComponent(tag.toUpperCase())}%20PARTNER`)).total).to.equal(1);
    expect((await list('search=%25%25%25')).total).to.equal(0);
    const bad = await app.request('GET', '/api/packages?is_active=maybe', { token: tech.token });
    expect(bad.status).to.equal(422);
  });

  it('updates with PUT: the fields sent change, the others keep their value; audited with before and after', async () => {
    const id = (await create({ name: name('Upd'), price: 150000, description: 'fast', is_partner_package: true })).body
      .data.id;
    const res = await app.request('PUT', `/api/packages/${id}`, {
      token: a.adminToken,
      body: { price: 160000, speed_down_kbps: 50000 },
    });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({
      price: 160000,
      speed_down_kbps: 50000,
      description: 'fast',
      is_partner_package: true,
      is_active: true,
    });
    const [audit] = await audits('packages.updated', id);
    expect(audit.before.price).to.equal(150000);
    expect(audit.after.price).to.equal(160000);
    const cleared = await app.request('PUT', `/api/packages/${id}`, {
      token: a.adminToken,
      body: { description: null },
    });
    expect(cleared.body.data.description).to.equal(null);
  });

  it("answers 404 for another tenant's package on every route and changes nothing", async () => {
    const id = (await create({ name: name('Foreign'), price: 5000 })).body.data.id;
    const before = await env.knex('packages').where({ id }).first();
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { price: 1 }],
      ['DELETE', undefined],
    ] as const) {
      const res = await app.request(method, `/api/packages/${id}`, { token: b.adminToken, body });
      expect(res.status, method).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
    }
    expect(await env.knex('packages').where({ id }).first()).to.deep.equal(before);
  });

  it('DELETE removes an unused package (204, audited) and deactivates one a customer or an invoice uses (200)', async () => {
    const unused = (await create({ name: name('Unused'), price: 1 })).body.data.id;
    const del = await app.request('DELETE', `/api/packages/${unused}`, { token: a.adminToken });
    expect(del.status).to.equal(204);
    expect(del.text).to.equal('');
    expect(await env.knex('packages').where({ id: unused }).first()).to.equal(undefined);
    expect(await audits('packages.deleted', unused)).to.have.length(1);
    expect((await app.request('GET', `/api/packages/${unused}`, { token: a.adminToken })).status).to.equal(404);

    // seedBasics: a customer on its package, and an invoice of that package
    const basics = await seedBasics(a);
    const used = await app.request('DELETE', `/api/packages/${basics.packageId}`, { token: a.adminToken });
    expect(used.status).to.equal(200);
    expect(used.body.data).to.include({ id: basics.packageId, is_active: false });
    expect((await env.knex('customers').where({ id: basics.customerId }).first()).package_id).to.equal(
      basics.packageId,
    );
    const [audit] = await audits('packages.deactivated', basics.packageId);
    expect(audit.after).to.deep.equal({ is_active: false, used_by: 'customers' });

    // only an invoice refers to it: deactivated too (the invoice keeps its package)
    const invoiceOnly = (await create({ name: name('Invoiced'), price: 10 })).body.data.id;
    await a.scope.insert('invoices', {
      invoice_number: `INV-P-${Date.now()}`,
      customer_id: basics.customerId,
      package_id: invoiceOnly,
      amount: 10,
      status: 'paid',
      due_date: todayIn(a.timeZone),
    });
    const inv = await app.request('DELETE', `/api/packages/${invoiceOnly}`, { token: a.adminToken });
    expect(inv.status).to.equal(200);
    expect(inv.body.data.is_active).to.equal(false);
    expect((await audits('packages.deactivated', invoiceOnly))[0].after.used_by).to.equal('invoices');
  });
});
