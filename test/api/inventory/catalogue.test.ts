import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { makeItem, makeLocation, stockIn } from './support.js';

/** Issue 16 item 1: items, locations, suppliers and their buy prices. */
describe('inventory catalogue: items, locations, suppliers', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
  });

  it('items: create (defaults, audited), show, search and filters, update, sku unique case-insensitively', async () => {
    const res = await app.request('POST', '/api/inventory', {
      token: a.adminToken,
      body: {
        name: 'ONT ZTE F670L',
        sku: 'ZTE-F670L',
        category: 'ONT',
        item_type: 'device',
        tracking: 'serial',
        sell_price: 450000.5,
        min_stock: 5,
      },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({
      name: 'ONT ZTE F670L',
      sku: 'ZTE-F670L',
      unit: 'pcs',
      tracking: 'serial',
      sell_price: 450000.5,
    });
    expect(d).to.include({ min_stock: 5, stock_quantity: 0, low_stock: true, is_active: true });
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: a.tenant.id, action: 'inventory.item_created', subject_id: d.id });
    expect(audit).to.have.length(1);
    const plain = await makeItem(app, a.adminToken, { name: 'Kabel drop 1 core', category: 'Cable', unit: 'm' });

    const dup = await app.request('POST', '/api/inventory', {
      token: a.adminToken,
      body: { name: 'x', sku: 'zte-f670l' },
    });
    expect(dup.status).to.equal(422);
    expect(dup.body.errors.sku[0]).to.match(/taken/);
    const other = await app.request('POST', '/api/inventory', {
      token: b.adminToken,
      body: { name: 'x', sku: 'ZTE-F670L' },
    });
    expect(other.status).to.equal(201); // unique per tenant only
    for (const [body, field] of [
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(151) }, 'name'],
      [{ name: 'x', sku: 's'.repeat(81) }, 'sku'],
      [{ name: 'x', tracking: 'batch' }, 'tracking'],
      [{ name: 'x', sell_price: -1 }, 'sell_price'],
      [{ name: 'x', sell_price: 1.234 }, 'sell_price'],
      [{ name: 'x', unit: 'u'.repeat(21) }, 'unit'],
    ] as [Record<string, unknown>, string][]) {
      const r = await app.request('POST', '/api/inventory', { token: a.adminToken, body });
      expect(r.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(r.body.errors), JSON.stringify(body)).to.include(field);
    }

    const list = async (q: string) => (await app.request('GET', `/api/inventory?${q}`, { token: tech.token })).body;
    expect((await list('search=f670')).data.map((i: { id: number }) => i.id)).to.deep.equal([d.id]);
    expect((await list('search=KABEL')).data.map((i: { id: number }) => i.id)).to.deep.equal([plain]);
    expect((await list('tracking=serial')).data.map((i: { id: number }) => i.id)).to.deep.equal([d.id]);
    expect((await list('category=cable')).data.map((i: { id: number }) => i.id)).to.deep.equal([plain]);
    expect((await list('low_stock=true')).data.map((i: { id: number }) => i.id)).to.deep.equal([d.id]);
    expect((await list('per_page=1')).last_page).to.equal(2);

    const put = await app.request('PUT', `/api/inventory/${d.id}`, {
      token: a.adminToken,
      body: { min_stock: 0, notes: 'Dual band' },
    });
    expect(put.body.data).to.include({ min_stock: 0, notes: 'Dual band', low_stock: false, name: 'ONT ZTE F670L' });
    expect(
      (await app.request('PUT', `/api/inventory/${d.id}`, { token: b.adminToken, body: { notes: 'x' } })).status,
    ).to.equal(404);
    expect(
      (await app.request('PUT', `/api/inventory/${d.id}`, { token: tech.token, body: { notes: 'x' } })).status,
    ).to.equal(403);
  });

  it('items and locations: DELETE removes an unused record (204) and deactivates a used one (200, is_active false)', async () => {
    const unused = await makeItem(app, a.adminToken);
    const used = await makeItem(app, a.adminToken);
    const loc = await makeLocation(app, a.adminToken);
    const emptyLoc = await makeLocation(app, a.adminToken);
    await stockIn(app, a.adminToken, used, loc, 1);
    expect((await app.request('DELETE', `/api/inventory/${unused}`, { token: a.adminToken })).status).to.equal(204);
    expect((await app.request('GET', `/api/inventory/${unused}`, { token: a.adminToken })).status).to.equal(404);
    const d = await app.request('DELETE', `/api/inventory/${used}`, { token: a.adminToken });
    expect(d.status).to.equal(200);
    expect(d.body.data).to.include({ id: used, is_active: false, stock_quantity: 1 });
    const tracking = await app.request('PUT', `/api/inventory/${used}`, {
      token: a.adminToken,
      body: { tracking: 'serial' },
    });
    expect(tracking.status).to.equal(422);
    expect(tracking.body.errors).to.have.property('tracking');
    expect(
      (await app.request('DELETE', `/api/inventory/locations/${emptyLoc}`, { token: a.adminToken })).status,
    ).to.equal(204);
    const dl = await app.request('DELETE', `/api/inventory/locations/${loc}`, { token: a.adminToken });
    expect(dl.status).to.equal(200);
    expect(dl.body.data.is_active).to.equal(false);
    const actions = await env
      .knex('audit_log')
      .where({ tenant_id: a.tenant.id })
      .whereIn('action', [
        'inventory.item_deleted',
        'inventory.item_deactivated',
        'inventory.location_deleted',
        'inventory.location_deactivated',
      ]);
    expect(actions).to.have.length(4);
    // an inactive location takes no stock
    const r = await app.request('POST', `/api/inventory/${used}/stock-in`, {
      token: a.adminToken,
      body: { quantity: 1, unit_cost: 1, location_id: loc },
    });
    expect(r.status).to.equal(422);
    expect(r.body.errors.location_id[0]).to.match(/inactive/);
  });

  it('locations: types, a technician location needs a holder of the tenant, filters', async () => {
    const res = await app.request('POST', '/api/inventory/locations', {
      token: a.adminToken,
      body: { name: 'Budi van', type: 'technician', holder_user_id: tech.id },
    });
    expect(res.status).to.equal(201);
    expect(res.body.data.holder).to.deep.equal({ id: tech.id, name: res.body.data.holder.name });
    const foreignUser = await makeUser(b.tenant.id, 'technician');
    for (const [body, field] of [
      [{ name: 'x', type: 'technician' }, 'holder_user_id'],
      [{ name: 'x', type: 'technician', holder_user_id: foreignUser.id }, 'holder_user_id'],
      [{ name: 'x', type: 'warehouse', holder_user_id: tech.id }, 'holder_user_id'],
      [{ name: 'x', type: 'shop' }, 'type'],
    ] as [Record<string, unknown>, string][]) {
      const r = await app.request('POST', '/api/inventory/locations', { token: a.adminToken, body });
      expect(r.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(r.body.errors)).to.include(field);
    }
    const moved = await app.request('PUT', `/api/inventory/locations/${res.body.data.id}`, {
      token: a.adminToken,
      body: { type: 'pop' },
    });
    expect(moved.body.data).to.include({ type: 'pop', holder_user_id: null });
    const list = await app.request('GET', '/api/inventory/locations?type=pop&search=budi', { token: tech.token });
    expect(list.body.data.map((l: { id: number }) => l.id)).to.deep.equal([res.body.data.id]);
    expect(
      (await app.request('GET', `/api/inventory/locations/${res.body.data.id}`, { token: b.adminToken })).status,
    ).to.equal(404);
  });

  it('suppliers: CRUD, validation, buy prices at GET /api/suppliers/{supplier}/items, deactivated when used', async () => {
    const res = await app.request('POST', '/api/suppliers', {
      token: a.adminToken,
      body: {
        name: 'PT Fiber Nusantara',
        contact: 'Andi',
        phone: '+6281234567001',
        email: 'Sales@Fiber.example',
        address: 'Jl. Industri 5',
      },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const s = res.body.data;
    expect(s).to.include({ name: 'PT Fiber Nusantara', email: 'sales@fiber.example', items_count: 0, is_active: true });
    for (const [body, field] of [
      [{}, 'name'],
      [{ name: 'x', phone: '0812' }, 'phone'],
      [{ name: 'x', email: 'not-mail' }, 'email'],
    ] as [Record<string, unknown>, string][]) {
      const r = await app.request('POST', '/api/suppliers', { token: a.adminToken, body });
      expect(r.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(r.body.errors)).to.include(field);
    }
    const item = await makeItem(app, a.adminToken, { name: 'Closure 24 core', sku: 'CL-24' });
    await env
      .knex('supplier_items')
      .insert({ tenant_id: a.tenant.id, supplier_id: s.id, item_id: item, cost_price: 125000.75 });
    const items = await app.request('GET', `/api/suppliers/${s.id}/items`, { token: tech.token });
    expect(items.status).to.equal(200);
    expect(items.body.total).to.equal(1);
    expect(items.body.data[0]).to.deep.include({ item_id: item, cost_price: 125000.75 });
    expect(items.body.data[0].item).to.include({ name: 'Closure 24 core', sku: 'CL-24' });
    expect((await app.request('GET', `/api/suppliers/${s.id}/items`, { token: b.adminToken })).status).to.equal(404);
    const put = await app.request('PUT', `/api/suppliers/${s.id}`, { token: a.adminToken, body: { contact: 'Budi' } });
    expect(put.body.data).to.include({ contact: 'Budi', name: 'PT Fiber Nusantara', items_count: 1 });
    const list = await app.request('GET', '/api/suppliers?search=nusantara', { token: tech.token });
    expect(list.body.data.map((x: { id: number }) => x.id)).to.deep.equal([s.id]);
    const del = await app.request('DELETE', `/api/suppliers/${s.id}`, { token: a.adminToken });
    expect(del.status).to.equal(200);
    expect(del.body.data.is_active).to.equal(false);
    const fresh = (await app.request('POST', '/api/suppliers', { token: a.adminToken, body: { name: 'Unused' } })).body
      .data.id;
    expect((await app.request('DELETE', `/api/suppliers/${fresh}`, { token: a.adminToken })).status).to.equal(204);
  });
});
