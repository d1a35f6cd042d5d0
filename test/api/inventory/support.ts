import { expect } from 'chai';
import type { TestApp } from '../../helpers/http.js';
import { env } from '../../helpers/env.js';

/** Helpers of the inventory tests (issue 16): records through the API, and the ledger invariant. */

let n = 0;
const uniq = () => `${process.pid}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

/** Creates an item through the API; @returns its id. */
export async function makeItem(app: TestApp, token: string, body: Record<string, unknown> = {}): Promise<number> {
  const res = await app.request('POST', '/api/inventory', { token, body: { name: `Item ${uniq()}`, ...body } });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data.id;
}

/** Creates a location through the API; @returns its id. */
export async function makeLocation(app: TestApp, token: string, body: Record<string, unknown> = {}): Promise<number> {
  const res = await app.request('POST', '/api/inventory/locations', {
    token,
    body: { name: `Loc ${uniq()}`, type: 'warehouse', ...body },
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data.id;
}

/** Receives stock through POST /api/inventory/{id}/stock-in; @returns the answer's data. */
export async function stockIn(
  app: TestApp,
  token: string,
  itemId: number,
  locationId: number,
  quantity: number,
  extra: Record<string, unknown> = {},
) {
  const res = await app.request('POST', `/api/inventory/${itemId}/stock-in`, {
    token,
    body: { quantity, unit_cost: 10, location_id: locationId, ...extra },
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data;
}

/** The stock of an item at a location (0 without a row). */
export async function stockOf(tenantId: number, itemId: number, locationId: number): Promise<number> {
  const r = await env
    .knex('inventory_stock')
    .where({ tenant_id: tenantId, item_id: itemId, location_id: locationId })
    .first('quantity');
  return r ? Number(r.quantity) : 0;
}

/** A unique serial number. */
export const serial = (prefix = 'SN') => `${prefix}${uniq().replace(/-/g, '').toUpperCase()}`;

/**
 * The ledger invariant: for every stock row of the tenant, sum(mutations.quantity) = stock, and
 * every (item, location) with mutations has a stock row; for serial items, the in-stock serials
 * at a location count the stock there.
 */
export async function assertLedgerBalanced(tenantId: number) {
  const rows = await env.knex.raw(
    `SELECT coalesce(s.item_id, m.item_id) AS item_id, coalesce(s.location_id, m.location_id) AS location_id,
            s.quantity AS stock, m.total
       FROM (SELECT * FROM inventory_stock WHERE tenant_id = ?) s
       FULL JOIN (SELECT item_id, location_id, sum(quantity) AS total FROM inventory_mutations
                   WHERE tenant_id = ? GROUP BY item_id, location_id) m
         ON m.item_id = s.item_id AND m.location_id = s.location_id`,
    [tenantId, tenantId],
  );
  for (const r of rows.rows) {
    expect(Number(r.stock ?? 0), `item ${r.item_id} at ${r.location_id}`).to.equal(Number(r.total ?? 0));
  }
  const serials = await env.knex.raw(
    `SELECT s.item_id, s.location_id, s.quantity,
            (SELECT count(*) FROM inventory_serials x WHERE x.tenant_id = s.tenant_id AND x.item_id = s.item_id
               AND x.location_id = s.location_id AND x.status = 'in_stock') AS serials
       FROM inventory_stock s JOIN inventory_items i ON i.id = s.item_id
      WHERE s.tenant_id = ? AND i.tracking = 'serial'`,
    [tenantId],
  );
  for (const r of serials.rows) {
    expect(Number(r.serials), `serials of item ${r.item_id} at ${r.location_id}`).to.equal(Number(r.quantity));
  }
  return rows.rows.length;
}
