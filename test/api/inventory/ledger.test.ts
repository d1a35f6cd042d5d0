import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
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

  it('stock-in validation: 422 field errors, foreign ids as 422, nothing written', async () => {
    const item = await makeItem(app, a.adminToken);
    const onu = await makeItem(app, a.adminToken, { tracking: 'serial', item_type: 'device' });
    const foreignLoc = await makeLocation(app, b.adminToken);
    const supRes = await app.request('POST', '/api/suppliers', { token: b.adminToken, body: { name: 'Other' } });
    const ledger = async () =>
      Number((await env.knex('inventory_mutations').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n);
    const before = await ledger();
    const cases: [number, Record<string, unknown>, string][] = [
      [item, { quantity: 0, unit_cost: 1, location_id: warehouse }, 'quantity'],
      [item, { quantity: 1.005, unit_cost: 1, location_id: warehouse }, 'quantity'],
      [item, { quantity: 1, unit_cost: -1, location_id: warehouse }, 'unit_cost'],
      [item, { quantity: 1, unit_cost: 0.001, location_id: warehouse }, 'unit_cost'],
      [item, { quantity: 1, unit_cost: 1 }, 'location_id'],
      [item, { quantity: 1, unit_cost: 1, location_id: foreignLoc }, 'location_id'],
      [item, { quantity: 1, unit_cost: 1, location_id: warehouse, supplier_id: supRes.body.data.id }, 'supplier_id'],
      [item, { quantity: 1, unit_cost: 1, location_id: warehouse, finance_paid: true }, 'finance_account_id'],
      [item, { quantity: 1, unit_cost: 1, location_id: warehouse, serials: ['X1'] }, 'serials'],
      [onu, { quantity: 1.5, unit_cost: 1, location_id: warehouse, serials: ['A', 'B'] }, 'quantity'],
      [onu, { quantity: 2, unit_cost: 1, location_id: warehouse }, 'serials'],
      [onu, { quantity: 2, unit_cost: 1, location_id: warehouse, serials: ['S1'] }, 'serials'],
      [onu, { quantity: 2, unit_cost: 1, location_id: warehouse, serials: ['S1', 's1'] }, 'serials.1'],
      [item, { quantity: 1, unit_cost: 1, location_id: warehouse, extra: 1 }, 'extra'],
    ];
    for (const [id, body, field] of cases) {
      const res = await app.request('POST', `/api/inventory/${id}/stock-in`, { token: a.adminToken, body });
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(res.body.errors ?? {}), `${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`).to.include(
        field,
      );
    }
    const foreignItem = await makeItem(app, b.adminToken);
    const res = await app.request('POST', `/api/inventory/${foreignItem}/stock-in`, {
      token: a.adminToken,
      body: { quantity: 1, unit_cost: 1, location_id: warehouse },
    });
    expect(res.status).to.equal(404);
    expect(await ledger()).to.equal(before);
  });

  it('stock-in of a serial item creates the serials in_stock; a known serial is refused, nothing moves', async () => {
    const onu = await makeItem(app, a.adminToken, { name: 'ONT F609', tracking: 'serial', item_type: 'device' });
    const sns = [serial('ZTEG'), serial('ZTEG'), serial('ZTEG')];
    const d = await stockIn(app, a.adminToken, onu, warehouse, 3, { serials: sns, unit_cost: 350000 });
    expect(d).to.include({ amount: 1050000, location_stock: 3 });
    expect(d.serials).to.deep.equal(sns);
    const list = await app.request('GET', `/api/inventory/serials?item_id=${onu}`, { token: a.adminToken });
    expect(list.body.total).to.equal(3);
    expect(
      list.body.data.every(
        (x: { status: string; location_id: number }) => x.status === 'in_stock' && x.location_id === warehouse,
      ),
    ).to.equal(true);
    const again = await app.request('POST', `/api/inventory/${onu}/stock-in`, {
      token: a.adminToken,
      body: { quantity: 1, unit_cost: 1, location_id: warehouse, serials: [sns[1].toLowerCase()] },
    });
    expect(again.status).to.equal(422);
    expect(again.body.code).to.equal('INSUFFICIENT_STOCK');
    expect(again.body.errors.serials[0]).to.include(sns[1]);
    expect(await stockOf(a.tenant.id, onu, warehouse)).to.equal(3);
    const stock = await app.request('GET', `/api/inventory/stock?item_id=${onu}`, { token: a.adminToken });
    expect(stock.body.data).to.have.length(1);
    expect(stock.body.data[0]).to.deep.include({ item_id: onu, location_id: warehouse, quantity: 3 });
    expect(stock.body.data[0].location).to.deep.equal({ id: warehouse, name: 'Main warehouse', type: 'warehouse' });
  });

  it('paid stock-in: finance_account_id recorded (pending); a demo tenant refuses only the paid one (403 demo_guard_blocked)', async () => {
    const item = await makeItem(app, a.adminToken);
    const paid = await stockIn(app, a.adminToken, item, warehouse, 2, { finance_paid: true, finance_account_id: 7 });
    expect(paid).to.include({ finance_paid: true, finance_account_id: 7, finance_status: 'pending', amount: 20 });
    const demo = await makeTenant({ demo: true });
    const loc = await makeLocation(app, demo.adminToken);
    const dItem = await makeItem(app, demo.adminToken);
    const blocked = await app.request('POST', `/api/inventory/${dItem}/stock-in`, {
      token: demo.adminToken,
      body: { quantity: 1, unit_cost: 5, location_id: loc, finance_paid: true, finance_account_id: 1 },
    });
    expect(blocked.status).to.equal(403);
    expect(blocked.body.code).to.equal('demo_guard_blocked');
    expect(blocked.body.message).to.include('inventory.paid_stock_in');
    expect(await stockOf(demo.tenant.id, dItem, loc)).to.equal(0);
    await stockIn(app, demo.adminToken, dItem, loc, 1, { finance_paid: false });
    expect(await stockOf(demo.tenant.id, dItem, loc)).to.equal(1);
  });

  it('counts: differences become adjustments, missing serials are written off, unknown serials refused; GET shows the lines', async () => {
    const loc = await makeLocation(app, a.adminToken, { name: 'POP Count', type: 'pop' });
    const cable = await makeItem(app, a.adminToken, { unit: 'm' });
    const onu = await makeItem(app, a.adminToken, { tracking: 'serial', item_type: 'device' });
    const same = await makeItem(app, a.adminToken);
    const sns = [serial('CNT'), serial('CNT'), serial('CNT')];
    await stockIn(app, a.adminToken, cable, loc, 100);
    await stockIn(app, a.adminToken, onu, loc, 3, { serials: sns });
    await stockIn(app, a.adminToken, same, loc, 4);
    const bad = await app.request('POST', '/api/inventory/counts', {
      token: a.adminToken,
      body: { location_id: loc, reason: 'Monthly count', lines: [{ item_id: onu, serials: [sns[0], 'NOPE-1'] }] },
    });
    expect(bad.status).to.equal(422);
    expect(bad.body.errors['lines.0.serials'][0]).to.include('NOPE-1');
    const invalid = await app.request('POST', '/api/inventory/counts', {
      token: a.adminToken,
      body: {
        location_id: loc,
        reason: 'x',
        lines: [{ item_id: cable }, { item_id: onu, counted_quantity: 2 }, { item_id: cable, counted_quantity: 1 }],
      },
    });
    expect(invalid.status).to.equal(422);
    expect(Object.keys(invalid.body.errors).sort()).to.deep.equal([
      'lines.0.counted_quantity',
      'lines.1.serials',
      'lines.2.item_id',
    ]);
    const res = await app.request('POST', '/api/inventory/counts', {
      token: a.adminToken,
      body: {
        location_id: loc,
        reason: 'Monthly count',
        lines: [
          { item_id: cable, counted_quantity: 97.5 },
          { item_id: onu, serials: [sns[0], sns[2]] },
          { item_id: same, counted_quantity: 4 },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({ location_id: loc, reason: 'Monthly count' });
    expect(d.lines.map((l: any) => [l.item_id, l.expected_quantity, l.counted_quantity, l.difference])).to.deep.equal([
      [cable, 100, 97.5, -2.5],
      [onu, 3, 2, -1],
      [same, 4, 4, 0],
    ]);
    expect(d.lines[1].written_off_serials).to.deep.equal([sns[1]]);
    expect(d.lines[2].mutation_id).to.equal(null);
    expect(await stockOf(a.tenant.id, cable, loc)).to.equal(97.5);
    expect(await stockOf(a.tenant.id, onu, loc)).to.equal(2);
    const off = await env.knex('inventory_serials').where({ tenant_id: a.tenant.id, serial_number: sns[1] }).first();
    expect(off).to.include({ status: 'written_off', location_id: null });
    const adj = await app.request(
      'GET',
      `/api/inventory/mutations?reference_type=inventory_count&reference_id=${d.id}`,
      {
        token: a.adminToken,
      },
    );
    expect(adj.body.data.map((m: any) => [m.type, m.quantity]).sort()).to.deep.equal([
      ['adjustment', -1],
      ['adjustment', -2.5],
    ]);
    // a count above the stock adds
    const up = await app.request('POST', '/api/inventory/counts', {
      token: a.adminToken,
      body: { location_id: loc, reason: 'Found a reel', lines: [{ item_id: cable, counted_quantity: 150 }] },
    });
    expect(up.body.data.lines[0].difference).to.equal(52.5);
    expect(await stockOf(a.tenant.id, cable, loc)).to.equal(150);
    const list = await app.request('GET', `/api/inventory/counts?location_id=${loc}`, { token: a.adminToken });
    expect(list.body.data.map((c: { id: number }) => c.id)).to.deep.equal([up.body.data.id, d.id]);
    const shown = await app.request('GET', `/api/inventory/counts/${d.id}`, { token: a.adminToken });
    expect(shown.body.data.lines).to.have.length(3);
    expect((await app.request('GET', `/api/inventory/counts/${d.id}`, { token: b.adminToken })).status).to.equal(404);
  });
});
