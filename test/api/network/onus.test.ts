import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

/** Issue 8 item 3: /api/onus CRUD, serial unique per tenant (409), DELETE deactivates, audit, tenant confinement. */
describe('/api/onus', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };
  let basics: Awaited<ReturnType<typeof seedBasics>>;
  let bBasics: Awaited<ReturnType<typeof seedBasics>>;
  let seq = 0;

  const serial = () => `HWTC${Date.now().toString(16).slice(-6).toUpperCase()}${String(++seq).padStart(2, '0')}`;
  const create = (body: Record<string, unknown>, f: TenantFixture = a) =>
    app.request('POST', '/api/onus', { token: f.adminToken, body });
  const audits = (action: string, id: number) =>
    env.knex('audit_log').where({ tenant_id: a.tenant.id, action, subject_type: 'onus', subject_id: id });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
    basics = await seedBasics(a);
    bBasics = await seedBasics(b);
  });

  it('creates an ONU: 201, serial upper-case, offline without readings until polled, audited', async () => {
    const sn = serial();
    const res = await create({
      serial_number: sn.toLowerCase(),
      olt_id: basics.oltId,
      customer_id: basics.customerId,
      pon_port: '1/1/3',
    });
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({
      serial_number: sn,
      olt_id: basics.oltId,
      customer_id: basics.customerId,
      pon_port: '1/1/3',
      status: 'offline',
      rx_power: null,
      tx_power: null,
      uptime: null,
      last_seen: null,
      is_active: true,
    });
    expect(d.olt.id).to.equal(basics.oltId);
    expect(d.customer.id).to.equal(basics.customerId);
    const [audit] = await audits('onus.created', d.id);
    expect(audit.after).to.include({ serial_number: sn, olt_id: basics.oltId });
    const shown = await app.request('GET', `/api/onus/${d.id}`, { token: tech.token });
    expect(shown.body.data).to.deep.equal(d);
  });

  it('409 CONFLICT for a serial number the tenant has (any case, inactive ones too); another tenant may use it', async () => {
    const sn = serial();
    const first = await create({ serial_number: sn, olt_id: basics.oltId });
    expect(first.status).to.equal(201);
    const dup = await create({ serial_number: sn.toLowerCase() });
    expect(dup.status).to.equal(409);
    expect(dup.body.code).to.equal('CONFLICT');
    await app.request('DELETE', `/api/onus/${first.body.data.id}`, { token: a.adminToken });
    expect((await create({ serial_number: sn })).status).to.equal(409);
    expect((await create({ serial_number: sn }, b)).status).to.equal(201);
    const other = (await create({ serial_number: serial() })).body.data.id;
    const rename = await app.request('PUT', `/api/onus/${other}`, { token: a.adminToken, body: { serial_number: sn } });
    expect(rename.status).to.equal(409);
    expect(
      await env.knex('onus').where({ tenant_id: a.tenant.id }).whereRaw('upper(serial_number) = ?', [sn]).count(),
    ).to.deep.equal([{ count: 1 }]);
  });

  it('refuses bad bodies, foreign OLT and customer ids, and status in PUT with 422', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ olt_id: basics.oltId }, 'serial_number'],
      [{ serial_number: 'ZT' }, 'serial_number'],
      [{ serial_number: 'ZTEG 1234' }, 'serial_number'],
      [{ serial_number: serial(), olt_id: bBasics.oltId }, 'olt_id'],
      [{ serial_number: serial(), customer_id: bBasics.customerId }, 'customer_id'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(res.body.errors), JSON.stringify(body)).to.include(field);
    }
    const status = await app.request('PUT', `/api/onus/${basics.onuId}`, {
      token: a.adminToken,
      body: { status: 'online' },
    });
    expect(status.status).to.equal(422);
    expect(status.body.errors.status[0]).to.match(/onu-poll/);
    const moved = await app.request('PUT', `/api/onus/${basics.onuId}`, {
      token: a.adminToken,
      body: { olt_id: bBasics.oltId },
    });
    expect(moved.status).to.equal(422);
    expect((await env.knex('onus').where({ id: basics.onuId }).first()).olt_id).to.equal(basics.oltId);
  });

  it('PUT changes the fields sent and keeps the readings; audited with before and after', async () => {
    const before = await env.knex('onus').where({ id: basics.onuId }).first();
    const res = await app.request('PUT', `/api/onus/${basics.onuId}`, {
      token: a.adminToken,
      body: { pon_port: '1/2/7', customer_id: null },
    });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ pon_port: '1/2/7', customer_id: null, customer: null, olt_id: basics.oltId });
    expect(res.body.data).to.include({ status: before.status, rx_power: before.rx_power, tx_power: before.tx_power });
    const [audit] = await audits('onus.updated', basics.onuId);
    expect(audit.before.customer_id).to.equal(basics.customerId);
    expect(audit.after).to.include({ customer_id: null, pon_port: '1/2/7' });
  });

  it('DELETE deactivates (200, is_active false, kept, audited once); the external API no longer lists it; PUT revives it', async () => {
    const id = (await create({ serial_number: serial(), olt_id: basics.oltId })).body.data.id;
    const res = await app.request('DELETE', `/api/onus/${id}`, { token: a.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ id, is_active: false });
    expect((await env.knex('onus').where({ id }).first()).is_active).to.equal(false);
    expect((await app.request('DELETE', `/api/onus/${id}`, { token: a.adminToken })).status).to.equal(200);
    expect(await audits('onus.deactivated', id)).to.have.length(1);
    const inactive = await app.request('GET', `/api/onus?is_active=false&olt_id=${basics.oltId}`, {
      token: tech.token,
    });
    expect(inactive.body.data.map((r: { id: number }) => r.id)).to.include(id);
    const active = await app.request('GET', `/api/onus?is_active=true&olt_id=${basics.oltId}`, { token: tech.token });
    expect(active.body.data.map((r: { id: number }) => r.id)).not.to.include(id);
    const { token: integration } = await makeIntegrationToken(a);
    const external = await app.request('GET', `/api/external/v1/onus?olt_id=${basics.oltId}&per_page=100`, {
      token: integration,
    });
    expect(external.status).to.equal(200);
    expect(external.body.data.map((r: { id: number }) => r.id)).not.to.include(id);
    const back = await app.request('PUT', `/api/onus/${id}`, { token: a.adminToken, body: { is_active: true } });
    expect(back.body.data.is_active).to.equal(true);
  });

  it('lists with search, status, olt_id and customer_id filters; per_page 20; never another tenant', async () => {
    const res = await app.request('GET', `/api/onus?olt_id=${basics.oltId}`, { token: tech.token });
    expect(res.status).to.equal(200);
    expect(res.body.per_page).to.equal(20);
    expect(res.body.data.every((r: { olt_id: number }) => r.olt_id === basics.oltId)).to.equal(true);
    const foreign = await app.request('GET', `/api/onus?olt_id=${bBasics.oltId}`, { token: tech.token });
    expect(foreign.body.total).to.equal(0);
    const bSerial = (await env.knex('onus').where({ id: bBasics.onuId }).first()).serial_number;
    expect((await app.request('GET', `/api/onus?search=${bSerial}`, { token: tech.token })).body.total).to.equal(0);
    const mine = (await env.knex('onus').where({ id: basics.onuId }).first()).serial_number;
    const found = await app.request('GET', `/api/onus?search=${mine.slice(2, 9).toLowerCase()}`, { token: tech.token });
    expect(found.body.data.map((r: { id: number }) => r.id)).to.deep.equal([basics.onuId]);
    const byStatus = await app.request('GET', '/api/onus?status=power_fail', { token: tech.token });
    expect(byStatus.body.data.every((r: { status: string }) => r.status === 'power_fail')).to.equal(true);
  });

  it("answers 404 for another tenant's ONU on every route and changes nothing", async () => {
    const before = await env.knex('onus').where({ id: bBasics.onuId }).first();
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { pon_port: '9/9/9' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await app.request(method, `/api/onus/${bBasics.onuId}`, { token: a.adminToken, body });
      expect(res.status, method).to.equal(404);
    }
    expect(await env.knex('onus').where({ id: bBasics.onuId }).first()).to.deep.equal(before);
  });
});
