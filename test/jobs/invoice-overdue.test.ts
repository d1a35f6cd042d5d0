import { expect } from 'chai';
import { env } from '../helpers/env.js';
import { makeTenant, seedBasics, type TenantFixture } from '../helpers/fixtures.js';
import { configureJobDeps } from '../../jobs/deps.js';
import { process as invoiceOverdue, jobId, QUEUE } from '../../jobs/invoice-overdue.js';
import { ScanAborted, SCAN_BATCH_SIZE } from '../../jobs/platform-scan.js';
import { addDays, ManualClock, startOfDayIn, todayIn } from '../../lib/clock.js';
import { fakeJob } from './fake-job.js';

/**
 * The job scans every tenant; these tests only look at the rows of the tenants they create, so they
 * pass whatever other test files left in the database and in any order. "Today" comes from a
 * ManualClock set relative to the machine's date (D), never from a fixed calendar date.
 */
const D = todayIn('UTC');
/** 12:00Z of D: D in Jakarta (19:00), in New York (07:00/08:00) and in UTC. */
const NOON = `${D}T12:00:00.000Z`;
const OLD = new Date(Date.parse(NOON) - 400 * 86_400_000);

async function invoice(f: TenantFixture, customerId: number, status: string, dueDate: string): Promise<number> {
  const row = await f.scope.insert('invoices', {
    invoice_number: `INV-${Math.random().toString(36).slice(2, 10)}`,
    customer_id: customerId,
    amount: 100000,
    status,
    due_date: dueDate,
    paid_at: status === 'paid' ? OLD : null,
    created_at: OLD,
    updated_at: OLD,
  });
  return row.id;
}

async function state(ids: number[]) {
  const rows = await env.knex('invoices').whereIn('id', ids).select('id', 'status', 'updated_at');
  return new Map(
    rows.map((r) => [
      r.id as number,
      {
        status: r.status as string,
        touched: new Date(r.updated_at).getTime() !== OLD.getTime(),
      },
    ]),
  );
}

const snapshot = (tenantIds: number[]) =>
  env.knex('invoices').whereIn('tenant_id', tenantIds).select('id', 'status', 'updated_at').orderBy('id');

/** A tenant in `timeZone` with a customer and no invoices. */
async function emptyTenant(clock: ManualClock, timeZone?: string): Promise<{ f: TenantFixture; customerId: number }> {
  const f = await makeTenant({ timeZone });
  const { customerId } = await seedBasics(f, { clock });
  await env.knex('invoices').where({ tenant_id: f.tenant.id }).del();
  return { f, customerId };
}

describe('job invoice-overdue (processor with a fake Job)', () => {
  const clock = new ManualClock(NOON);
  let a: TenantFixture;
  let b: TenantFixture;
  let ids: Record<string, number>;

  before(async () => {
    configureJobDeps({ knex: env.knex, clock });
    const ta = await emptyTenant(clock);
    const tb = await emptyTenant(clock, 'America/New_York');
    a = ta.f;
    b = tb.f;
    const [ca, cb] = [ta.customerId, tb.customerId];
    ids = {
      aYesterday: await invoice(a, ca, 'unpaid', addDays(D, -1)),
      aToday: await invoice(a, ca, 'unpaid', D),
      aTomorrow: await invoice(a, ca, 'unpaid', addDays(D, 1)),
      aPaidPast: await invoice(a, ca, 'paid', addDays(D, -30)),
      aCancelledPast: await invoice(a, ca, 'cancelled', addDays(D, -30)),
      aAlreadyOverdue: await invoice(a, ca, 'overdue', addDays(D, -40)),
      bTenDaysAgo: await invoice(b, cb, 'unpaid', addDays(D, -10)),
      bNextWeek: await invoice(b, cb, 'unpaid', addDays(D, 7)),
    };
  });

  beforeEach(() => {
    clock.set(NOON);
  });

  it("marks the unpaid invoices due before the tenant's today overdue, in both tenants; sets updated_at", async () => {
    const { job, progress, logs } = fakeJob({});
    const result = await invoiceOverdue(job);
    expect(result.as_of).to.equal(NOON);
    expect(result.today).to.include({ 'Asia/Jakarta': D, 'America/New_York': D });
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
    expect(logs[0])
      .to.include(`as of ${NOON}`)
      .and.include(`${D} in Asia/Jakarta`)
      .and.include(`${D} in America/New_York`);
    expect(logs).to.include(`tenant ${a.tenant.id} (${a.tenant.slug}): 1 invoice(s) marked overdue`);
    expect(logs).to.include(`tenant ${b.tenant.id} (${b.tenant.slug}): 1 invoice(s) marked overdue`);
  });

  it('changes nothing in these tenants when run again', async () => {
    const before = await snapshot([a.tenant.id, b.tenant.id]);
    const result = await invoiceOverdue(fakeJob({}).job);
    expect(result.tenants).to.not.have.any.keys(String(a.tenant.id), String(b.tenant.id));
    expect(await snapshot([a.tenant.id, b.tenant.id])).to.deep.equal(before);
  });

  it("the tenant's zone decides: an invoice due D is overdue from local midnight of D+1 there", async () => {
    const zones = ['Asia/Jakarta', 'UTC', 'America/New_York'] as const;
    const tenants = await Promise.all(zones.map((tz) => emptyTenant(clock, tz)));
    const dueD = await Promise.all(tenants.map(({ f, customerId }) => invoice(f, customerId, 'unpaid', D)));
    const statusAt = async (at: Date) => {
      clock.set(at);
      const result = await invoiceOverdue(fakeJob({}).job);
      const s = await state(dueD);
      return { today: zones.map((tz) => result.today[tz]), status: dueD.map((id) => s.get(id)!.status) };
    };
    const midnight = (tz: string) => startOfDayIn(tz, addDays(D, 1)).getTime();
    expect(new Date(midnight('Asia/Jakarta')).toISOString()).to.equal(`${D}T17:00:00.000Z`);
    expect(new Date(midnight('UTC')).toISOString()).to.equal(`${addDays(D, 1)}T00:00:00.000Z`);
    const next = addDays(D, 1);

    const [U, O] = ['unpaid', 'overdue'];
    // [Jakarta, UTC, New York]: each tenant's today and the status of its invoice due D
    const steps: [number, { today: string[]; status: string[] }][] = [
      [midnight('Asia/Jakarta') - 1, { today: [D, D, D], status: [U, U, U] }],
      [midnight('Asia/Jakarta'), { today: [next, D, D], status: [O, U, U] }],
      [midnight('UTC') - 1, { today: [next, D, D], status: [O, U, U] }],
      [midnight('UTC'), { today: [next, next, D], status: [O, O, U] }],
      [midnight('America/New_York') - 1, { today: [next, next, D], status: [O, O, U] }],
      [midnight('America/New_York'), { today: [next, next, next], status: [O, O, O] }],
    ];
    for (const [at, want] of steps) {
      expect(await statusAt(new Date(at)), new Date(at).toISOString()).to.deep.equal(want);
    }
  });

  it('works in batches of 500, reports rising progress and stops between batches when aborted', async () => {
    const { f: c, customerId } = await emptyTenant(clock);
    const n = SCAN_BATCH_SIZE * 2 + 7;
    await env.knex.batchInsert(
      'invoices',
      Array.from({ length: n }, (_, i) => ({
        tenant_id: c.tenant.id,
        invoice_number: `BULK-${i}`,
        customer_id: customerId,
        amount: 1,
        status: 'unpaid',
        due_date: addDays(D, -2),
        created_at: OLD,
        updated_at: OLD,
      })),
      1000,
    );
    const overdue = () =>
      env
        .knex('invoices')
        .where({ tenant_id: c.tenant.id, status: 'overdue' })
        .count<{ count: string }[]>('* as count')
        .then((r) => Number(r[0].count));
    const data = { tenant_id: c.tenant.id };

    // abort once the first batch has been reported: the scan stops before the second UPDATE
    const controller = new AbortController();
    const first = fakeJob(data, () => controller.abort());
    let err: unknown;
    try {
      await invoiceOverdue(first.job, undefined, controller.signal);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ScanAborted);
    expect((err as ScanAborted).done).to.equal(SCAN_BATCH_SIZE);
    expect(await overdue()).to.equal(SCAN_BATCH_SIZE);

    const rest = fakeJob(data);
    const result = await invoiceOverdue(rest.job, undefined, new AbortController().signal);
    expect(result.tenants).to.deep.equal({ [String(c.tenant.id)]: n - SCAN_BATCH_SIZE });
    expect(result.batches).to.equal(2);
    expect(await overdue()).to.equal(n);
    const pct = rest.progress as number[];
    expect(pct).to.have.length(3);
    expect(pct[0]).to.be.below(pct[1]);
    expect(pct.at(-1)).to.equal(100);
  });

  it('a run limited to one tenant leaves the other tenants alone', async () => {
    const { f: d, customerId: cd } = await emptyTenant(clock);
    const { f: e, customerId: ce } = await emptyTenant(clock);
    const inD = await invoice(d, cd, 'unpaid', addDays(D, -3));
    const inE = await invoice(e, ce, 'unpaid', addDays(D, -3));
    const result = await invoiceOverdue(fakeJob({ tenant_id: d.tenant.id }).job);
    expect(result.tenants).to.deep.equal({ [String(d.tenant.id)]: 1 });
    expect(result.today).to.deep.equal({ 'Asia/Jakarta': D });
    const s = await state([inD, inE]);
    expect(s.get(inD)!.status).to.equal('overdue');
    expect(s.get(inE)!.status).to.equal('unpaid');
  });

  it('job ids are fixed per tenant and minute, never contain ":" and are not all digits', () => {
    const at = new Date(`${D}T10:15:30Z`);
    const minute = `${D.replace(/-/g, '')}1015`;
    expect(jobId({}, at)).to.equal(`${QUEUE}-all-${minute}`);
    expect(jobId({ tenant_id: 7 }, at)).to.equal(`${QUEUE}-t7-${minute}`);
    expect(jobId({ tenant_id: 7 }, new Date(at.getTime() + 29_000))).to.equal(`${QUEUE}-t7-${minute}`);
    expect(jobId({}, at)).not.to.include(':');
  });
});
