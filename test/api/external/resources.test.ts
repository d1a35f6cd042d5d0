import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { createToken } from '../../../api/tokens/service.js';
import { env } from '../../helpers/env.js';
import { customerCode } from '../../../api/external/customers.js';
import { qs, V1 } from './world.js';

/** A timestamp `i` minutes after a fixed start (distinct created_at per row). */
const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, i));

describe('external v1: health, me, packages, invoices, tickets, OLTs, ONUs (document 1)', () => {
  let app: TestApp;
  let f: TenantFixture;
  let token: string;
  let tokenId: number;
  const ids: Record<string, number> = {};
  /** The token's expiry: a year from now, whole seconds (no fixed calendar date). */
  const EXPIRES = new Date((Math.floor(Date.now() / 1000) + 365 * 86_400) * 1000).toISOString();

  before(async () => {
    app = await startTestApp();
    f = await makeTenant();
    const t = await makeIntegrationToken(f, 'read', EXPIRES);
    token = t.token;
    tokenId = t.data.id;
    const s = f.scope;
    ids.pkgA = (
      await s.insert('packages', {
        name: 'Home 10%',
        price: 150000.5,
        speed_down_kbps: 10000,
        speed_up_kbps: 5000,
        is_active: true,
        created_at: at(1),
      })
    ).id;
    ids.pkgB = (await s.insert('packages', { name: 'Home_20', price: 250000, is_active: false, created_at: at(2) })).id;
    ids.pkgC = (
      await s.insert('packages', {
        name: 'Business 50',
        price: 900000,
        is_active: true,
        is_partner_package: true,
        created_at: at(3),
      })
    ).id;
    const cust = async (name: string, i: number) =>
      (
        await s.insert('customers', {
          code: customerCode(await s.nextNumber('customer')),
          name,
          phone: '1',
          address: 'a',
          created_at: at(i),
        })
      ).id;
    ids.c1 = await cust('Rina Wati', 10);
    ids.c2 = await cust('Joko Widodo', 11);
    ids.olt1 = (
      await s.insert('olts', {
        name: 'OLT Kemang',
        vendor: 'ZTE',
        model: 'C320',
        ip_address: '10.1.0.1',
        location: 'Kemang POP',
        status: 'online',
        created_at: at(20),
      })
    ).id;
    ids.olt2 = (
      await s.insert('olts', {
        name: 'OLT Depok',
        vendor: 'Huawei',
        model: 'MA5608T',
        ip_address: '10.2.0.1',
        location: 'Depok',
        status: 'offline',
        created_at: at(21),
      })
    ).id;
    ids.onu1 = (
      await s.insert('onus', {
        olt_id: ids.olt1,
        customer_id: ids.c1,
        serial_number: 'ZTEGAAAA0001',
        pon_port: '1/1/1',
        status: 'online',
        rx_power: -20.5,
        tx_power: 2.25,
        bandwidth_pct: 12.5,
        uptime: 86400,
        created_at: at(30),
      })
    ).id;
    ids.onu2 = (
      await s.insert('onus', {
        olt_id: ids.olt2,
        customer_id: ids.c2,
        serial_number: 'HWTCBBBB0002',
        status: 'los',
        created_at: at(31),
      })
    ).id;
    ids.onu3 = (
      await s.insert('onus', {
        olt_id: ids.olt1,
        customer_id: null,
        serial_number: 'ZTEGCCCC0003',
        status: 'offline',
        created_at: at(32),
      })
    ).id;
    ids.onuOff = (
      await s.insert('onus', {
        olt_id: ids.olt1,
        customer_id: ids.c1,
        serial_number: 'ZTEGDDDD0004',
        status: 'online',
        is_active: false,
        created_at: at(33),
      })
    ).id;
    const inv = async (n: string, c: number, status: string, i: number) =>
      (
        await s.insert('invoices', {
          invoice_number: n,
          customer_id: c,
          package_id: ids.pkgA,
          amount: 150000.5,
          status,
          due_date: '2026-02-01',
          period_start: '2026-01-01',
          period_end: '2026-01-31',
          created_at: at(i),
          updated_at: at(i),
        })
      ).id;
    ids.inv1 = await inv('INV-2026-0001', ids.c1, 'unpaid', 40);
    ids.inv2 = await inv('INV-2026-0002', ids.c1, 'overdue', 41);
    ids.inv3 = await inv('INV-2026-0003', ids.c2, 'paid', 42);
    const tck = async (
      n: string,
      c: number | null,
      status: string,
      priority: string,
      i: number,
      extra: Record<string, unknown> = {},
    ) =>
      (
        await s.insert('tickets', {
          ticket_number: n,
          customer_id: c,
          type: 'gangguan',
          status,
          priority,
          created_at: at(i),
          ...extra,
        })
      ).id;
    ids.t1 = await tck('TCK-000001', ids.c1, 'open', 'high', 50, { external_id: 'CRM-77', onu_id: ids.onu1 });
    ids.t2 = await tck('TCK-000002', ids.c2, 'resolved', 'low', 51, { contact_name: 'Bu Ani' });
    ids.t3 = await tck('TCK-000003', null, 'open', 'medium', 52);
  });

  const get = async (path: string, params: Record<string, string | number | undefined> = {}) => {
    const res = await app.request('GET', `${V1}${path}${qs(params)}`, { token });
    expect(res.status, `${path} ${JSON.stringify(params)}: ${res.text}`).to.equal(200);
    return res.body;
  };
  const idsOf = (body: { data: { id: number }[] }) => body.data.map((r) => r.id);

  it('health: {status: "ok", tenant, api_version: "v1", time}', async () => {
    const body = await get('/health');
    expect(Object.keys(body).sort()).to.deep.equal(['api_version', 'status', 'tenant', 'time']);
    expect(body).to.include({ status: 'ok', api_version: 'v1' });
    expect(body.tenant).to.deep.equal({ id: f.tenant.id, slug: f.tenant.slug, name: f.tenant.name, demo_mode: false });
    expect(Math.abs(new Date(body.time).getTime() - Date.now())).to.be.below(60_000);
  });

  it('me: tenant, owner user of the token, token {id, name, access, abilities, expires_at}; never the token', async () => {
    const res = await app.request('GET', `${V1}/me`, { token });
    const row = await env.knex('auth_tokens').where({ id: tokenId }).first();
    expect(res.body.tenant.id).to.equal(f.tenant.id);
    expect(res.body.user).to.deep.equal({
      id: f.admin.id,
      name: `Tenant ${f.tenant.slug} Admin`,
      email: f.admin.email,
    });
    expect(res.body.token).to.deep.equal({
      id: tokenId,
      name: row.name,
      access: 'read',
      abilities: [`tenant:${f.tenant.id}`, 'read'],
      expires_at: EXPIRES,
    });
    expect(res.text).not.to.include(token);
  });

  it("me: user is null when the token's owner was deleted; the token keeps working", async () => {
    const owner = await makeUser(f.tenant.id, 'Administrator');
    const t = await createToken(f.scope, owner.id, { name: 'orphan', access: 'read_write' });
    expect((await app.request('GET', `${V1}/me`, { token: t.token })).body.user).to.deep.include({
      id: owner.id,
      email: owner.email,
    });
    await env.knex('users').where({ id: owner.id }).del();
    const res = await app.request('GET', `${V1}/me`, { token: t.token });
    expect(res.status).to.equal(200);
    expect(res.body.user).to.equal(null);
    expect(res.body.token).to.include({ id: t.data.id, name: 'orphan', access: 'read_write' });
  });

  it('packages: read shape, newest first, is_active filter (true/false/1/0), search with % and _ as literals', async () => {
    const all = await get('/packages');
    expect(idsOf(all)).to.deep.equal([ids.pkgC, ids.pkgB, ids.pkgA]);
    expect(all.data[2]).to.deep.include({
      name: 'Home 10%',
      price: 150000.5,
      speed_down_kbps: 10000,
      speed_up_kbps: 5000,
      service_type: 'pppoe',
      is_active: true,
      is_partner_package: false,
    });
    expect(Object.keys(all.data[0]).sort()).to.deep.equal([
      'created_at',
      'description',
      'id',
      'is_active',
      'is_partner_package',
      'name',
      'price',
      'service_type',
      'speed_down_kbps',
      'speed_up_kbps',
      'updated_at',
    ]);
    expect(idsOf(await get('/packages', { is_active: 'true' }))).to.deep.equal([ids.pkgC, ids.pkgA]);
    expect(idsOf(await get('/packages', { is_active: '1' }))).to.deep.equal([ids.pkgC, ids.pkgA]);
    expect(idsOf(await get('/packages', { is_active: 'false' }))).to.deep.equal([ids.pkgB]);
    expect(idsOf(await get('/packages', { is_active: '0' }))).to.deep.equal([ids.pkgB]);
    expect(idsOf(await get('/packages', { search: 'home' }))).to.deep.equal([ids.pkgB, ids.pkgA]);
    expect(idsOf(await get('/packages', { search: '%' }))).to.deep.equal([ids.pkgA]);
    expect(idsOf(await get('/packages', { search: '_' }))).to.deep.equal([ids.pkgB]);
    expect(idsOf(await get('/packages', { search: 'home', is_active: 'true' }))).to.deep.equal([ids.pkgA]);
    expect(await get('/packages', { per_page: 2, page: 2 })).to.deep.include({
      total: 3,
      last_page: 2,
      from: 3,
      to: 3,
    });
    expect((await app.request('GET', `${V1}/packages?is_active=yes`, { token })).status).to.equal(422);
  });

  it('invoices: read shape with customer {id, code, name}; filters status, customer_id, search, updated_since', async () => {
    const all = await get('/invoices');
    expect(idsOf(all)).to.deep.equal([ids.inv3, ids.inv2, ids.inv1]);
    const c1 = await tenantKnex(f.tenant.id)('customers').where({ id: ids.c1 }).first();
    expect(all.data[2]).to.deep.equal({
      id: ids.inv1,
      invoice_number: 'INV-2026-0001',
      customer_id: ids.c1,
      customer: { id: ids.c1, code: c1.code, name: 'Rina Wati' },
      package_id: ids.pkgA,
      amount: 150000.5,
      status: 'unpaid',
      due_date: '2026-02-01',
      paid_at: null,
      period_start: '2026-01-01',
      period_end: '2026-01-31',
      created_at: at(40).toISOString(),
      updated_at: at(40).toISOString(),
    });
    expect(idsOf(await get('/invoices', { status: 'unpaid' }))).to.deep.equal([ids.inv1]);
    expect(idsOf(await get('/invoices', { status: 'overdue' }))).to.deep.equal([ids.inv2]);
    expect(idsOf(await get('/invoices', { customer_id: ids.c1 }))).to.deep.equal([ids.inv2, ids.inv1]);
    expect(idsOf(await get('/invoices', { customer_id: ids.c1, status: 'overdue' }))).to.deep.equal([ids.inv2]);
    expect(idsOf(await get('/invoices', { search: '0003' }))).to.deep.equal([ids.inv3]);
    expect(idsOf(await get('/invoices', { search: 'rina' }))).to.deep.equal([ids.inv2, ids.inv1]);
    expect(idsOf(await get('/invoices', { updated_since: at(41).toISOString() }))).to.deep.equal([ids.inv3, ids.inv2]);
    expect((await get('/invoices', { status: 'unpaid' })).total).to.equal(1);
    const detail = await get(`/invoices/${ids.inv1}`);
    expect(detail.data).to.deep.equal(all.data[2]);
    for (const bad of ['status=draft', 'customer_id=abc', 'customer_id=0', 'updated_since=today']) {
      expect((await app.request('GET', `${V1}/invoices?${bad}`, { token })).status, bad).to.equal(422);
    }
  });

  it('tickets: read shape; filters status, priority, customer_id, search', async () => {
    const all = await get('/tickets');
    expect(idsOf(all)).to.deep.equal([ids.t3, ids.t2, ids.t1]);
    const t1 = all.data[2];
    expect(t1).to.include({
      ticket_number: 'TCK-000001',
      external_id: 'CRM-77',
      customer_id: ids.c1,
      status: 'open',
      priority: 'high',
      type: 'gangguan',
    });
    expect(t1.customer).to.include({ id: ids.c1, name: 'Rina Wati' });
    expect(t1.onu).to.include({ id: ids.onu1, serial_number: 'ZTEGAAAA0001' });
    for (const k of [
      'assigned_to',
      'assignee',
      'sla_breached',
      'response_due_at',
      'resolution_due_at',
      'source',
      'description',
    ])
      expect(t1).to.have.property(k);
    expect(idsOf(await get('/tickets', { status: 'open' }))).to.deep.equal([ids.t3, ids.t1]);
    expect(idsOf(await get('/tickets', { priority: 'low' }))).to.deep.equal([ids.t2]);
    expect(idsOf(await get('/tickets', { customer_id: ids.c2 }))).to.deep.equal([ids.t2]);
    expect(idsOf(await get('/tickets', { status: 'open', priority: 'high' }))).to.deep.equal([ids.t1]);
    expect(idsOf(await get('/tickets', { search: 'crm-77' }))).to.deep.equal([ids.t1]);
    expect(idsOf(await get('/tickets', { search: 'ani' }))).to.deep.equal([ids.t2]);
    expect(idsOf(await get('/tickets', { search: 'joko' }))).to.deep.equal([ids.t2]);
    expect(await get('/tickets', { per_page: 1, page: 2 })).to.deep.include({ total: 3, last_page: 3, from: 2, to: 2 });
    expect((await get(`/tickets/${ids.t1}`)).data).to.deep.equal(t1);
    for (const bad of ['status=closedd', 'priority=urgent', 'customer_id=-1']) {
      expect((await app.request('GET', `${V1}/tickets?${bad}`, { token })).status, bad).to.equal(422);
    }
  });

  it('OLTs: read shape; filters status and search', async () => {
    const all = await get('/olts');
    expect(idsOf(all)).to.deep.equal([ids.olt2, ids.olt1]);
    expect(all.data[1]).to.deep.include({
      name: 'OLT Kemang',
      vendor: 'ZTE',
      model: 'C320',
      ip_address: '10.1.0.1',
      location: 'Kemang POP',
      status: 'online',
      pon_ports: 16,
    });
    expect(Object.keys(all.data[0]).sort()).to.deep.equal([
      'created_at',
      'id',
      'ip_address',
      'location',
      'model',
      'name',
      'pon_ports',
      'status',
      'updated_at',
      'vendor',
    ]);
    expect(idsOf(await get('/olts', { status: 'offline' }))).to.deep.equal([ids.olt2]);
    expect(idsOf(await get('/olts', { search: 'kemang' }))).to.deep.equal([ids.olt1]);
    expect(idsOf(await get('/olts', { search: '10.2.' }))).to.deep.equal([ids.olt2]);
    expect(idsOf(await get('/olts', { search: 'huawei', status: 'online' }))).to.deep.equal([]);
    expect((await app.request('GET', `${V1}/olts?status=broken`, { token })).status).to.equal(422);
  });

  it('ONUs: active only; read shape; filters status, customer_id, olt_id, search', async () => {
    const all = await get('/onus');
    expect(idsOf(all)).to.deep.equal([ids.onu3, ids.onu2, ids.onu1]);
    expect(all.total).to.equal(3);
    const c1 = await tenantKnex(f.tenant.id)('customers').where({ id: ids.c1 }).first();
    expect(all.data[2]).to.deep.include({
      id: ids.onu1,
      customer_id: ids.c1,
      customer: { id: ids.c1, code: c1.code, name: 'Rina Wati' },
      olt: { id: ids.olt1, name: 'OLT Kemang' },
      serial_number: 'ZTEGAAAA0001',
      pon_port: '1/1/1',
      rx_power: -20.5,
      tx_power: 2.25,
      bandwidth_pct: 12.5,
      status: 'online',
      uptime: 86400,
      last_seen: null,
    });
    expect(all.data[0].customer).to.equal(null);
    expect(idsOf(await get('/onus', { status: 'los' }))).to.deep.equal([ids.onu2]);
    expect(idsOf(await get('/onus', { customer_id: ids.c1 }))).to.deep.equal([ids.onu1]);
    expect(idsOf(await get('/onus', { olt_id: ids.olt1 }))).to.deep.equal([ids.onu3, ids.onu1]);
    expect(idsOf(await get('/onus', { olt_id: ids.olt1, status: 'offline' }))).to.deep.equal([ids.onu3]);
    expect(idsOf(await get('/onus', { search: 'hwtc' }))).to.deep.equal([ids.onu2]);
    expect(idsOf(await get('/onus', { search: 'dddd' }))).to.deep.equal([]);
    expect((await app.request('GET', `${V1}/onus?status=up`, { token })).status).to.equal(422);
  });

  it('customer detail: package, the active ONU, latest 5 invoices and tickets newest first', async () => {
    for (let i = 0; i < 6; i++) {
      await f.scope.insert('invoices', {
        invoice_number: `INV-X-${i}`,
        customer_id: ids.c1,
        amount: 1,
        status: 'paid',
        due_date: '2026-03-01',
        created_at: at(60 + i),
      });
      await f.scope.insert('tickets', {
        ticket_number: `TCK-X-${i}`,
        customer_id: ids.c1,
        type: 'x',
        created_at: at(60 + i),
      });
    }
    await tenantKnex(f.tenant.id)('customers').where({ id: ids.c1 }).update({ package_id: ids.pkgC });
    const d = (await get(`/customers/${ids.c1}`)).data;
    expect(d.package).to.deep.equal({ id: ids.pkgC, name: 'Business 50' });
    expect(d.onu).to.deep.equal({
      id: ids.onu1,
      serial_number: 'ZTEGAAAA0001',
      status: 'online',
      rx_power: -20.5,
      tx_power: 2.25,
      last_seen: null,
    });
    expect(d.latest_invoices.map((i: { invoice_number: string }) => i.invoice_number)).to.deep.equal([
      'INV-X-5',
      'INV-X-4',
      'INV-X-3',
      'INV-X-2',
      'INV-X-1',
    ]);
    expect(d.latest_tickets.map((t: { ticket_number: string }) => t.ticket_number)).to.deep.equal([
      'TCK-X-5',
      'TCK-X-4',
      'TCK-X-3',
      'TCK-X-2',
      'TCK-X-1',
    ]);
    expect(d.latest_invoices[0].customer.id).to.equal(ids.c1);
    const keys = [
      'address',
      'billing_cycle',
      'billing_day',
      'code',
      'created_at',
      'customer_tier',
      'email',
      'id',
      'latitude',
      'latest_invoices',
      'latest_tickets',
      'longitude',
      'mac_address',
      'name',
      'onu',
      'package',
      'phone',
      'service_type',
      'status',
      'updated_at',
    ].sort();
    expect(Object.keys(d).sort()).to.deep.equal(keys);
    const listed = (await get('/customers')).data.find((c: { id: number }) => c.id === ids.c1);
    expect(Object.keys(listed).sort()).to.deep.equal(keys.filter((k) => !k.startsWith('latest_')));
    expect(listed.onu.id).to.equal(ids.onu1);
    const { latest_invoices: _i, latest_tickets: _t, ...rest } = d;
    expect(listed).to.deep.equal(rest);
  });

  it('answers 404 for unknown ids and for ids that are not digits, 422 for digit ids out of range', async () => {
    for (const r of ['customers', 'invoices', 'tickets']) {
      const res = await app.request('GET', `${V1}/${r}/2147483647`, { token });
      expect(res.status, r).to.equal(404);
      expect(res.body.code).to.equal('NOT_FOUND');
      // DESIGN.md §10 "path ids": a non-digit segment never matches `/{id}` (docs/decisions.md)
      for (const bad of ['abc', '-3', '1.5', '0x1', '1e3', '%201']) {
        const miss = await app.request('GET', `${V1}/${r}/${bad}`, { token });
        expect(miss.status, `${r}/${bad}`).to.equal(404);
        expect(miss.body).to.deep.equal({ message: 'Route not found.', code: 'NOT_FOUND' });
      }
      for (const bad of ['0', '99999999999']) {
        expect((await app.request('GET', `${V1}/${r}/${bad}`, { token })).status, `${r}/${bad}`).to.equal(422);
      }
    }
  });
});
