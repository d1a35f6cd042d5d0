import { expect } from 'chai';
import { env } from '../helpers/env.js';
import { makeTenant, seedBasics, type TenantFixture } from '../helpers/fixtures.js';
import { configureJobDeps } from '../../jobs/deps.js';
import { process as invoiceOverdue, jobId, QUEUE } from '../../jobs/invoice-overdue.js';
import { ScanAborted, SCAN_BATCH_SIZE } from '../../jobs/platform-scan.js';
import { fakeJob, utcDate } from './fake-job.js';

const OLD = new Date('2020-01-01T00:00:00Z');

async function invoice(f: TenantFixture, customerId: number, status: string, dueDate: string): Promise<number> {
  const row = await f.scope.insert('invoices', {
    invoice_number: `INV-${Math.random().toString(36).slice(2, 10)}`, customer_id: customerId, amount: 100000, status, due_date: dueDate,
    paid_at: status === 'paid' ? OLD : null, created_at: OLD, updated_at: OLD,
  });
  return row.id;
}

async function state(ids: number[]) {
  const rows = await env.knex('invoices').whereIn('id', ids).select('id', 'status', 'updated_at');
  return new Map(rows.map((r) => [r.id as number, { status: r.status as string, touched: new Date(r.updated_at).getTime() !== OLD.getTime() }]));
}

describe('job invoice-overdue (processor with a fake Job)', () => {
  let a: TenantFixture;
  let b: TenantFixture;
  let ids: Record<string, number>;

  before(async () => {
    configureJobDeps({ knex: env.knex });
    a = await makeTenant();
    b = await makeTenant();
    const ca = (await seedBasics(a)).customerId;
    const cb = (await seedBasics(b)).customerId;
    await env.knex('invoices').whereIn('tenant_id', [a.tenant.id, b.tenant.id]).del();
    ids = {
      aYesterday: await invoice(a, ca, 'unpaid', utcDate(-1)),
      aToday: await invoice(a, ca, 'unpaid', utcDate(0)),
      aTomorrow: await invoice(a, ca, 'unpaid', utcDate(1)),
      aPaidPast: await invoice(a, ca, 'paid', utcDate(-30)),
      aCancelledPast: await invoice(a, ca, 'cancelled', utcDate(-30)),
      aAlreadyOverdue: await invoice(a, ca, 'overdue', utcDate(-40)),
      bTenDaysAgo: await invoice(b, cb, 'unpaid', utcDate(-10)),
      bNextWeek: await invoice(b, cb, 'unpaid', utcDate(7)),
    };
  });

  it('marks exactly the unpaid invoices due before today (UTC) overdue, in both tenants, and sets updated_at', async () => {
    const { job, progress, logs } = fakeJob({});
    const result = await invoiceOverdue(job);
    expect(result.as_of).to.equal(utcDate(0));
    expect(result.tenants[String(a.tenant.id)]).to.equal(1);
    expect(result.tenants[String(b.tenant.id)]).to.equal(1);
    expect(result.changed).to.equal(Object.values(result.tenants).reduce((s, n) => s + n, 0));
    const s = await state(Object.values(ids));
    expect(s.get(ids.aYesterday)).to.deep.equal({ status: 'overdue', touched: true });
    expect(s.get(ids.bTenDaysAgo)).to.deep.equal({ status: 'overdue', touched: true });
    expect(s.get(ids.aToday)).to.deep.equal({ status: 'unpaid', touched: false });
    expect(s.get(ids.aTomorrow)).to.deep.equal({ status: 'unpaid', touched: false });
    expect(s.get(ids.bNextWeek)).to.deep.equal({ status: 'unpaid', touched: false });
    expect(s.get(ids.aPaidPast)).to.deep.equal({ status: 'paid', touched: false });
    expect(s.get(ids.aCancelledPast)).to.deep.equal({ status: 'cancelled', touched: false });
    expect(s.get(ids.aAlreadyOverdue)).to.deep.equal({ status: 'overdue', touched: false });
    expect(progress.at(-1)).to.equal(100);
    expect(logs.some((l) => l.includes(`tenant ${a.tenant.id} (${a.tenant.slug}): 1 invoice(s) marked overdue`))).to.equal(true);
    expect(logs.some((l) => l.includes(`tenant ${b.tenant.id} (${b.tenant.slug}): 1 invoice(s) marked overdue`))).to.equal(true);
  });

  it('changes nothing when run again', async () => {
    const before = await env.knex('invoices').select('id', 'status', 'updated_at').orderBy('id');
    const { job } = fakeJob({});
    const result = await invoiceOverdue(job);
    expect(result.changed).to.equal(0);
    expect(result.tenants).to.deep.equal({});
    const after = await env.knex('invoices').select('id', 'status', 'updated_at').orderBy('id');
    expect(after).to.deep.equal(before);
  });

  it('works in batches of 500, reports rising progress and stops between batches when aborted', async () => {
    const c = await makeTenant();
    const customerId = (await seedBasics(c)).customerId;
    await env.knex('invoices').where({ tenant_id: c.tenant.id }).del();
    const n = SCAN_BATCH_SIZE * 2 + 7;
    await env.knex.batchInsert('invoices', Array.from({ length: n }, (_, i) => ({
      tenant_id: c.tenant.id, invoice_number: `BULK-${i}`, customer_id: customerId, amount: 1, status: 'unpaid', due_date: utcDate(-2), created_at: OLD, updated_at: OLD,
    })), 1000);
    const overdue = () => env.knex('invoices').where({ tenant_id: c.tenant.id, status: 'overdue' }).count<{ count: string }[]>('* as count').then((r) => Number(r[0].count));

    // abort once the first batch has been reported: the scan stops before the second UPDATE
    const controller = new AbortController();
    const first = fakeJob({}, () => controller.abort());
    let err: unknown;
    try { await invoiceOverdue(first.job, undefined, controller.signal); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(ScanAborted);
    expect((err as ScanAborted).done).to.equal(SCAN_BATCH_SIZE);
    expect(await overdue()).to.equal(SCAN_BATCH_SIZE);

    const rest = fakeJob({});
    const result = await invoiceOverdue(rest.job, undefined, new AbortController().signal);
    expect(result.tenants[String(c.tenant.id)]).to.equal(n - SCAN_BATCH_SIZE);
    expect(result.batches).to.equal(2);
    expect(await overdue()).to.equal(n);
    const pct = rest.progress as number[];
    expect(pct).to.have.length(3);
    expect(pct[0]).to.be.below(pct[1]);
    expect(pct.at(-1)).to.equal(100);
  });

  it('a run limited to one tenant leaves the other tenants alone', async () => {
    const d = await makeTenant();
    const e = await makeTenant();
    const cd = (await seedBasics(d)).customerId;
    const ce = (await seedBasics(e)).customerId;
    const inD = await invoice(d, cd, 'unpaid', utcDate(-3));
    const inE = await invoice(e, ce, 'unpaid', utcDate(-3));
    const result = await invoiceOverdue(fakeJob({ tenant_id: d.tenant.id }).job);
    expect(result.tenants).to.deep.equal({ [String(d.tenant.id)]: 1 });
    const s = await state([inD, inE]);
    expect(s.get(inD)!.status).to.equal('overdue');
    expect(s.get(inE)!.status).to.equal('unpaid');
  });

  it('job ids are fixed per tenant and minute, never contain ":" and are not all digits', () => {
    const at = new Date('2026-11-21T10:15:30Z');
    expect(jobId({}, at)).to.equal(`${QUEUE}-all-202611211015`);
    expect(jobId({ tenant_id: 7 }, at)).to.equal(`${QUEUE}-t7-202611211015`);
    expect(jobId({}, at)).not.to.include(':');
  });
});
