import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { countRows, makeWorld, V1, type World } from './world.js';

describe('external v1: Idempotency-Key on the two POSTs (issue 2 §6)', () => {
  let app: TestApp;
  let a: World;
  let b: World;

  before(async () => {
    app = await startTestApp();
    a = await makeWorld();
    b = await makeWorld();
  });

  const cases = [
    {
      name: 'customers',
      table: 'customers',
      body: { name: 'Idem Potent', phone: '0812', address: 'Jl. Sama' },
      other: { name: 'Other Body', phone: '0812', address: 'Jl. Sama' },
    },
    {
      name: 'tickets',
      table: 'tickets',
      body: { type: 'no internet', external_id: 'CRM-1' },
      other: { type: 'no internet', external_id: 'CRM-2' },
    },
  ];

  for (const c of cases) {
    describe(c.name, () => {
      const post = (w: World, key: string | undefined, body: unknown) =>
        app.request('POST', `${V1}/${c.name}`, {
          token: w.write,
          body,
          headers: key ? { 'idempotency-key': key } : {},
        });

      it('replays the first response for a retry with the same key and body, creating nothing more', async () => {
        const key = `retry-${c.name}-1`;
        const before = await countRows(c.table, a.tenant.id);
        const first = await post(a, key, c.body);
        expect(first.status).to.equal(201);
        expect(first.headers.get('idempotent-replayed')).to.equal(null);
        expect(await countRows(c.table, a.tenant.id)).to.equal(before + 1);
        // same body with its keys in another order is the same request
        const reordered = Object.fromEntries(Object.entries(c.body).reverse());
        for (const body of [c.body, reordered]) {
          const again = await post(a, key, body);
          expect(again.status).to.equal(201);
          expect(again.headers.get('idempotent-replayed')).to.equal('true');
          expect(again.body).to.deep.equal(first.body);
          expect(again.body.data.id).to.equal(first.body.data.id);
        }
        expect(await countRows(c.table, a.tenant.id)).to.equal(before + 1);
      });

      it('answers 409 for the same key with a different body and creates nothing', async () => {
        const key = `conflict-${c.name}`;
        const first = await post(a, key, c.body);
        expect(first.status).to.equal(201);
        const before = await countRows(c.table, a.tenant.id);
        const res = await post(a, key, c.other);
        expect(res.status).to.equal(409);
        expect(res.body.code).to.equal('CONFLICT');
        expect(await countRows(c.table, a.tenant.id)).to.equal(before);
      });

      it('lets different tenants use the same key independently', async () => {
        const key = `shared-${c.name}`;
        const ra = await post(a, key, c.body);
        const rb = await post(b, key, c.body);
        expect(ra.status).to.equal(201);
        expect(rb.status).to.equal(201);
        expect(rb.headers.get('idempotent-replayed')).to.equal(null);
        expect(rb.body.data.id).to.not.equal(ra.body.data.id);
        expect((await tenantKnex(b.tenant.id)(c.table).where({ id: rb.body.data.id }).first()).tenant_id).to.equal(
          b.tenant.id,
        );
      });

      it('does not remember a failed request: a corrected retry with the same key succeeds', async () => {
        const key = `fail-${c.name}`;
        const bad = await post(a, key, { ...c.body, [c.name === 'customers' ? 'status' : 'priority']: 'nonsense' });
        expect(bad.status).to.equal(422);
        const good = await post(a, key, c.body);
        expect(good.status).to.equal(201);
        expect(good.headers.get('idempotent-replayed')).to.equal(null);
      });

      it('creates anew for every request without a key', async () => {
        const before = await countRows(c.table, a.tenant.id);
        const one = await post(a, undefined, c.body);
        const two = await post(a, undefined, c.body);
        expect(two.body.data.id).to.not.equal(one.body.data.id);
        expect(await countRows(c.table, a.tenant.id)).to.equal(before + 2);
      });
    });
  }

  it('answers 422 for a key that is too long or not visible ASCII', async () => {
    for (const key of ['x'.repeat(256), 'schlüssel', 'with space']) {
      const res = await app.request('POST', `${V1}/tickets`, {
        token: a.write,
        body: { type: 'x' },
        headers: { 'idempotency-key': key },
      });
      expect(res.status, key).to.equal(422);
    }
  });
});
