import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { customerCode } from '../../../api/external/customers.js';
import { qs, V1 } from './world.js';

type Status = 'active' | 'suspended' | 'terminated';

/** Inserts customers with distinct created_at (1 minute apart, oldest first); returns their ids oldest first. */
async function addCustomers(
  f: TenantFixture,
  n: number,
  opts: { status?: (i: number) => Status; name?: (i: number) => string; start?: Date } = {},
) {
  const start = opts.start ?? new Date('2026-01-01T00:00:00Z');
  const rows = [];
  for (let i = 0; i < n; i++) {
    const num = await f.scope.nextNumber('customer');
    rows.push({
      tenant_id: f.tenant.id,
      code: customerCode(num),
      name: opts.name?.(i) ?? `Person ${i}`,
      phone: `+62800${String(i).padStart(4, '0')}`,
      address: 'Jl. Test',
      status: opts.status?.(i) ?? 'active',
      created_at: new Date(start.getTime() + i * 60_000),
      updated_at: new Date(start.getTime() + i * 60_000),
    });
  }
  const inserted: { id: number }[] = await tenantKnex(f.tenant.id)('customers').insert(rows).returning('id');
  return inserted.map((r) => r.id);
}

async function exactCounts(tenantId: number) {
  const rows: { status: string; n: number }[] = await tenantKnex(tenantId)('customers')
    .where({ tenant_id: tenantId })
    .groupBy('status')
    .select('status')
    .count({ n: '*' });
  const by: Record<Status, number> = { active: 0, suspended: 0, terminated: 0 };
  for (const r of rows) by[r.status as Status] = Number(r.n);
  return { all: by.active + by.suspended + by.terminated, ...by };
}

describe('external v1: customers list (document 1; DESIGN.md §4)', () => {
  let app: TestApp;
  let f: TenantFixture;
  let token: string;
  let ids: number[];

  before(async () => {
    app = await startTestApp();
    f = await makeTenant();
    token = (await makeIntegrationToken(f, 'read')).token;
    ids = await addCustomers(f, 23, { status: (i) => (i % 3 === 0 ? 'suspended' : 'active') });
  });

  const list = (params: Record<string, string | number | undefined> = {}) =>
    app.request('GET', `${V1}/customers${qs(params)}`, { token });

  it('defaults to page 1 with 15 rows, newest first, and fills the envelope', async () => {
    const res = await list();
    expect(res.status).to.equal(200);
    expect(Object.keys(res.body).sort()).to.deep.equal([
      'current_page',
      'data',
      'from',
      'last_page',
      'per_page',
      'to',
      'total',
    ]);
    expect(res.body).to.deep.include({ current_page: 1, per_page: 15, total: 23, last_page: 2, from: 1, to: 15 });
    expect(res.body.data.map((c: { id: number }) => c.id)).to.deep.equal([...ids].reverse().slice(0, 15));
  });

  it('pages on: page 2 holds the rest, page 3 is empty with from/to null and the same total', async () => {
    const p2 = await list({ page: 2 });
    expect(p2.body).to.deep.include({ current_page: 2, per_page: 15, total: 23, last_page: 2, from: 16, to: 23 });
    expect(p2.body.data.map((c: { id: number }) => c.id)).to.deep.equal([...ids].reverse().slice(15));
    const p3 = await list({ page: 3 });
    expect(p3.body).to.deep.include({ current_page: 3, data: [], total: 23, last_page: 2, from: null, to: null });
    const p5 = await list({ page: 5, per_page: 5 });
    expect(p5.body).to.deep.include({ current_page: 5, per_page: 5, total: 23, last_page: 5, from: 21, to: 23 });
    expect(p5.body.data).to.have.length(3);
  });

  it('breaks ties of created_at by id, newest first', async () => {
    const g = await makeTenant();
    const t = (await makeIntegrationToken(g)).token;
    const same = new Date('2026-02-01T00:00:00Z');
    const rows = [0, 1, 2].map((i) => ({
      tenant_id: g.tenant.id,
      code: `C-${i}`,
      name: `Tie ${i}`,
      phone: '1',
      address: 'a',
      created_at: same,
      updated_at: same,
    }));
    const inserted: { id: number }[] = await tenantKnex(g.tenant.id)('customers').insert(rows).returning('id');
    const res = await app.request('GET', `${V1}/customers?per_page=2&page=1`, { token: t });
    const res2 = await app.request('GET', `${V1}/customers?per_page=2&page=2`, { token: t });
    const sorted = inserted.map((r) => r.id).sort((x, y) => y - x);
    expect([...res.body.data, ...res2.body.data].map((c: { id: number }) => c.id)).to.deep.equal(sorted);
  });

  it('answers 422 for page and per_page out of bounds or not integers; accepts per_page 1 and 100', async () => {
    const bad: [Record<string, string | number>, string][] = [
      [{ page: 0 }, 'page'],
      [{ page: -1 }, 'page'],
      [{ page: 'abc' }, 'page'],
      [{ page: 1.5 }, 'page'],
      [{ per_page: 0 }, 'per_page'],
      [{ per_page: 101 }, 'per_page'],
      [{ per_page: 'x' }, 'per_page'],
    ];
    for (const [params, field] of bad) {
      const res = await list(params);
      expect(res.status, JSON.stringify(params)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(res.body.errors, JSON.stringify(params)).to.have.property(field);
    }
    expect((await list({ per_page: 1 })).body).to.deep.include({
      per_page: 1,
      total: 23,
      last_page: 23,
      from: 1,
      to: 1,
    });
    expect((await list({ per_page: 100 })).body).to.deep.include({
      per_page: 100,
      total: 23,
      last_page: 1,
      from: 1,
      to: 23,
    });
  });

  it('filters by status (422 for an unknown status)', async () => {
    const counts = await exactCounts(f.tenant.id);
    for (const status of ['active', 'suspended', 'terminated'] as const) {
      const res = await list({ status, per_page: 100 });
      expect(res.status).to.equal(200);
      expect(res.body.total, status).to.equal(counts[status]);
      expect(res.body.data).to.have.length(counts[status]);
      expect(res.body.data.every((c: { status: string }) => c.status === status)).to.equal(true);
    }
    expect(counts.suspended).to.equal(8);
    expect((await list({ status: 'deleted' })).status).to.equal(422);
  });

  it('keeps total exact after inserts, deletes and status changes (plain and per status)', async () => {
    const g = await makeTenant();
    const t = (await makeIntegrationToken(g)).token;
    const check = async (label: string) => {
      const exact = await exactCounts(g.tenant.id);
      const plain = await app.request('GET', `${V1}/customers`, { token: t });
      expect(plain.body.total, `${label}: all`).to.equal(exact.all);
      for (const s of ['active', 'suspended', 'terminated'] as const) {
        const r = await app.request('GET', `${V1}/customers?status=${s}`, { token: t });
        expect(r.body.total, `${label}: ${s}`).to.equal(exact[s]);
      }
      return exact;
    };
    expect((await check('empty')).all).to.equal(0);
    const gIds = await addCustomers(g, 7, { status: (i) => (['active', 'suspended', 'terminated'] as const)[i % 3] });
    expect((await check('after bulk insert')).all).to.equal(7);
    await tenantKnex(g.tenant.id)('customers').whereIn('id', gIds.slice(0, 2)).del();
    expect((await check('after delete')).all).to.equal(5);
    await tenantKnex(g.tenant.id)('customers').whereIn('id', gIds.slice(2)).update({ status: 'terminated' });
    expect((await check('after status change')).terminated).to.equal(5);
    await tenantKnex(g.tenant.id)('customers').where({ id: gIds[3] }).update({ status: 'active', name: 'Renamed' });
    await tenantKnex(g.tenant.id)('customers').where({ id: gIds[4] }).update({ name: 'Only the name' });
    expect((await check('after mixed update')).active).to.equal(1);
    const created = await app.request('POST', `${V1}/customers`, {
      token: (await makeIntegrationToken(g, 'read_write')).token,
      body: { name: 'Via API', phone: '1', address: 'a', status: 'suspended' },
    });
    expect(created.status).to.equal(201);
    expect((await check('after API create')).suspended).to.equal(1);
    // the counter rows agree with count(*) per status
    const counters: { status: string; n: number }[] = await tenantKnex(g.tenant.id)('customer_status_counts').where({
      tenant_id: g.tenant.id,
    });
    const exact = await exactCounts(g.tenant.id);
    for (const c of counters) expect(Number(c.n), c.status).to.equal((exact as Record<string, number>)[c.status]);
  });

  it('lets a tenant with customers be deleted (the counter triggers follow the cascade)', async () => {
    const g = await makeTenant();
    await addCustomers(g, 3);
    expect(
      Number((await tenantKnex(g.tenant.id)('customer_status_counts').where({ tenant_id: g.tenant.id }).first())!.n),
    ).to.equal(3);
    await env.knex('tenants').where({ id: g.tenant.id }).del();
    // a cut-over tenant (TEST_TENANT_DB=1): its database's copy of the tenants row cascades there
    await tenantKnex(g.tenant.id)('tenants').where({ id: g.tenant.id }).del();
    expect(await tenantKnex(g.tenant.id)('customer_status_counts').where({ tenant_id: g.tenant.id })).to.deep.equal([]);
  });

  it('serves later pages (ids with the total, back half read from the oldest end, then the rows) with the same rows and order as OFFSET', async () => {
    const g = await makeTenant();
    const t = (await makeIntegrationToken(g)).token;
    // 2,500 customers, three per created_at (ties broken by id), statuses mixed
    await tenantKnex(g.tenant.id).raw(
      `INSERT INTO customers (tenant_id, code, name, phone, address, status, created_at, updated_at)
      SELECT ?, 'D-' || g, 'Deep ' || g, '1', 'a', (ARRAY['active','suspended','terminated'])[1 + g % 3],
        timestamptz '2026-01-01' + (g / 3) * interval '1 minute', now() FROM generate_series(1, 2500) g`,
      [g.tenant.id],
    );
    const expected = async (status?: string) =>
      (await tenantKnex(g.tenant.id)('customers')
        .where({ tenant_id: g.tenant.id })
        .modify((q) => {
          if (status) q.where({ status });
        })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .pluck('id')) as number[];
    const all = await expected();
    const cases: [number, number, string | undefined][] = [
      [2, 100, undefined],
      [10, 100, undefined],
      [11, 100, undefined],
      [13, 100, undefined],
      [14, 100, undefined],
      [20, 100, undefined],
      [25, 100, undefined],
      [26, 100, undefined],
      [358, 7, undefined],
      [357, 7, undefined],
      [143, 7, undefined],
      [144, 7, undefined],
      [359, 7, undefined],
      [11, 100, 'suspended'],
      [9, 100, 'suspended'],
      [1, 100, 'active'],
    ];
    for (const [page, perPage, status] of cases) {
      const rows = status ? await expected(status) : all;
      const res = await app.request('GET', `${V1}/customers${qs({ page, per_page: perPage, status })}`, { token: t });
      const label = `page ${page} per_page ${perPage} ${status ?? ''}`;
      expect(res.status, label).to.equal(200);
      const want = rows.slice((page - 1) * perPage, page * perPage);
      expect(
        res.body.data.map((c: { id: number }) => c.id),
        label,
      ).to.deep.equal(want);
      expect(res.body.total, label).to.equal(rows.length);
      expect(res.body.last_page, label).to.equal(Math.ceil(rows.length / perPage));
      expect(res.body.from, label).to.equal(want.length ? (page - 1) * perPage + 1 : null);
      expect(res.body.to, label).to.equal(want.length ? (page - 1) * perPage + want.length : null);
    }
    expect(all).to.have.length(2500);
  });

  it('searches by word prefixes over name, code, phone and e-mail (every word must match)', async () => {
    const g = await makeTenant();
    const t = (await makeIntegrationToken(g)).token;
    const names = ['Siti Rahayu', 'Siti Aminah', 'Budi Rahardjo', 'Agus Salim'];
    const gIds = await addCustomers(g, names.length, { name: (i) => names[i] });
    await tenantKnex(g.tenant.id)('customers').where({ id: gIds[3] }).update({ email: 'agus.salim@example.net' });
    const code = (await tenantKnex(g.tenant.id)('customers').where({ id: gIds[2] }).first()).code as string;
    const search = async (s: string) => {
      const res = await app.request('GET', `${V1}/customers${qs({ search: s })}`, { token: t });
      expect(res.status, s).to.equal(200);
      expect(res.body.total, s).to.equal(res.body.data.length);
      return res.body.data.map((c: { name: string }) => c.name).sort();
    };
    expect(await search('siti')).to.deep.equal(['Siti Aminah', 'Siti Rahayu']);
    expect(await search('SIT')).to.deep.equal(['Siti Aminah', 'Siti Rahayu']);
    expect(await search('rah')).to.deep.equal(['Budi Rahardjo', 'Siti Rahayu']);
    expect(await search('siti rah')).to.deep.equal(['Siti Rahayu']);
    expect(await search('  rah   siti ')).to.deep.equal(['Siti Rahayu']);
    expect(await search(code)).to.deep.equal(['Budi Rahardjo']);
    expect(await search(code.slice(0, -1))).to.include('Budi Rahardjo');
    expect(await search('agus.salim@exa')).to.deep.equal(['Agus Salim']);
    expect(await search('example')).to.deep.equal(['Agus Salim']);
    expect(await search('+628000002')).to.deep.equal(['Budi Rahardjo']);
    expect(await search('nobody')).to.deep.equal([]);
    // tsquery operators and quotes are plain text, never syntax (and never a 500)
    for (const s of [
      'siti & !rahayu',
      'siti | budi',
      "'siti'",
      'siti:*',
      '(siti)',
      'siti <-> aminah',
      '\\',
      '!!!',
      "a'b\\c",
      '%',
      '_',
    ]) {
      const res = await app.request('GET', `${V1}/customers${qs({ search: s })}`, { token: t });
      expect(res.status, s).to.equal(200);
    }
    expect(await search('siti & !rahayu')).to.deep.equal(['Siti Rahayu']);
    expect(await search('siti | budi')).to.deep.equal([]);
    // nothing searchable left: no filter
    expect(await search('!!!')).to.have.length(names.length);
    // search combines with status and pagination
    await tenantKnex(g.tenant.id)('customers').where({ id: gIds[0] }).update({ status: 'suspended' });
    const combined = await app.request('GET', `${V1}/customers${qs({ search: 'siti', status: 'suspended' })}`, {
      token: t,
    });
    expect(combined.body.data.map((c: { name: string }) => c.name)).to.deep.equal(['Siti Rahayu']);
    const paged = await app.request('GET', `${V1}/customers${qs({ search: 'siti', per_page: 1, page: 2 })}`, {
      token: t,
    });
    expect(paged.body).to.deep.include({ total: 2, last_page: 2, from: 2, to: 2 });
    expect(paged.body.data.map((c: { name: string }) => c.name)).to.deep.equal(['Siti Rahayu']);
    const far = await app.request('GET', `${V1}/customers${qs({ search: 'siti', page: 9 })}`, { token: t });
    expect(far.body).to.deep.include({ total: 2, data: [], from: null });
    expect(
      (await app.request('GET', `${V1}/customers${qs({ search: 'x'.repeat(101) })}`, { token: t })).status,
    ).to.equal(422);
    expect((await app.request('GET', `${V1}/customers?search=a%00b`, { token: t })).status).to.equal(422);
  });

  it('filters by updated_since (updated_at >= value) and answers 422 for a value that is not a date-time', async () => {
    const g = await makeTenant();
    const t = (await makeIntegrationToken(g)).token;
    const gIds = await addCustomers(g, 4, { start: new Date('2026-03-01T00:00:00Z') });
    const get = (v: string) => app.request('GET', `${V1}/customers${qs({ updated_since: v })}`, { token: t });
    const boundary = await get('2026-03-01T00:02:00Z');
    expect(boundary.body.data.map((c: { id: number }) => c.id)).to.deep.equal([gIds[3], gIds[2]]);
    expect(boundary.body.total).to.equal(2);
    const offset = await get('2026-03-01T07:01:00+07:00');
    expect(offset.body.data.map((c: { id: number }) => c.id)).to.deep.equal([gIds[3], gIds[2], gIds[1]]);
    expect((await get('2027-01-01T00:00:00Z')).body).to.deep.include({ total: 0, data: [] });
    await tenantKnex(g.tenant.id)('customers')
      .where({ id: gIds[0] })
      .update({ updated_at: new Date('2026-06-01T00:00:00Z') });
    const after = await get('2026-05-01T00:00:00Z');
    expect(after.body.data.map((c: { id: number }) => c.id)).to.deep.equal([gIds[0]]);
    const withStatus = await app.request(
      'GET',
      `${V1}/customers${qs({ updated_since: '2026-05-01T00:00:00Z', status: 'suspended' })}`,
      { token: t },
    );
    expect(withStatus.body.total).to.equal(0);
    for (const v of ['yesterday', '2026-03-01', '2026-13-01T00:00:00Z', '1700000000', '']) {
      const res = await get(v);
      expect(res.status, v).to.equal(422);
      expect(res.body.errors, v).to.have.property('updated_since');
    }
  });
});
