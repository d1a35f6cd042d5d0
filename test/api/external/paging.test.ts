import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { ENDPOINTS, makeWorld, type World } from './world.js';

/** Issue 2 "Tests": pagination bounds on every list endpoint of document 1 (DESIGN.md §4 "Lists"). */
describe('external v1: paging bounds and envelope on every list endpoint', () => {
  let app: TestApp;
  let a: World;
  const lists = ENDPOINTS.filter((e) => e.name.endsWith('.list'));

  before(async () => {
    app = await startTestApp();
    a = await makeWorld();
  });

  it('covers the six lists of document 1', () => {
    expect(lists.map((e) => e.name)).to.deep.equal([
      'customers.list',
      'packages.list',
      'invoices.list',
      'tickets.list',
      'olts.list',
      'onus.list',
    ]);
  });

  it('answers 422 with a field error for page 0, per_page 0, per_page 101 and non-integers on every list', async () => {
    const bad: [string, string][] = [
      ['page=0', 'page'],
      ['page=-3', 'page'],
      ['page=x', 'page'],
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['per_page=2.5', 'per_page'],
    ];
    for (const e of lists) {
      for (const [q, field] of bad) {
        const res = await app.request('GET', `${e.path(a.ids)}?${q}`, { token: a.read });
        expect(res.status, `${e.name}?${q}`).to.equal(422);
        expect(res.body.code, `${e.name}?${q}`).to.equal('VALIDATION_FAILED');
        expect(Object.keys(res.body.errors), `${e.name}?${q}`).to.deep.equal([field]);
      }
    }
  });

  it('answers the envelope {current_page, data, per_page, total, last_page, from, to} with per_page 15 by default, and accepts 1 and 100', async () => {
    for (const e of lists) {
      const res = await app.request('GET', e.path(a.ids), { token: a.read });
      expect(res.status, e.name).to.equal(200);
      expect(Object.keys(res.body).sort(), e.name).to.deep.equal([
        'current_page',
        'data',
        'from',
        'last_page',
        'per_page',
        'to',
        'total',
      ]);
      expect(res.body, e.name).to.deep.include({
        current_page: 1,
        per_page: 15,
        total: 1,
        last_page: 1,
        from: 1,
        to: 1,
      });
      for (const perPage of [1, 100]) {
        const r = await app.request('GET', `${e.path(a.ids)}?per_page=${perPage}&page=1`, { token: a.read });
        expect(r.status, `${e.name} per_page=${perPage}`).to.equal(200);
        expect(r.body.per_page).to.equal(perPage);
      }
      const past = await app.request('GET', `${e.path(a.ids)}?page=5`, { token: a.read });
      expect(past.body, `${e.name} page 5`).to.deep.include({
        current_page: 5,
        data: [],
        total: 1,
        from: null,
        to: null,
      });
    }
  });
});
