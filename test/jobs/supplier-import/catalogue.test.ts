import { expect } from 'chai';
import { applyRows, countActions, decide, matchItems } from '../../../jobs/supplier-import/catalogue.js';
import { buildRow } from '../../../jobs/supplier-import/rows.js';
import { env } from '../../helpers/env.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';

const MAP = { name: 0, sku: 1, cost_price: 2, sell_price: 3 };
const row = (n: number, ...cells: unknown[]) => buildRow(cells, MAP, n);

describe('supplier import: matching and applying (issue 16 item 6)', () => {
  let f: TenantFixture;
  let supplierId: number;
  before(async () => {
    f = await makeTenant();
    [{ id: supplierId }] = await env
      .knex('suppliers')
      .insert({ tenant_id: f.tenant.id, name: 'PT Serat' })
      .returning('id');
    await env.knex('inventory_items').insert([
      { tenant_id: f.tenant.id, name: 'ONT ZTE F609', sku: 'ZTE-609', sell_price: 300000 },
      { tenant_id: f.tenant.id, name: 'Kabel Drop', sku: null, sell_price: 2000 },
    ]);
  });

  it('matches by sku case-insensitively, else by name, in one query', async () => {
    const rows = [row(1, 'other name', 'zte-609'), row(2, 'KABEL DROP', ''), row(3, 'New', 'N-1')];
    const m = await matchItems(env.knex, f.tenant.id, supplierId, rows);
    expect([m.get(0)?.sku, m.get(1)?.name, m.get(2)]).to.deep.equal(['ZTE-609', 'Kabel Drop', undefined]);
    const decided = rows.map((r, i) => decide(r, false, m.get(i)));
    expect(decided.map((d) => d.action)).to.deep.equal(['update', 'update', 'create']);
    expect(countActions(decided)).to.deep.equal({ total: 3, valid: 3, invalid: 0, create: 1, update: 2, skip: 0 });
  });

  it("an unknown sku falls back to the name (lowest id of a repeated name); the match carries this supplier's buy price", async () => {
    const ids = (await env
      .knex('inventory_items')
      .insert([
        { tenant_id: f.tenant.id, name: 'Patch Cord SC', sku: 'PC-A', sell_price: 15000 },
        { tenant_id: f.tenant.id, name: 'patch cord sc', sku: 'PC-B', sell_price: 16000 },
      ])
      .returning('id')) as { id: number }[];
    const [zte] = await env.knex('inventory_items').where({ tenant_id: f.tenant.id, sku: 'ZTE-609' }).pluck('id');
    await env
      .knex('supplier_items')
      .insert({ tenant_id: f.tenant.id, supplier_id: supplierId, item_id: zte, cost_price: 250000 });
    const rows = [
      row(1, 'PATCH CORD SC', 'PC-UNKNOWN'),
      row(2, 'ont zte f609', 'zte-609'),
      row(3, 'Patch Cord SC', 'pc-b'),
    ];
    const m = await matchItems(env.knex, f.tenant.id, supplierId, rows);
    expect(m.get(0)).to.include({ id: Math.min(...ids.map((r) => r.id)), sku: 'PC-A', cost_price: null });
    expect(m.get(1)).to.include({ id: zte, name: 'ONT ZTE F609', sell_price: '300000.00', cost_price: '250000.00' });
    expect(m.get(2)).to.include({ sku: 'PC-B', name: 'patch cord sc' });
    await env.knex('supplier_items').where({ supplier_id: supplierId, item_id: zte }).delete();
    await env
      .knex('inventory_items')
      .whereIn(
        'id',
        ids.map((r) => r.id),
      )
      .delete();
  });

  it('a failure while recording the result undoes the whole apply (items and buy prices)', async () => {
    const count = async (t: string, w: Record<string, number>) =>
      Number((await env.knex(t).where(w).count('* as n'))[0].n);
    const before = [
      await count('inventory_items', { tenant_id: f.tenant.id }),
      await count('supplier_items', { supplier_id: supplierId }),
    ];
    let seen: unknown;
    const failing = applyRows(
      env.knex,
      f.tenant.id,
      supplierId,
      [row(1, 'Patch cord', 'PC-1', '9000', '')],
      (_t, r) => {
        seen = r;
        return Promise.reject(new Error('result not stored'));
      },
    );
    await failing.then(
      () => expect.fail('applyRows should fail with its record callback'),
      (e: Error) => expect(e.message).to.equal('result not stored'),
    );
    expect(seen).to.deep.equal({ created: 1, updated: 0, skipped: 0 });
    expect([
      await count('inventory_items', { tenant_id: f.tenant.id }),
      await count('supplier_items', { supplier_id: supplierId }),
    ]).to.deep.equal(before);
  });

  it('a new buy price alone leaves the item (and its updated_at); new item fields alone leave the buy price', async () => {
    const [item] = (await env
      .knex('inventory_items')
      .insert({ tenant_id: f.tenant.id, name: 'Adaptor 12V', sku: 'AD-12', sell_price: 50000 })
      .returning(['id', 'updated_at'])) as { id: number; updated_at: Date }[];
    const [price] = (await env
      .knex('supplier_items')
      .insert({ tenant_id: f.tenant.id, supplier_id: supplierId, item_id: item.id, cost_price: 30000 })
      .returning(['updated_at'])) as { updated_at: Date }[];
    try {
      const state = async () => ({
        item: await env.knex('inventory_items').where('id', item.id).first('sell_price', 'updated_at'),
        price: await env
          .knex('supplier_items')
          .where({ supplier_id: supplierId, item_id: item.id })
          .first('cost_price', 'updated_at'),
      });
      // one row with the adaptor's name and sku, the buy price and sell price given: one update
      const applyAdaptor = async (cost: string, sell: string) =>
        expect(
          await applyRows(env.knex, f.tenant.id, supplierId, [row(1, 'Adaptor 12V', 'AD-12', cost, sell)]),
        ).to.deep.equal({ created: 0, updated: 1, skipped: 0 });
      // buy price only: the row is an update, the item is not written
      await applyAdaptor('32000', '');
      let now = await state();
      expect(now.item).to.deep.equal({ sell_price: 50000, updated_at: item.updated_at });
      expect(now.price!.cost_price).to.equal(32000);
      expect(now.price!.updated_at.getTime()).to.be.above(price.updated_at.getTime());
      const priced = now.price!.updated_at;
      // sell price only (same buy price): the item is written, the buy price is not
      await applyAdaptor('32000', '55000');
      now = await state();
      expect(now.item!.sell_price).to.equal(55000);
      expect(now.item!.updated_at.getTime()).to.be.above(item.updated_at.getTime());
      expect(now.price).to.deep.equal({ cost_price: 32000, updated_at: priced });
    } finally {
      await env.knex('supplier_items').where({ supplier_id: supplierId, item_id: item.id }).delete();
      await env.knex('inventory_items').where('id', item.id).delete();
    }
  });

  it('applies once (creates, updates, buy prices, no stock) and a second time skips all', async () => {
    const rows = [row(1, 'ONT ZTE F609', 'ZTE-609', '250000', '310000'), row(2, 'Splitter 1:8', 'SP-8', '45000', '')];
    expect(await applyRows(env.knex, f.tenant.id, supplierId, rows)).to.deep.equal({
      created: 1,
      updated: 1,
      skipped: 0,
    });
    const items = await env
      .knex('inventory_items')
      .where({ tenant_id: f.tenant.id })
      .orderBy('id')
      .select('name', 'sku', env.knex.raw('sell_price::text'));
    expect(items).to.deep.equal([
      { name: 'ONT ZTE F609', sku: 'ZTE-609', sell_price: '310000.00' },
      { name: 'Kabel Drop', sku: null, sell_price: '2000.00' },
      { name: 'Splitter 1:8', sku: 'SP-8', sell_price: '0.00' },
    ]);
    const prices = await env
      .knex('supplier_items')
      .where({ supplier_id: supplierId })
      .orderBy('item_id')
      .select(env.knex.raw('cost_price::text'));
    expect(prices.map((p: { cost_price: string }) => p.cost_price)).to.deep.equal(['250000.00', '45000.00']);
    expect(await applyRows(env.knex, f.tenant.id, supplierId, rows)).to.deep.equal({
      created: 0,
      updated: 0,
      skipped: 2,
    });
  });
});
