import { expect } from 'chai';
import { MODULES } from '../../../api/tenants/catalog.js';
import { DEFAULT_SLA } from '../../../api/tickets/sla.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

/** Issue 8 item 1: GET/PUT /api/settings and /api/settings/modules. */
describe('/api/settings', () => {
  let app: TestApp;

  const tenantRow = (f: TenantFixture) =>
    env.knex('tenants').where({ id: f.tenant.id }).first('timezone', 'settings', 'modules');

  before(async () => {
    app = await startTestApp();
  });

  it('answers the defaults for a new tenant', async () => {
    const f = await makeTenant();
    const staff = await makeUser(f.tenant.id, 'staff');
    expect((await app.request('GET', '/api/settings', { token: staff.token })).status).to.equal(403);
    const res = await app.request('GET', '/api/settings', { token: f.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({
      timezone: 'Asia/Jakarta',
      currency: 'IDR',
      invoice_due_days: 7,
      isolation_grace_days: null,
      ticket_reopen_enabled: true,
      sla: DEFAULT_SLA,
    });
  });

  it('changes the fields given, keeps the rest (other settings keys included), audits the changed keys', async () => {
    const f = await makeTenant();
    await env
      .knex('tenants')
      .where({ id: f.tenant.id })
      .update({ settings: JSON.stringify({ demo_seed: { size: 'small' } }) });
    const admin = await makeUser(f.tenant.id, 'Administrator');
    const res = await app.request('PUT', '/api/settings', {
      token: admin.token,
      body: {
        timezone: 'Asia/Makassar',
        currency: 'USD',
        invoice_due_days: 14,
        isolation_grace_days: 3,
        ticket_reopen_enabled: false,
        sla: { high: { response_minutes: 30 } },
      },
    });
    expect(res.status).to.equal(200);
    const sla = { ...DEFAULT_SLA, high: { ...DEFAULT_SLA.high, response_minutes: 30 } };
    expect(res.body.data).to.deep.equal({
      timezone: 'Asia/Makassar',
      currency: 'USD',
      invoice_due_days: 14,
      isolation_grace_days: 3,
      ticket_reopen_enabled: false,
      sla,
    });
    const row = await tenantRow(f);
    expect(row.timezone).to.equal('Asia/Makassar');
    expect(row.settings).to.deep.include({ demo_seed: { size: 'small' }, currency: 'USD', invoice_due_days: 14 });
    expect((await app.request('GET', '/api/settings', { token: f.adminToken })).body.data).to.deep.equal(res.body.data);
    const off = await app.request('PUT', '/api/settings', { token: admin.token, body: { isolation_grace_days: null } });
    expect(off.body.data).to.include({ isolation_grace_days: null, invoice_due_days: 14, currency: 'USD' });
    const audit = await env
      .knex('audit_log')
      .where({ tenant_id: f.tenant.id, action: 'settings.updated' })
      .orderBy('id');
    expect(audit).to.have.length(2);
    expect(audit[0]).to.include({ user_id: admin.id, subject_type: 'tenants' });
    expect(audit[0].before).to.deep.equal({
      timezone: 'Asia/Jakarta',
      currency: 'IDR',
      invoice_due_days: 7,
      isolation_grace_days: null,
      ticket_reopen_enabled: true,
      sla: DEFAULT_SLA,
    });
    expect(audit[1].before).to.deep.equal({ isolation_grace_days: 3 });
    expect(audit[1].after).to.deep.equal({ isolation_grace_days: null });
  });

  it('refuses bad values with 422 field errors and changes nothing', async () => {
    const f = await makeTenant();
    const before = await tenantRow(f);
    const cases: [Record<string, unknown>, string][] = [
      [{ timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      [{ timezone: 'WIB' }, 'timezone'],
      [{ timezone: '+07:00' }, 'timezone'],
      [{ timezone: '' }, 'timezone'],
      [{ currency: 'XYZ' }, 'currency'],
      [{ currency: 'idr' }, 'currency'],
      [{ currency: 'RUPIAH' }, 'currency'],
      [{ invoice_due_days: -1 }, 'invoice_due_days'],
      [{ invoice_due_days: 'seven' }, 'invoice_due_days'],
      [{ invoice_due_days: null }, 'invoice_due_days'],
      [{ isolation_grace_days: 1.5 }, 'isolation_grace_days'],
      [{ ticket_reopen_enabled: 'no' }, 'ticket_reopen_enabled'],
      [{ sla: { high: { response_minutes: 0 } } }, 'sla.high.response_minutes'],
      [{ sla: { low: { response_minutes: 5000 } } }, 'sla.low.response_minutes'],
      [{ sla: { urgent: { response_minutes: 5 } } }, 'sla.urgent'],
      [{ language: 'id' }, 'language'],
    ];
    for (const [body, field] of cases) {
      const res = await app.request('PUT', '/api/settings', { token: f.adminToken, body });
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors), JSON.stringify(body)).to.include(field);
    }
    expect(await tenantRow(f)).to.deep.equal(before);
    expect(await env.knex('audit_log').where({ tenant_id: f.tenant.id, action: 'settings.updated' })).to.have.length(0);
  });

  it('the SLA settings drive the ticket due dates (api/tickets/sla.ts reads them)', async () => {
    const f = await makeTenant();
    const basics = await seedBasics(f);
    await app.request('PUT', '/api/settings', {
      token: f.adminToken,
      body: { sla: { high: { response_minutes: 30, resolution_minutes: 120 } } },
    });
    const { token } = await makeIntegrationToken(f, 'read_write');
    const res = await app.request('POST', '/api/external/v1/tickets', {
      token,
      body: { type: 'no internet', priority: 'high', customer_id: basics.customerId },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const t = await env.knex('tickets').where({ id: res.body.data.id }).first();
    expect(t.response_due_at.getTime() - t.created_at.getTime()).to.equal(30 * 60_000);
    expect(t.resolution_due_at.getTime() - t.created_at.getTime()).to.equal(120 * 60_000);
  });

  it('modules: PUT by an Administrator 403, by the Super Admin 200, then module_disabled', async () => {
    const f = await makeTenant();
    const other = await makeTenant();
    const basics = await seedBasics(f);
    const admin = await makeUser(f.tenant.id, 'Administrator');
    const all = Object.fromEntries(MODULES.map((m) => [m, true]));
    const got = await app.request('GET', '/api/settings/modules', { token: admin.token });
    expect(got.status).to.equal(200);
    expect(got.body.data).to.deep.equal(all);

    const refused = await app.request('PUT', '/api/settings/modules', { token: admin.token, body: { tickets: false } });
    expect(refused.status).to.equal(403);
    expect(refused.body).to.deep.equal({ message: 'Only a Super Admin can switch tenant modules.', code: 'FORBIDDEN' });
    expect((await tenantRow(f)).modules).to.deep.equal([...MODULES]);

    const patch = () =>
      app.request('PATCH', `/api/tickets/${basics.ticketId}`, { token: admin.token, body: { status: 'inprogress' } });
    const off = await app.request('PUT', '/api/settings/modules', {
      token: f.adminToken,
      body: { tickets: false, sales: true },
    });
    expect(off.status, JSON.stringify(off.body)).to.equal(200);
    expect(off.body.data).to.deep.equal({ ...all, tickets: false });
    expect((await tenantRow(f)).modules).to.deep.equal(MODULES.filter((m) => m !== 'tickets'));
    const blocked = await patch();
    expect(blocked.status).to.equal(403);
    expect(blocked.body.code).to.equal('module_disabled');
    expect((await env.knex('tickets').where({ id: basics.ticketId }).first()).status).to.equal('open');
    expect((await tenantRow(other)).modules).to.deep.equal([...MODULES]);
    expect((await app.request('GET', '/api/settings/modules', { token: admin.token })).body.data.tickets).to.equal(
      false,
    );

    const audit = await env.knex('audit_log').where({ tenant_id: f.tenant.id, action: 'settings.modules_updated' });
    expect(audit).to.have.length(1);
    expect(audit[0].before).to.deep.equal({ tickets: true });
    expect(audit[0].after).to.deep.equal({ tickets: false });

    const on = await app.request('PUT', '/api/settings/modules', { token: f.adminToken, body: { tickets: true } });
    expect(on.body.data).to.deep.equal(all);
    expect((await patch()).status).to.equal(200);

    for (const [body, field] of [
      [{ ticket: false }, 'ticket'],
      [{ tickets: 'off' }, 'tickets'],
      [{}, 'body'],
    ] as const) {
      const bad = await app.request('PUT', '/api/settings/modules', { token: f.adminToken, body });
      expect(bad.status, JSON.stringify(body)).to.equal(422);
      expect(Object.keys(bad.body.errors)).to.include(field);
    }
    expect((await tenantRow(f)).modules).to.deep.equal([...MODULES]);
  });
});
