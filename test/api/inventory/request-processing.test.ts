import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { makeTenant } from '../../helpers/fixtures.js';
import { assertLedgerBalanced, makeItem, makeLocation, serial, stockIn, stockOf } from './support.js';
import { requestWorld, type RequestWorld } from './request-world.js';

/** Issue 16 items 2 and 4: processing inventory requests through the ledger, races, the append-only ledger. */
describe('/api/inventory/requests: processing through the ledger', () => {
  let w: RequestWorld;
  let app: RequestWorld['app'];
  let a: RequestWorld['a'];
  let tech: RequestWorld['tech'];
  let tech2: RequestWorld['tech2'];
  let warehouse: RequestWorld['warehouse'];
  let pop: RequestWorld['pop'];
  let van: RequestWorld['van'];
  let cable: RequestWorld['cable'];
  const create = (...args: Parameters<RequestWorld['create']>) => w.create(...args);
  const act = (...args: Parameters<RequestWorld['act']>) => w.act(...args);
  const stockOut = (...args: Parameters<RequestWorld['stockOut']>) => w.stockOut(...args);

  before(async () => {
    w = await requestWorld();
    ({ app, a, tech, tech2, warehouse, pop, van, cable } = w);
  });
  afterEach(async () => {
    expect(await assertLedgerBalanced(a.tenant.id)).to.be.greaterThan(0);
  });

  it('process moves the stock: stock_out out of the source, transfer and return into the destination, a mutation per item and direction', async () => {
    const before = await stockOf(a.tenant.id, cable, warehouse);
    const out = (await stockOut([{ item_id: cable, quantity: 12.25 }])).body.data.id;
    await act(out, 'approve');
    const p = await act(out, 'process');
    expect(p.status, JSON.stringify(p.body)).to.equal(200);
    expect(p.body.data.processed_by.id).to.equal(a.admin.id);
    expect(await stockOf(a.tenant.id, cable, warehouse)).to.equal(before - 12.25);
    const m = await app.request('GET', `/api/inventory/mutations?request_id=${out}`, { token: tech.token });
    expect(m.body.data.map((x: { type: string; quantity: number }) => [x.type, x.quantity])).to.deep.equal([
      ['stock_out', -12.25],
    ]);

    const tr = (
      await create({
        type: 'transfer',
        source_location_id: warehouse,
        destination_location_id: van,
        items: [{ item_id: cable, quantity: 30 }],
      })
    ).body.data.id;
    await act(tr, 'approve');
    await act(tr, 'process');
    expect(await stockOf(a.tenant.id, cable, van)).to.equal(30);
    const rt = (
      await create({
        type: 'return',
        source_location_id: van,
        destination_location_id: pop,
        items: [{ item_id: cable, quantity: 10 }],
      })
    ).body.data.id;
    await act(rt, 'approve');
    await act(rt, 'process');
    expect(await stockOf(a.tenant.id, cable, van)).to.equal(20);
    expect(await stockOf(a.tenant.id, cable, pop)).to.equal(10);
    const rows = await env
      .knex('inventory_mutations')
      .where({ tenant_id: a.tenant.id, reference_id: rt, reference_type: 'inventory_request' })
      .orderBy('id');
    expect(rows.map((r) => [r.type, r.direction, r.location_id, r.quantity])).to.deep.equal([
      ['return', 'out', van, -10],
      ['return', 'in', pop, 10],
    ]);
    // the unique key (request item, direction) refuses a second out row of the same request item
    const dup = env.knex('inventory_mutations').insert({ ...rows[0], id: undefined, created_at: new Date() });
    let err: any;
    await dup.catch((e: unknown) => (err = e));
    expect(err?.code).to.equal('23505');
  });

  it('approve checks the stock without reserving it; a short process moves nothing (INSUFFICIENT_STOCK items.N.quantity)', async () => {
    const fiber = await makeItem(app, a.adminToken, { name: 'Splitter 1:8' });
    await stockIn(app, a.adminToken, fiber, warehouse, 3);
    const big = (
      await stockOut([
        { item_id: cable, quantity: 1 },
        { item_id: fiber, quantity: 4 },
      ])
    ).body.data.id;
    const refused = await act(big, 'approve');
    expect(refused.status).to.equal(422);
    expect(refused.body.code).to.equal('INSUFFICIENT_STOCK');
    expect(Object.keys(refused.body.errors)).to.deep.equal(['items.1.quantity']);
    const r1 = (await stockOut([{ item_id: fiber, quantity: 2 }])).body.data.id;
    const r2 = (
      await stockOut([
        { item_id: cable, quantity: 5 },
        { item_id: fiber, quantity: 2 },
      ])
    ).body.data.id;
    expect((await act(r1, 'approve')).body.data.status).to.equal('approved');
    expect((await act(r2, 'approve')).body.data.status).to.equal('approved'); // nothing reserved by r1
    expect((await act(r1, 'process')).status).to.equal(200);
    const cableBefore = await stockOf(a.tenant.id, cable, warehouse);
    const short = await act(r2, 'process');
    expect(short.status).to.equal(422);
    expect(short.body.code).to.equal('INSUFFICIENT_STOCK');
    expect(short.body.errors).to.have.property('items.1.quantity');
    expect(await stockOf(a.tenant.id, cable, warehouse)).to.equal(cableBefore);
    expect(await stockOf(a.tenant.id, fiber, warehouse)).to.equal(1);
    expect((await env.knex('inventory_requests').where({ id: r2 }).first('status')).status).to.equal('approved');
  });

  it('oversell: stock 5, 20 concurrent 1-unit processes -> exactly 5 succeed, stock 0, 5 mutations', async function () {
    this.timeout(60_000);
    const onuPatch = await makeItem(app, a.adminToken, { name: 'Fast connector' });
    await stockIn(app, a.adminToken, onuPatch, warehouse, 5);
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const id = (await stockOut([{ item_id: onuPatch, quantity: 1 }])).body.data.id;
      expect((await act(id, 'approve')).status).to.equal(200);
      ids.push(id);
    }
    const results = await Promise.all(ids.map((id) => act(id, 'process')));
    const ok = results.filter((r) => r.status === 200);
    const short = results.filter((r) => r.status === 422);
    expect(ok).to.have.length(5);
    expect(short).to.have.length(15);
    expect(short.every((r) => r.body.code === 'INSUFFICIENT_STOCK' && r.body.errors['items.0.quantity'])).to.equal(
      true,
    );
    expect(await stockOf(a.tenant.id, onuPatch, warehouse)).to.equal(0);
    const outs = await env
      .knex('inventory_mutations')
      .where({ tenant_id: a.tenant.id, item_id: onuPatch, direction: 'out' });
    expect(outs).to.have.length(5);
  });

  it('serials: one serial in two requests -> one wins; the winner issues it; serial count must match', async () => {
    const onu = await makeItem(app, a.adminToken, { name: 'ONT HG8245H', tracking: 'serial', item_type: 'device' });
    const sns = [serial('HWTC'), serial('HWTC')];
    await stockIn(app, a.adminToken, onu, warehouse, 2, { serials: sns });
    const r1 = (await stockOut([{ item_id: onu, quantity: 1 }])).body.data.id;
    const r2 = (await stockOut([{ item_id: onu, quantity: 1 }], {}, tech2.token)).body.data.id;
    await act(r1, 'approve');
    await act(r2, 'approve');
    const missing = await act(r1, 'process', {});
    expect(missing.status).to.equal(422);
    expect(missing.body.errors).to.have.property('items.0.serials');
    const wrongCount = await act(r1, 'process', { items: [{ item_id: onu, serials: sns }] });
    expect(wrongCount.status).to.equal(422);
    const [x, y] = await Promise.all([
      act(r1, 'process', { items: [{ item_id: onu, serials: [sns[0]] }] }),
      act(r2, 'process', { items: [{ item_id: onu, serials: [sns[0].toLowerCase()] }] }),
    ]);
    expect([x.status, y.status].sort()).to.deep.equal([200, 422]);
    const loser = x.status === 422 ? x : y;
    expect(loser.body.code).to.equal('INSUFFICIENT_STOCK');
    expect(loser.body.errors['items.0.serials'][0].toUpperCase()).to.include(sns[0]);
    const winner = x.status === 200 ? x : y;
    expect(winner.body.data.items[0].serials).to.have.length(1);
    const row = await env.knex('inventory_serials').where({ tenant_id: a.tenant.id, serial_number: sns[0] }).first();
    expect(row).to.include({ status: 'issued', location_id: null });
    expect(await stockOf(a.tenant.id, onu, warehouse)).to.equal(1);
    const list = await app.request('GET', `/api/inventory/serials?item_id=${onu}&status=in_stock`, {
      token: tech.token,
    });
    expect(list.body.data.map((s: { serial_number: string }) => s.serial_number)).to.deep.equal([sns[1]]);
  });

  it('the ledger is append-only: UPDATE and DELETE of a mutation fail; deleting a tenant cascades through', async () => {
    const m = await env.knex('inventory_mutations').where({ tenant_id: a.tenant.id }).first('id');
    let err: any;
    await env
      .knex('inventory_mutations')
      .where({ id: m.id })
      .update({ quantity: 999 })
      .catch((e: unknown) => (err = e));
    expect(String(err?.message)).to.match(/append-only/);
    err = undefined;
    await env
      .knex('inventory_mutations')
      .where({ id: m.id })
      .delete()
      .catch((e: unknown) => (err = e));
    expect(String(err?.message)).to.match(/append-only/);
    const gone = await makeTenant();
    const loc = await makeLocation(app, gone.adminToken);
    const item = await makeItem(app, gone.adminToken);
    await stockIn(app, gone.adminToken, item, loc, 2);
    await env.knex('tenants').where({ id: gone.tenant.id }).delete();
    expect(await env.knex('inventory_mutations').where({ tenant_id: gone.tenant.id }).first()).to.equal(undefined);
  });
});
