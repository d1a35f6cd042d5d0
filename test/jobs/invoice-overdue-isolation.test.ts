import { expect } from 'chai';
import { env } from '../helpers/env.js';
import { makeTenant, type TenantFixture } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/http.js';
import { configureJobDeps } from '../../jobs/deps.js';
import { process as invoiceOverdue, type InvoiceOverdueResult } from '../../jobs/invoice-overdue.js';
import * as customerNetwork from '../../jobs/customer-network.js';
import { addDays, ManualClock, todayIn } from '../../lib/clock.js';
import { fakeJob } from './fake-job.js';
import { createCustomer, customerRow, makeNas, networkQueue, uniq } from '../api/customers/support.js';

/**
 * Issue 8 item 4 / item 2: invoice-overdue also suspends (suspend_reason overdue) the active
 * customers with an invoice overdue for more than the tenant's isolation_grace_days, in the tenant's
 * zone, through customer-network. "Today" is a ManualClock set relative to the machine's date.
 */
describe('job invoice-overdue: isolation after the grace days', () => {
  const D = todayIn('UTC');
  /** 12:00Z of D: D in Jakarta (19:00) and in New York (07:00/08:00). */
  const clock = new ManualClock(`${D}T12:00:00.000Z`);
  let app: TestApp;
  let t: TenantFixture;
  let nas: number;
  const grace = (f: TenantFixture, days: number | null) =>
    env
      .knex('tenants')
      .where({ id: f.tenant.id })
      .update({ settings: { isolation_grace_days: days } });
  const invoice = async (f: TenantFixture, customerId: number, due: string, status = 'unpaid') =>
    f.scope.insert('invoices', {
      invoice_number: `INV-${uniq()}`,
      customer_id: customerId,
      amount: 100000,
      status,
      due_date: due,
    });
  const run = async (f: TenantFixture) => {
    const job = fakeJob({ tenant_id: f.tenant.id });
    const result = (await invoiceOverdue(job.job)) as InvoiceOverdueResult;
    return { result, logs: job.logs };
  };

  before(async () => {
    app = await startTestApp();
    t = await makeTenant();
    nas = await makeNas(t);
  });
  beforeEach(() => {
    clock.set(`${D}T12:00:00.000Z`);
    configureJobDeps({ knex: env.knex, clock, queues: app.queues });
  });
  after(() => grace(t, null));

  it('grace 3: suspends a customer whose invoice was due 4 days ago, not one due 3 days ago; pushes the isolation', async () => {
    await grace(t, 3);
    const late = await createCustomer(app, t, { nas_id: nas });
    const recent = await createCustomer(app, t, { nas_id: nas });
    const paid = await createCustomer(app, t);
    await invoice(t, late.id, addDays(D, -4));
    await invoice(t, recent.id, addDays(D, -3));
    await invoice(t, paid.id, addDays(D, -30), 'paid');
    const { result, logs } = await run(t);
    expect(result.changed).to.equal(2);
    expect(result.suspended).to.deep.equal({ [String(t.tenant.id)]: 1 });
    expect(await customerRow(late.id)).to.include({ status: 'suspended', suspend_reason: 'overdue' });
    expect((await customerRow(recent.id)).status).to.equal('active');
    expect((await customerRow(paid.id)).status).to.equal('active');
    expect(logs.join('\n')).to.match(/1 customer\(s\) suspended for invoices overdue more than 3 day\(s\)/);
    const row = await customerRow(late.id);
    const job = (await networkQueue(app).getJob(
      customerNetwork.pushJobId(t.tenant.id, late.id, Number(row.network_version)),
    ))!;
    expect(job.data).to.deep.equal({
      tenant_id: t.tenant.id,
      customer_id: late.id,
      version: Number(row.network_version),
    });

    // a day later the other one is past the grace too; a second run at the same moment changes nothing
    clock.set(`${addDays(D, 1)}T12:00:00.000Z`);
    expect((await run(t)).result.suspended).to.deep.equal({ [String(t.tenant.id)]: 1 });
    expect(await customerRow(recent.id)).to.include({ status: 'suspended', suspend_reason: 'overdue' });
    expect((await run(t)).result.suspended).to.deep.equal({});
  });

  it("the tenant's zone decides the day: grace 0 in Jakarta suspends at local midnight of the day after the due date", async () => {
    const f = await makeTenant({ timeZone: 'Asia/Jakarta' });
    await grace(f, 0);
    const c = await createCustomer(app, f);
    await invoice(f, c.id, D);
    // 16:59Z of D is 23:59 of D in Jakarta: the invoice is not overdue yet
    clock.set(`${D}T16:59:00.000Z`);
    expect((await run(f)).result.suspended).to.deep.equal({});
    expect((await customerRow(c.id)).status).to.equal('active');
    // 17:01Z is 00:01 of D+1 in Jakarta: overdue for one day, more than 0
    clock.set(`${D}T17:01:00.000Z`);
    const { result } = await run(f);
    expect(result.changed).to.equal(1);
    expect(result.suspended).to.deep.equal({ [String(f.tenant.id)]: 1 });
    expect(await customerRow(c.id)).to.include({ status: 'suspended', suspend_reason: 'overdue' });
    await grace(f, null);
  });

  it('grace null (the default) isolates nobody; without queue producers the job marks and logs, suspends nobody', async () => {
    const off = await makeTenant();
    const c = await createCustomer(app, off);
    await invoice(off, c.id, addDays(D, -60));
    const { result } = await run(off);
    expect(result.changed).to.equal(1);
    expect(result.suspended).to.deep.equal({});
    expect((await customerRow(c.id)).status).to.equal('active');

    await grace(off, 1);
    configureJobDeps({ knex: env.knex, clock });
    const bare = await run(off);
    expect(bare.result.suspended).to.deep.equal({});
    expect(bare.logs.join('\n')).to.match(/isolation skipped, this process has no queue producers/);
    expect((await customerRow(c.id)).status).to.equal('active');
    await grace(off, null);
  });
});
