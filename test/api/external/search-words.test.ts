import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { customerCode } from '../../../api/external/customers.js';
import { MAX_PREFIX_EXPANSION } from '../../../api/external/query.js';

/** The tenant's search-word dictionary (migration 20261121070000) and the expanded customers search. */
describe('external v1: customers search through the word dictionary', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let token: string;

  async function add(f: TenantFixture, names: string[]): Promise<number[]> {
    const rows = [];
    for (const name of names) {
      const n = await f.scope.nextNumber('customer');
      rows.push({
        tenant_id: f.tenant.id,
        code: customerCode(n),
        name,
        phone: `+6281${String(n).padStart(8, '0')}`,
        address: 'Jl. Test',
        email: `${name.split(' ')[0].toLowerCase()}${n}@mail.test`,
      });
    }
    return (await tenantKnex(f.tenant.id)('customers').insert(rows).returning('id')).map((r: { id: number }) => r.id);
  }
  const words = async (tenantId: number) =>
    Object.fromEntries(
      (await tenantKnex(tenantId)('customer_search_words').where({ tenant_id: tenantId }).select('word', 'n')).map(
        (r: { word: string; n: number }) => [r.word, Number(r.n)],
      ),
    );
  /** Ids matching with PostgreSQL's own prefix query: the reference the expansion must equal. */
  async function reference(tenantId: number, terms: string[]): Promise<number[]> {
    const q = terms.map((t) => `'${t.toLowerCase()}':*`).join(' & ');
    return (
      await tenantKnex(tenantId)('customers')
        .where({ tenant_id: tenantId })
        .whereRaw('search_vector @@ ?::tsquery', [q])
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .pluck('id')
    ).map(Number);
  }
  async function search(s: string): Promise<{ ids: number[]; total: number }> {
    const res = await app.request('GET', `/api/external/v1/customers?per_page=100&search=${encodeURIComponent(s)}`, {
      token,
    });
    expect(res.status, s).to.equal(200);
    return { ids: res.body.data.map((c: { id: number }) => c.id), total: res.body.total };
  }

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    token = (await makeIntegrationToken(a)).token;
    await add(a, ['Budi Santoso', 'Budiman Saputra', 'Siti Budiarti', 'Agus Santosa', 'Dewi Lestari']);
    // more than MAX_PREFIX_EXPANSION words starting with "zz": the term stays a :* prefix
    await add(
      a,
      Array.from({ length: MAX_PREFIX_EXPANSION + 3 }, (_, i) => `Zz${i}x Person`),
    );
    await add(b, ['Budi Tenantb', 'Onlyinb Name']);
  });

  it('keeps one row per lexeme of the tenant with the number of customers carrying it, per tenant', async () => {
    const wa = await words(a.tenant.id);
    expect(wa.budi).to.equal(1);
    expect(wa.budiman).to.equal(1);
    expect(wa.santoso).to.equal(1);
    expect(wa).not.to.have.property('onlyinb');
    const wb = await words(b.tenant.id);
    expect(wb.onlyinb).to.equal(1);
    expect(wb).not.to.have.property('budiman');
  });

  it('follows updates and deletes', async () => {
    const [id] = await add(a, ['Rudi Hartono']);
    expect((await words(a.tenant.id)).hartono).to.equal(1);
    await tenantKnex(a.tenant.id)('customers').where({ id }).update({ name: 'Rudi Wibowo' });
    let w = await words(a.tenant.id);
    expect(w.hartono).to.equal(0);
    expect(w.wibowo).to.equal(1);
    expect((await search('harto')).total).to.equal(0);
    expect((await search('wibo')).ids).to.deep.equal([id]);
    await tenantKnex(a.tenant.id)('customers').where({ id }).delete();
    w = await words(a.tenant.id);
    expect(w.wibowo).to.equal(0);
    expect((await search('wibo')).total).to.equal(0);
  });

  for (const s of [
    'budi',
    'bud',
    'budi sant',
    'santos',
    'sa',
    'zz',
    'zz1',
    'person zz',
    'dewi',
    'nobodyhere',
    'budi nobodyhere',
  ]) {
    it(`"${s}" finds exactly what a :* prefix query finds, with an exact total`, async () => {
      const want = await reference(a.tenant.id, s.split(' '));
      const got = await search(s);
      expect(got.ids).to.deep.equal(want);
      expect(got.total).to.equal(want.length);
    });
  }

  it('pages a search with an exact total, also past the last page', async () => {
    const want = await reference(a.tenant.id, ['zz']);
    const p2 = await app.request('GET', `/api/external/v1/customers?per_page=10&page=2&search=zz`, { token });
    expect(p2.body.data.map((c: { id: number }) => c.id)).to.deep.equal(want.slice(10, 20));
    expect(p2.body.total).to.equal(want.length);
    const past = await app.request('GET', `/api/external/v1/customers?per_page=10&page=100&search=zz`, { token });
    expect(past.body.data).to.deep.equal([]);
    expect(past.body.total).to.equal(want.length);
    const filtered = await app.request('GET', `/api/external/v1/customers?per_page=100&status=suspended&search=budi`, {
      token,
    });
    expect(filtered.body.total).to.equal(0);
  });

  it("never expands into another tenant's words", async () => {
    const got = await search('onlyin');
    expect(got.total).to.equal(0);
    expect(got.ids).to.deep.equal([]);
    const budi = await search('budi');
    const bIds = (await tenantKnex(b.tenant.id)('customers').where({ tenant_id: b.tenant.id }).pluck('id')).map(Number);
    expect(budi.ids.some((id) => bIds.includes(id))).to.equal(false);
  });

  it('treats quotes and tsquery operators in a term as plain text (no injection)', async () => {
    const got = await search("budi' | 'santoso");
    const want = await reference(a.tenant.id, ['budi', 'santoso']);
    expect(got.ids).to.deep.equal(want);
  });
});
