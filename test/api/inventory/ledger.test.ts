import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { assertLedgerBalanced, makeItem, makeLocation, serial, stockIn, stockOf } from './support.js';

/** Issue 16 items 2, 3: stock-in, the ledger, counts, the append-only trigger. */
describe('inventory ledger: stock-in, counts, append-only mutations', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let warehouse: number;

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    warehouse = await makeLocation(app, a.adminToken, { name: 'Main warehouse' });
  });
  afterEach(async () => {
    expect(await assertLedgerBalanced(a.tenant.id)).to.be.a('number');
  });

  it('stock-in: 201, a stock_in mutation, a purchase with the exact amount (3 x 0.10 = 0.30), pending, audited', async () => {
    const item = await makeItem(app, a.adminToken, { name: 'Patch cord 1 m', unit: 'pcs' });
    const res = await app.request('POST', `/api/inventory/${item}/stock-in`, {
      token: a.adminToken,
      body: { quantity: 3, unit_cost: 0.1, location_id: warehouse },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({ item_id: item, location_id: warehouse, quantity: 3, unit_cost: 0.1, amount: 0.3 });
    expect(d).to.include({ finance_paid: false, finance_status: 'pending', location_stock: 3 });
    const p = await env.knex('inventory_purchases').where({ id: d.id }).first();
    expect(p.amount).to.equal(0.3);
    const m = await env.knex('inventory_mutations').where({ id: d.mutation_id }).first();
    expect(m).to.include({ type: 'stock_in', direction: 'in', quantity: 3, balance_after: 3 });
    expect(m).to.include({ reference_type: 'inventory_purchase', reference_id: d.id });
    expect(await stockOf(a.tenant.id, item, warehouse)).to.equal(3);
    const audit = await env.knex('audit_log').where({ tenant_id: a.tenant.id, action: 'inventory.stock_in' });
    expect(audit.map((r) => Number(r.subject_id))).to.include(item);
    // 7 x 0.15 = 1.05 and 2.5 x 0.33 = 0.825 -> 0.83 (half-up)
    const more = await stockIn(app, a.adminToken, item, warehouse, 2.5, { unit_cost: 0.33 });
    expect(more.amount).to.equal(0.83);
    const item2 = await app.request('GET', `/api/inventory/${item}`, { token: a.adminToken });
    expect(item2.body.data.stock_quantity).to.equal(5.5);
  });
});
