import { expect } from 'chai';
import knexPkg from 'knex';
import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { knexConfig, migrateLatest } from '../../db/knex.js';
import { seedDemo } from '../../db/seeds/demo.js';
import { runBilling } from '../../api/invoices/billing.js';
import { anchorDate, billingPeriod, monthIndexOf } from '../../api/invoices/billing-period.js';
import { tenantJobId } from '../../jobs/billing-cycle.js';
import { dateIn } from '../../lib/clock.js';
import { env, registerCleanup } from '../helpers/env.js';

/** A fresh, migrated database (the demo platform is only seeded into a database without tenants). */
async function freshDatabase(): Promise<Knex> {
  const name = `seedbill_${randomBytes(4).toString('hex')}`;
  const admin = knexPkg.knex(knexConfig(env.adminDatabaseUrl, { min: 0, max: 1 }));
  await admin.raw(`CREATE DATABASE "${name}"`);
  const url = env.adminDatabaseUrl.replace(/\/[^/]+$/, `/${name}`);
  const k = knexPkg.knex(knexConfig(url, { min: 0, max: 4 }));
  await migrateLatest(k);
  registerCleanup(async () => {
    await k.destroy();
    await admin.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.destroy();
  });
  return k;
}

/** Issue 8 item 4 / item 7: demo-isp's three months of billing on every cycle. */
describe('demo seed: billing (db/seeds/demo-billing.ts)', function () {
  this.timeout(60_000);
  const now = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  let knex: Knex;
  let isp: { id: number; timezone: string };
  let today: string;
  let result: Awaited<ReturnType<typeof seedDemo>>;

  before(async () => {
    knex = await freshDatabase();
    result = await seedDemo(knex, { now });
    isp = await knex('tenants').where({ slug: 'demo-isp' }).first();
    today = dateIn(isp.timezone, now);
  });

  it('records three completed scheduled runs, as of the same day two months ago, a month ago and today', async () => {
    const runs = await knex('billing_runs').where({ tenant_id: isp.id }).orderBy('id');
    const day = Number(today.slice(8, 10));
    const days = [2, 1, 0].map((back) => anchorDate(monthIndexOf(today) - back, day));
    expect(runs.map((r) => [r.as_of, r.trigger, r.status, r.job_id])).to.deep.equal(
      days.map((d) => [d, 'schedule', 'completed', tenantJobId(isp.id, d)]),
    );
    expect(runs[0].created).to.be.greaterThan(20);
    const invoices = await knex('invoices').where({ tenant_id: isp.id, type: 'subscription' });
    expect(runs.reduce((s, r) => s + r.created, 0)).to.equal(invoices.length);
    const audit = await knex('audit_log').where({ tenant_id: isp.id, action: 'invoices.billing_run' });
    expect(audit).to.have.length(3);
    const isp2 = result.tenants.find((t) => t.slug === 'demo-isp')!;
    expect(Object.values(isp2.invoices).reduce((s, n) => s + n, 0)).to.equal(invoices.length);
  });

  it('bills every cycle by its rules; numbers INV-000001..N without a gap; a rerun today creates none', async () => {
    const rows = await knex('invoices as i')
      .join('customers as c', 'c.id', 'i.customer_id')
      .where('i.tenant_id', isp.id)
      .orderBy('i.id')
      .select('i.*', 'c.billing_cycle', 'c.billing_day', 'c.created_at as c_created');
    expect(new Set(rows.map((r) => r.billing_cycle))).to.deep.equal(
      new Set(['prepaid', 'prepaid_rolling', 'postpaid']),
    );
    for (const r of rows) {
      const start = dateIn(isp.timezone, r.c_created);
      // the run that made it: created at 00:15 local on its as_of day (or at the seed's moment)
      const asOf = dateIn(isp.timezone, r.created_at);
      const want = billingPeriod(r.billing_cycle, r.billing_day, start, asOf, 7);
      expect([r.period_start, r.period_end, r.due_date], `invoice ${r.invoice_number}`).to.deep.equal([
        want?.period_start,
        want?.period_end,
        want?.due_date,
      ]);
    }
    expect(rows.map((r) => r.invoice_number)).to.deep.equal(
      rows.map((_, i) => `INV-${String(i + 1).padStart(6, '0')}`),
    );
    const counter = await knex('tenant_counters').where({ tenant_id: isp.id, name: 'invoice' }).first();
    expect(Number(counter.value)).to.equal(rows.length);
    const [run] = await knex('billing_runs')
      .insert({ tenant_id: isp.id, as_of: today, trigger: 'manual', status: 'queued' })
      .returning('id');
    const again = await runBilling(knex, { tenantId: isp.id, asOf: today, runId: run.id, now });
    expect(again.created).to.equal(0);
    expect(again.existing).to.be.greaterThan(20);
  });

  it('some invoices are paid, some overdue (suspended customers), some unpaid past due, some voided with a reason', async () => {
    const rows = await knex('invoices as i')
      .join('customers as c', 'c.id', 'i.customer_id')
      .where('i.tenant_id', isp.id)
      .select('i.*', 'c.status as c_status');
    const by = (s: string) => rows.filter((r) => r.status === s);
    expect(by('paid').length).to.be.greaterThan(10);
    expect(by('paid').every((r) => r.paid_at && r.paid_at >= r.created_at && r.paid_at <= now)).to.equal(true);
    expect(by('overdue').some((r) => r.c_status === 'suspended')).to.equal(true);
    expect(by('unpaid').some((r) => r.due_date < today)).to.equal(true);
    const voided = by('cancelled');
    expect(voided.length).to.be.greaterThan(2);
    expect(voided.every((r) => r.void_reason && r.voided_at && r.paid_at === null)).to.equal(true);
    const audit = await knex('audit_log').where({ tenant_id: isp.id, action: 'invoices.voided' });
    expect(audit.map((a) => Number(a.subject_id)).sort()).to.deep.equal(voided.map((r) => r.id).sort());
    expect(rows.every((r) => r.created_at <= now)).to.equal(true);
  });

  it('demo-sandbox keeps its monthly seed invoices, typed subscription, and an empty audit log', async () => {
    const sandbox = await knex('tenants').where({ slug: 'demo-sandbox' }).first();
    const rows = await knex('invoices').where({ tenant_id: sandbox.id });
    expect(rows.length).to.be.greaterThan(10);
    expect(rows.every((r) => r.type === 'subscription' && r.period_start !== null)).to.equal(true);
    expect(await knex('billing_runs').where({ tenant_id: sandbox.id })).to.have.length(0);
    expect(await knex('audit_log').where({ tenant_id: sandbox.id })).to.have.length(0);
  });
});
