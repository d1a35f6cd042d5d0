import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { addDays, todayIn } from '../../../lib/clock.js';
import { bill, makeCustomer, makePackage } from './billing-world.js';

/** Issue 8 item 4: GET/POST /api/invoices, GET /api/invoices/{id}, POST /api/invoices/{id}/void. */
describe('/api/invoices', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let basics: Awaited<ReturnType<typeof seedBasics>>;
  let today: string;

  const count = async (tenantId: number) =>
    Number((await tenantKnex(tenantId)('invoices').where({ tenant_id: tenantId }).count('* as n'))[0].n);
  const create = (body: Record<string, unknown>, token = a.adminToken) =>
    app.request('POST', '/api/invoices', { token, body });
  const voidIt = (id: number, reason: unknown = 'Billed twice', token = a.adminToken) =>
    app.request('POST', `/api/invoices/${id}/void`, { token, body: { reason } });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    basics = await seedBasics(a);
    today = todayIn(a.timeZone);
  });

  it('creates a manual invoice: 201, the next INV- number, type manual, unpaid, audited', async () => {
    const counter = async () =>
      Number(
        (await tenantKnex(a.tenant.id)('tenant_counters').where({ tenant_id: a.tenant.id, name: 'invoice' }).first())
          ?.value ?? 0,
      );
    const n = (await counter()) + 1;
    const res = await create({
      customer_id: basics.customerId,
      amount: '150000.50',
      description: 'Router replacement',
      due_date: addDays(today, 3),
    });
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({
      invoice_number: `INV-${String(n).padStart(6, '0')}`,
      customer_id: basics.customerId,
      package_id: null,
      amount: 150000.5,
      status: 'unpaid',
      due_date: addDays(today, 3),
      type: 'manual',
      description: 'Router replacement',
      void_reason: null,
      voided_at: null,
      period_start: null,
      paid_at: null,
    });
    expect(d.customer).to.deep.equal({ id: basics.customerId, code: d.customer.code, name: d.customer.name });
    expect(await counter()).to.equal(n);
    const audit = await tenantKnex(a.tenant.id)('audit_log').where({
      tenant_id: a.tenant.id,
      action: 'invoices.created',
    });
    expect(audit.map((r) => Number(r.subject_id))).to.deep.equal([d.id]);
    expect(audit[0].after).to.include({ invoice_number: d.invoice_number, amount: '150000.50', type: 'manual' });
    const shown = await app.request('GET', `/api/invoices/${d.id}`, { token: a.adminToken });
    expect(shown.status).to.equal(200);
    expect(shown.body.data).to.deep.equal(d);

    // the due date defaults to today + invoice_due_days of the tenant's settings
    await env
      .knex('tenants')
      .where({ id: a.tenant.id })
      .update({ settings: { invoice_due_days: 12 } });
    const dflt = await create({ customer_id: basics.customerId, amount: 99000, description: 'Cable' });
    expect(dflt.status).to.equal(201);
    expect(dflt.body.data.due_date).to.equal(addDays(todayIn(a.timeZone), 12));
    expect(dflt.body.data.invoice_number).to.equal(`INV-${String(n + 1).padStart(6, '0')}`);
  });

  it('refuses bad bodies and foreign customers with 422 field errors, takes no number and creates nothing', async () => {
    const bOnly = await seedBasics(b);
    const before = await count(a.tenant.id);
    const counterBefore = await tenantKnex(a.tenant.id)('tenant_counters')
      .where({ tenant_id: a.tenant.id, name: 'invoice' })
      .first();
    const ok = { customer_id: basics.customerId, amount: 1000, description: 'Fee' };
    const cases: [Record<string, unknown>, string][] = [
      [{ amount: 1000, description: 'Fee' }, 'customer_id'],
      [{ ...ok, customer_id: bOnly.customerId }, 'customer_id'],
      [{ ...ok, customer_id: 2147483000 }, 'customer_id'],
      [{ ...ok, amount: 0 }, 'amount'],
      [{ ...ok, amount: -5 }, 'amount'],
      [{ ...ok, amount: '1.234' }, 'amount'],
      [{ ...ok, amount: 'ten' }, 'amount'],
      [{ ...ok, amount: '1e5' }, 'amount'],
      [{ ...ok, amount: 1e15 }, 'amount'],
      [{ ...ok, amount: null }, 'amount'],
      [{ ...ok, description: '   ' }, 'description'],
      [{ ...ok, description: 'a\nb' }, 'description'],
      [{ ...ok, due_date: addDays(today, -1) }, 'due_date'],
      [{ ...ok, due_date: 'next week' }, 'due_date'],
      [{ ...ok, status: 'paid' }, 'status'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors).join(','), JSON.stringify(body)).to.contain(field);
    }
    expect(await count(a.tenant.id)).to.equal(before);
    const counterAfter = await tenantKnex(a.tenant.id)('tenant_counters')
      .where({ tenant_id: a.tenant.id, name: 'invoice' })
      .first();
    expect(counterAfter).to.deep.equal(counterBefore);
  });

  it("lists newest first with search, status, customer_id and type filters, never another tenant's", async () => {
    const f = await makeTenant();
    const pkg = await makePackage(f, 250000);
    const start = addDays(todayIn(f.timeZone), -400);
    const c1 = await makeCustomer(f, { packageId: pkg, cycle: 'prepaid', billingDay: 1, start });
    const c2 = await makeCustomer(f, { packageId: pkg, cycle: 'postpaid', billingDay: 1, start });
    await bill(f, todayIn(f.timeZone));
    const manual = await app.request('POST', '/api/invoices', {
      token: f.adminToken,
      body: { customer_id: c2, amount: 5000, description: 'Late fee' },
    });
    const other = await seedBasics(b);
    const list = (q = '') => app.request('GET', `/api/invoices${q}`, { token: f.adminToken });
    const all = await list();
    expect(all.status).to.equal(200);
    expect(all.body).to.include({ total: 3, per_page: 20, current_page: 1 });
    expect(all.body.data[0].id).to.equal(manual.body.data.id);
    expect(all.body.data.map((r: { id: number }) => r.id)).to.not.include(other.invoiceId);
    const subs = (await list('?type=subscription')).body.data;
    expect(subs.map((r: { customer_id: number }) => r.customer_id).sort()).to.deep.equal([c1, c2].sort());
    expect(
      subs.every((r: { description: string }) => /^Home .+, \d{4}-\d\d-\d\d to \d{4}-\d\d-\d\d$/.test(r.description)),
    ).to.equal(true);
    expect((await list('?type=manual')).body.data.map((r: { id: number }) => r.id)).to.deep.equal([
      manual.body.data.id,
    ]);
    expect((await list(`?customer_id=${c2}`)).body.total).to.equal(2);
    expect((await list(`?customer_id=${other.customerId}`)).body.total).to.equal(0);
    expect((await list('?status=paid')).body.total).to.equal(0);
    expect((await list('?status=unpaid&per_page=1')).body).to.include({ total: 3, last_page: 3 });
    const number = manual.body.data.invoice_number as string;
    expect((await list(`?search=${number.toLowerCase()}`)).body.data.map((r: { id: number }) => r.id)).to.deep.equal([
      manual.body.data.id,
    ]);
    const code = manual.body.data.customer.code as string;
    expect((await list(`?search=${encodeURIComponent(code)}`)).body.total).to.equal(2);
    for (const q of ['?type=other', '?status=late', '?customer_id=abc', '?per_page=101']) {
      const res = await list(q);
      expect(res.status, q).to.equal(422);
    }
  });

  it("a foreign tenant's invoice is 404 on every invoice path and stays as it was", async () => {
    const bOnly = await seedBasics(b);
    const before = await tenantKnex(b.tenant.id)('invoices').where({ id: bOnly.invoiceId }).first();
    expect((await app.request('GET', `/api/invoices/${bOnly.invoiceId}`, { token: a.adminToken })).status).to.equal(
      404,
    );
    const res = await voidIt(bOnly.invoiceId);
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
    expect(await tenantKnex(b.tenant.id)('invoices').where({ id: bOnly.invoiceId }).first()).to.deep.equal(before);
    expect((await app.request('GET', '/api/invoices/2147483000', { token: a.adminToken })).status).to.equal(404);
  });

  for (const from of ['unpaid', 'overdue'] as const) {
    it(`void ${from} -> cancelled: number kept, reason and voided_at stored, audited`, async () => {
      const inv = await a.scope.insert('invoices', {
        invoice_number: `INV-V${from}`,
        customer_id: basics.customerId,
        amount: 1000,
        status: from,
        due_date: today,
        type: 'manual',
      });
      const res = await voidIt(inv.id, '  Billed twice  ');
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({
        id: inv.id,
        invoice_number: `INV-V${from}`,
        status: 'cancelled',
        void_reason: 'Billed twice',
      });
      expect(Date.parse(res.body.data.voided_at)).to.be.closeTo(Date.now(), 60_000);
      const audit = await tenantKnex(a.tenant.id)('audit_log').where({
        tenant_id: a.tenant.id,
        action: 'invoices.voided',
        subject_id: String(inv.id),
      });
      expect(audit).to.have.length(1);
      expect(audit[0].before).to.include({ status: from });
      expect(audit[0].after).to.deep.equal({ status: 'cancelled', void_reason: 'Billed twice' });
    });
  }

  for (const from of ['paid', 'cancelled'] as const) {
    it(`void ${from}: 422 INVALID_TRANSITION, nothing changed`, async () => {
      const inv = await a.scope.insert('invoices', {
        invoice_number: `INV-R${from}`,
        customer_id: basics.customerId,
        amount: 1000,
        status: from,
        due_date: today,
        type: 'manual',
      });
      const before = await tenantKnex(a.tenant.id)('invoices').where({ id: inv.id }).first();
      const res = await voidIt(inv.id);
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('INVALID_TRANSITION');
      expect(res.body.message).to.include(from);
      expect(res.body.errors.status).to.have.length(1);
      expect(await tenantKnex(a.tenant.id)('invoices').where({ id: inv.id }).first()).to.deep.equal(before);
    });
  }

  it('void needs a reason (422) and invoices.manage; staff read invoices but may not write them (403)', async () => {
    const staff = await makeUser(a.tenant.id, 'staff');
    for (const reason of ['', '   ', null, 'x'.repeat(501)]) {
      const res = await voidIt(basics.invoiceId, reason);
      expect(res.status, JSON.stringify(reason)).to.equal(422);
      expect(res.body.errors).to.have.property('reason');
    }
    expect((await app.request('GET', '/api/invoices', { token: staff.token })).status).to.equal(200);
    const refused = await voidIt(basics.invoiceId, 'Billed twice', staff.token);
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.include('invoices.manage');
    const made = await create({ customer_id: basics.customerId, amount: 1, description: 'x' }, staff.token);
    expect(made.status).to.equal(403);
    expect((await tenantKnex(a.tenant.id)('invoices').where({ id: basics.invoiceId }).first()).status).to.equal(
      'unpaid',
    );
    const tech = await makeUser(a.tenant.id, 'technician');
    expect((await app.request('GET', '/api/invoices', { token: tech.token })).status).to.equal(403);
  });

  it('a voided subscription invoice keeps its period: the next run does not bill it again', async () => {
    const f = await makeTenant();
    const pkg = await makePackage(f, 250000);
    const c = await makeCustomer(f, { packageId: pkg, cycle: 'prepaid', start: addDays(todayIn(f.timeZone), -100) });
    const asOf = todayIn(f.timeZone);
    expect((await bill(f, asOf)).created).to.equal(1);
    const inv = await tenantKnex(f.tenant.id)('invoices').where({ tenant_id: f.tenant.id, customer_id: c }).first();
    const res = await app.request('POST', `/api/invoices/${inv.id}/void`, {
      token: f.adminToken,
      body: { reason: 'Service was down all month' },
    });
    expect(res.body.data).to.include({ status: 'cancelled', invoice_number: inv.invoice_number });
    expect(await bill(f, asOf)).to.deep.include({ created: 0, existing: 1 });
    expect(await tenantKnex(f.tenant.id)('invoices').where({ tenant_id: f.tenant.id })).to.have.length(1);
  });
});
