import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { countRows, ENDPOINTS, makeWorld, snapshot, V1, type World } from './world.js';

/** Flips one hex digit of the secret: same shape, wrong checksum. */
function breakChecksum(token: string): string {
  const i = token.length - 20;
  return token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
}

describe('external v1: access rules (document 1 "Authentication", "Errors")', () => {
  let app: TestApp;
  let a: World;
  let b: World;
  let demo: World;

  before(async () => {
    app = await startTestApp();
    a = await makeWorld();
    b = await makeWorld();
    demo = await makeWorld({ demo: true });
  });

  it('answers 401 {message, code: UNAUTHENTICATED} for every endpoint x every bad credential, never redirecting', async () => {
    const revoked = await makeIntegrationToken(a, 'read_write');
    await env.knex('auth_tokens').where({ id: revoked.data.id }).update({ revoked_at: env.knex.fn.now() });
    const expired = await makeIntegrationToken(a, 'read_write');
    await env
      .knex('auth_tokens')
      .where({ id: expired.data.id })
      .update({ expires_at: new Date(Date.now() - 3600_000) });
    const credentials: [string, string | undefined, Record<string, string>?][] = [
      ['no token', undefined],
      ['garbage', 'garbage'],
      ['wrong checksum', breakChecksum(a.write)],
      ['revoked', revoked.token],
      ['expired', expired.token],
      ['login token', a.adminToken],
      ['not a Bearer header', undefined, { authorization: `Basic ${Buffer.from(a.write).toString('base64')}` }],
    ];
    const before = await snapshot([a.tenant.id]);
    for (const e of ENDPOINTS) {
      for (const [label, token, headers] of credentials) {
        const res = await app.request(e.method, e.path(a.ids), { token, headers, body: e.body?.(a.ids) });
        expect(res.status, `${e.name} / ${label}`).to.equal(401);
        expect(res.body, `${e.name} / ${label}`).to.deep.equal({
          message: 'Unauthenticated.',
          code: 'UNAUTHENTICATED',
        });
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        expect(res.headers.get('location')).to.equal(null);
      }
    }
    expect(await snapshot([a.tenant.id])).to.equal(before);
  });

  it('answers 403 for every write with a read token, and creates nothing', async () => {
    const writes = ENDPOINTS.filter((e) => e.access === 'write');
    expect(writes.map((e) => e.name)).to.deep.equal(['customers.create', 'tickets.create']);
    const before = await snapshot([a.tenant.id]);
    for (const e of writes) {
      const res = await app.request(e.method, e.path(a.ids), {
        token: a.read,
        body: e.body!(a.ids),
        headers: { 'idempotency-key': `k-${e.name}` },
      });
      expect(res.status, e.name).to.equal(403);
      expect(res.body.code, e.name).to.equal('FORBIDDEN');
    }
    expect(await snapshot([a.tenant.id])).to.equal(before);
  });

  it('lets a read token and a read_write token read every read endpoint', async () => {
    for (const e of ENDPOINTS.filter((x) => x.access === 'read')) {
      for (const token of [a.read, a.write]) {
        const res = await app.request(e.method, e.path(a.ids), { token });
        expect(res.status, e.name).to.equal(200);
      }
    }
  });

  it('answers 404 for every endpoint with an id of another tenant, and changes nothing', async () => {
    const withId = ENDPOINTS.filter((e) => e.hasId);
    expect(withId.map((e) => e.name)).to.deep.equal(['customers.show', 'invoices.show', 'tickets.show']);
    const before = await snapshot([a.tenant.id, b.tenant.id]);
    for (const e of withId) {
      const own = await app.request(e.method, e.path(a.ids), { token: a.write });
      expect(own.status, e.name).to.equal(200);
      const res = await app.request(e.method, e.path(b.ids), { token: a.write });
      expect(res.status, e.name).to.equal(404);
      expect(res.body.code, e.name).to.equal('NOT_FOUND');
      expect(res.text, e.name).not.to.include(String(b.tenant.slug));
    }
    expect(await snapshot([a.tenant.id, b.tenant.id])).to.equal(before);
  });

  it("lists nothing for the customer_id / olt_id filters with another tenant's id", async () => {
    const cases: [string, string, string][] = [
      ['invoices', 'customer_id', 'customerId'],
      ['tickets', 'customer_id', 'customerId'],
      ['onus', 'customer_id', 'customerId'],
      ['onus', 'olt_id', 'oltId'],
    ];
    const before = await snapshot([a.tenant.id, b.tenant.id]);
    for (const [resource, param, key] of cases) {
      const own = await app.request('GET', `${V1}/${resource}?${param}=${(a.ids as any)[key]}`, { token: a.read });
      expect(own.status).to.equal(200);
      expect(own.body.total, `${resource} ${param} own`).to.equal(1);
      const res = await app.request('GET', `${V1}/${resource}?${param}=${(b.ids as any)[key]}`, { token: a.read });
      expect(res.status).to.equal(200);
      expect(res.body, `${resource} ${param} foreign`).to.deep.include({ data: [], total: 0, from: null, to: null });
    }
    expect(await snapshot([a.tenant.id, b.tenant.id])).to.equal(before);
  });

  it("refuses creates that reference another tenant's records with 422 and creates nothing", async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [`${V1}/customers`, { name: 'X', phone: '1', address: 'A', package_id: b.ids.packageId }, 'package_id'],
      [`${V1}/tickets`, { type: 'x', customer_id: b.ids.customerId }, 'customer_id'],
      [`${V1}/tickets`, { type: 'x', onu_id: b.ids.onuId }, 'onu_id'],
    ];
    const before = await snapshot([a.tenant.id, b.tenant.id]);
    for (const [path, body, field] of cases) {
      const res = await app.request('POST', path, { token: a.write, body });
      expect(res.status, field).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(res.body.errors, field).to.have.property(field);
    }
    expect(await snapshot([a.tenant.id, b.tenant.id])).to.equal(before);
  });

  it("never shows another tenant's records in any list", async () => {
    for (const e of ENDPOINTS.filter((x) => x.method === 'GET' && !x.hasId && x.path(a.ids).match(/s$/))) {
      const res = await app.request('GET', e.path(a.ids), { token: a.read });
      expect(res.status, e.name).to.equal(200);
      expect(res.body.data.length, e.name).to.be.greaterThan(0);
      const ids = res.body.data.map((r: { id: number }) => r.id);
      const foreign = {
        'customers.list': b.ids.customerId,
        'packages.list': b.ids.packageId,
        'invoices.list': b.ids.invoiceId,
        'tickets.list': b.ids.ticketId,
        'olts.list': b.ids.oltId,
        'onus.list': b.ids.onuId,
      }[e.name as 'olts.list'];
      expect(ids, e.name).not.to.include(foreign);
    }
  });

  it('refuses both writes of a demo-mode tenant with 403 demo_guard_blocked and creates nothing; reads still work', async () => {
    const before = await snapshot([demo.tenant.id]);
    const customers = await countRows('customers', demo.tenant.id);
    const tickets = await countRows('tickets', demo.tenant.id);
    for (const e of ENDPOINTS.filter((x) => x.access === 'write')) {
      const res = await app.request(e.method, e.path(demo.ids), {
        token: demo.write,
        body: e.body!(demo.ids),
        headers: { 'idempotency-key': 'demo-1' },
      });
      expect(res.status, e.name).to.equal(403);
      expect(res.body.code, e.name).to.equal('demo_guard_blocked');
    }
    expect(await countRows('customers', demo.tenant.id)).to.equal(customers);
    expect(await countRows('tickets', demo.tenant.id)).to.equal(tickets);
    expect(await snapshot([demo.tenant.id])).to.equal(before);
    const read = await app.request('GET', `${V1}/customers`, { token: demo.read });
    expect(read.status).to.equal(200);
    expect(read.body.total).to.equal(customers);
  });
});
