import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { FIRST_PAGE_SIZES, listCustomers } from '../../../api/external/customer-list.js';
import { createKnex } from '../../../db/knex.js';
import { freshDatabase } from '../../helpers/fresh-db.js';
import { TenantScope } from '../../../db/tenant-scope.js';
import { qs, V1 } from './world.js';

/**
 * The customers list's fixed statements (api/external/customer-list.ts): first pages of the
 * listed sizes have their own statement with a literal LIMIT, other sizes and later pages use
 * placeholders; every one must give the rows, order and total of a plain ORDER BY ... OFFSET.
 */
describe('external v1: customers list statements (first pages, any size, later pages)', () => {
  let app: TestApp;
  let f: TenantFixture;
  let token: string;

  before(async () => {
    app = await startTestApp();
    f = await makeTenant();
    token = (await makeIntegrationToken(f)).token;
    // 130 customers, two per created_at (ties broken by id), every 4th suspended; one with a package and an ONU
    await tenantKnex(f.tenant.id).raw(
      `INSERT INTO customers (tenant_id, code, name, phone, address, status, created_at, updated_at)
      SELECT ?, 'P-' || g, 'Page ' || g, '1', 'a', CASE WHEN g % 4 = 0 THEN 'suspended' ELSE 'active' END,
        timestamptz '2026-03-01' + (g / 2) * interval '1 minute', timestamptz '2026-03-01 00:00:00.029+00' FROM generate_series(1, 130) g`,
      [f.tenant.id],
    );
  });

  const expected = async (status?: string) =>
    (await tenantKnex(f.tenant.id)('customers')
      .where({ tenant_id: f.tenant.id })
      .modify((q) => {
        if (status) q.where({ status });
      })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('id')) as number[];

  it('serves first and later pages of listed and unlisted sizes, with and without status, like ORDER BY ... OFFSET', async () => {
    expect(FIRST_PAGE_SIZES).to.include.members([15, 100]);
    for (const status of [undefined, 'suspended']) {
      const rows = await expected(status);
      for (const perPage of [15, 100, 7, 1, 99]) {
        for (const page of [1, 2, 3]) {
          const res = await app.request('GET', `${V1}/customers${qs({ page, per_page: perPage, status })}`, { token });
          const label = `page ${page} per_page ${perPage} ${status ?? 'all'}`;
          expect(res.status, label).to.equal(200);
          expect(
            res.body.data.map((c: { id: number }) => c.id),
            label,
          ).to.deep.equal(rows.slice((page - 1) * perPage, page * perPage));
          expect(res.body.total, label).to.equal(rows.length);
        }
      }
    }
  });

  it('formats timestamps like the detail endpoint does', async () => {
    const res = await app.request('GET', `${V1}/customers${qs({ per_page: 100 })}`, { token });
    const first = res.body.data[0];
    expect(first.updated_at).to.equal('2026-03-01T00:00:00.029Z');
    const detail = await app.request('GET', `${V1}/customers/${first.id}`, { token });
    expect(detail.body.data.created_at).to.equal(first.created_at);
    expect(detail.body.data.updated_at).to.equal(first.updated_at);
  });

  it('answers an empty first page of an empty tenant with total 0, listed size or not', async () => {
    const g = await makeTenant();
    const t = (await makeIntegrationToken(g)).token;
    for (const perPage of [15, 7]) {
      for (const status of [undefined, 'active']) {
        const res = await app.request('GET', `${V1}/customers${qs({ per_page: perPage, status })}`, { token: t });
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.include({ data: [], total: 0, current_page: 1, last_page: 1, from: null, to: null });
      }
    }
  });
});

/**
 * The plans behind the list's speed (api/external/customer-list.ts pageIdsSql, searchPageSql): the
 * search, a later page's ids and the rows by id are planned once per connection (a generic plan),
 * not on every call. A change that makes PostgreSQL plan them again per call (a parameter whose
 * value the planner reads) shows here as `generic_plans` 0.
 */
describe('external v1: customers list statements keep generic plans', () => {
  it('after a few calls on one connection, the search, later-page and rows-by-id statements run on generic plans', async () => {
    // a database of its own: the plan cache compares the generic plan's estimate with the custom
    // ones, so another file's skewed tenants (and autovacuum's timing) in the shared test database
    // made this flaky under load; here the table holds this tenant's rows only, analysed
    const fresh = await freshDatabase();
    const [{ id: tenantId }] = await fresh.knex('tenants').insert({ slug: 'plans', name: 'Plans' }).returning('id');
    await fresh.knex.raw(
      `INSERT INTO customers (tenant_id, code, name, phone, address, status, created_at, updated_at)
      SELECT ?, 'G-' || g, CASE WHEN g % 3 = 0 THEN 'Budi Santoso ' ELSE 'Siti Rahayu ' END || g, '1', 'a', 'active',
        now() - g * interval '1 minute', now() FROM generate_series(1, 60) g`,
      [tenantId],
    );
    await fresh.knex.raw('ANALYZE');
    const f = { tenant: { id: Number(tenantId) } };
    const knex = createKnex(fresh.url, { min: 1, max: 1 });
    try {
      const scope = new TenantScope(knex, f.tenant.id);
      for (let i = 0; i < 8; i++) {
        const found = await listCustomers(scope, { page: 1, per_page: 10, search: 'budi santoso' });
        expect(found.total).to.equal(20);
        const later = await listCustomers(scope, { page: 2 + (i % 3), per_page: 10 });
        expect(later.total).to.equal(60);
        expect(later.data).to.have.length(10);
      }
      const plans = (
        await knex.raw(
          `SELECT name, generic_plans, custom_plans FROM pg_prepared_statements
          WHERE name IN ('ext_customers_search_page', 'customers_page_ids', 'ext_customers_by_ids') ORDER BY name`,
        )
      ).rows as { name: string; generic_plans: number; custom_plans: number }[];
      expect(plans.map((p) => p.name)).to.deep.equal([
        'customers_page_ids',
        'ext_customers_by_ids',
        'ext_customers_search_page',
      ]);
      for (const p of plans) {
        expect(Number(p.generic_plans), p.name).to.be.at.least(3);
        expect(Number(p.custom_plans), p.name).to.be.at.most(5);
      }
    } finally {
      await knex.destroy();
    }
  });
});
