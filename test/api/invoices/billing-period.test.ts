import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { env } from '../../helpers/env.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { addDays } from '../../../lib/clock.js';
import { anchorDate, billingPeriod, type BillingCycle } from '../../../api/invoices/billing-period.js';
import { bill, invoicesOf, LEAP, makeCustomer, makePackage, NON_LEAP, numberOf, Y } from './billing-world.js';

/**
 * Issue 8 item 4, "cycle x billing_day x as_of -> period, due, amount": the TypeScript reference of
 * the period rules on named cases, the SQL function billing_anchor_date against it, and the billing
 * statement (api/invoices/billing.ts) against it on every as_of day of sixteen months. Years hang
 * off the machine's clock (Y = next year, LEAP = the first leap year after it), never a fixed date.
 */
describe('billing periods (issue 8 item 4)', () => {
  describe('the TypeScript reference', () => {
    const cases: [string, BillingCycle, number | null, string, string, [string, string, string] | null][] = [
      // name, cycle, billing_day, service start, as_of, [start, end, due] with 7 due days
      [
        'prepaid on the 28th, the day before',
        'prepaid',
        28,
        `${NON_LEAP - 1}-05-02`,
        `${NON_LEAP}-03-27`,
        [`${NON_LEAP}-02-28`, `${NON_LEAP}-03-27`, `${NON_LEAP}-03-07`],
      ],
      [
        'prepaid on the 28th, the day itself',
        'prepaid',
        28,
        `${NON_LEAP - 1}-05-02`,
        `${NON_LEAP}-03-28`,
        [`${NON_LEAP}-03-28`, `${NON_LEAP}-04-27`, `${NON_LEAP}-04-04`],
      ],
      [
        'prepaid without billing_day: the 1st',
        'prepaid',
        null,
        `${Y - 1}-05-02`,
        `${Y}-06-30`,
        [`${Y}-06-01`, `${Y}-06-30`, `${Y}-06-08`],
      ],
      [
        'prepaid, Dec -> Jan',
        'prepaid',
        15,
        `${Y - 1}-05-02`,
        `${Y + 1}-01-10`,
        [`${Y}-12-15`, `${Y + 1}-01-14`, `${Y}-12-22`],
      ],
      [
        'prepaid on the 1st, 31 Dec',
        'prepaid',
        1,
        `${Y - 1}-05-02`,
        `${Y}-12-31`,
        [`${Y}-12-01`, `${Y}-12-31`, `${Y}-12-08`],
      ],
      [
        'rolling from 31 Jan, Feb (not leap)',
        'prepaid_rolling',
        5,
        `${NON_LEAP}-01-31`,
        `${NON_LEAP}-02-28`,
        [`${NON_LEAP}-02-28`, `${NON_LEAP}-03-30`, `${NON_LEAP}-03-07`],
      ],
      [
        'rolling from 31 Jan, the day before 28 Feb',
        'prepaid_rolling',
        null,
        `${NON_LEAP}-01-31`,
        `${NON_LEAP}-02-27`,
        [`${NON_LEAP}-01-31`, `${NON_LEAP}-02-27`, `${NON_LEAP}-02-07`],
      ],
      [
        'rolling from 31 Jan, back to the 31st in March',
        'prepaid_rolling',
        null,
        `${NON_LEAP}-01-31`,
        `${NON_LEAP}-03-31`,
        [`${NON_LEAP}-03-31`, `${NON_LEAP}-04-29`, `${NON_LEAP}-04-07`],
      ],
      [
        'rolling from 31 Jan, leap year 29 Feb',
        'prepaid_rolling',
        null,
        `${LEAP}-01-31`,
        `${LEAP}-02-29`,
        [`${LEAP}-02-29`, `${LEAP}-03-30`, `${LEAP}-03-07`],
      ],
      [
        'rolling from 31 Jan, leap year 28 Feb',
        'prepaid_rolling',
        null,
        `${LEAP}-01-31`,
        `${LEAP}-02-28`,
        [`${LEAP}-01-31`, `${LEAP}-02-28`, `${LEAP}-02-07`],
      ],
      ['rolling, the service starts after as_of', 'prepaid_rolling', null, `${Y}-04-11`, `${Y}-04-10`, null],
      [
        'postpaid on the 15th: the period that ended',
        'postpaid',
        15,
        `${Y - 1}-05-02`,
        `${Y}-03-15`,
        [`${Y}-02-15`, `${Y}-03-14`, `${Y}-03-22`],
      ],
      [
        'postpaid without billing_day, Dec -> Jan',
        'postpaid',
        null,
        `${Y - 1}-05-02`,
        `${Y + 1}-01-01`,
        [`${Y}-12-01`, `${Y}-12-31`, `${Y + 1}-01-08`],
      ],
      [
        'postpaid, started within the period',
        'postpaid',
        1,
        `${NON_LEAP}-02-20`,
        `${NON_LEAP}-03-01`,
        [`${NON_LEAP}-02-01`, `${NON_LEAP}-02-28`, `${NON_LEAP}-03-08`],
      ],
      ['postpaid, started after the period ended', 'postpaid', 1, `${Y}-03-01`, `${Y}-03-20`, null],
    ];
    for (const [name, cycle, day, start, asOf, want] of cases) {
      it(`${name}: ${cycle}, billing_day ${day}, as of ${asOf}`, () => {
        const got = billingPeriod(cycle, day, start, asOf, 7);
        expect(got).to.deep.equal(want ? { period_start: want[0], period_end: want[1], due_date: want[2] } : null);
      });
    }
  });

  it('the SQL function billing_anchor_date agrees with anchorDate for 40 years x days 1..31', async () => {
    const from = (Y - 20) * 12;
    const { rows } = await env.knex.raw(
      `SELECT mi, d, billing_anchor_date(mi, d)::text AS day
       FROM generate_series(?::int, ?::int) mi, generate_series(1, 31) d ORDER BY mi, d`,
      [from, from + 40 * 12 - 1],
    );
    expect(rows).to.have.length(40 * 12 * 31);
    const wrong = rows.filter((r: { mi: number; d: number; day: string }) => r.day !== anchorDate(r.mi, r.d));
    expect(wrong).to.deep.equal([]);
  });

  describe('the billing statement against the reference, every as_of day for sixteen months', function () {
    this.timeout(120_000);
    let f: TenantFixture;
    const specs: { id?: number; cycle: BillingCycle; day: number | null; start: string; price: number }[] = [];

    before(async () => {
      f = await makeTenant();
      await env
        .knex('tenants')
        .where({ id: f.tenant.id })
        .update({ settings: { invoice_due_days: 5 } });
      const cheap = await makePackage(f, 150000);
      const dear = await makePackage(f, '375000.50');
      const old = `${LEAP - 3}-06-10`;
      for (const cycle of ['prepaid', 'postpaid'] as const) {
        for (const day of [null, 1, 15, 28]) specs.push({ cycle, day, start: old, price: 150000 });
      }
      for (const start of [`${LEAP - 1}-12-15`, `${LEAP}-01-29`, `${LEAP}-01-30`, `${LEAP}-01-31`, `${LEAP}-02-29`]) {
        specs.push({ cycle: 'prepaid_rolling', day: 3, start, price: 375000.5 });
      }
      specs.push({ cycle: 'postpaid', day: 10, start: `${LEAP}-01-20`, price: 375000.5 });
      specs.push({ cycle: 'prepaid', day: 5, start: `${LEAP}-03-07`, price: 150000 });
      for (const s of specs) {
        s.id = await makeCustomer(f, {
          packageId: s.price === 150000 ? cheap : dear,
          cycle: s.cycle,
          billingDay: s.day,
          start: s.start,
        });
      }
      // a suspended customer is billed; terminated ones, a free package and no package are not
      specs.push({ cycle: 'prepaid', day: 20, start: old, price: 150000 });
      specs[specs.length - 1].id = await makeCustomer(f, {
        packageId: cheap,
        cycle: 'prepaid',
        billingDay: 20,
        start: old,
        status: 'suspended',
      });
      await makeCustomer(f, { packageId: cheap, cycle: 'prepaid', start: old, status: 'terminated' });
      await makeCustomer(f, { packageId: await makePackage(f, 0), cycle: 'prepaid', start: old });
      await makeCustomer(f, { packageId: null, cycle: 'postpaid', start: old });
    });

    it('creates exactly the reference periods (start, end, due, amount), counts created / existing / skipped, numbers 1..N', async () => {
      const seen = new Set<string>();
      const first = `${LEAP - 1}-12-01`;
      const last = `${LEAP + 1}-03-31`;
      let days = 0;
      for (let asOf = first; asOf <= last; asOf = addDays(asOf, 1), days++) {
        let created = 0;
        let existing = 0;
        for (const s of specs) {
          const p = billingPeriod(s.cycle, s.day, s.start, asOf, 5);
          if (!p) continue;
          const key = `${s.id}/${p.period_start}`;
          if (seen.has(key)) existing += 1;
          else created += 1;
          seen.add(key);
        }
        // a small batch size, so that batches end inside the customer list too
        const got = await bill(f, asOf, { batchSize: 4 });
        expect({ asOf, created: got.created, existing: got.existing, skipped: got.skipped }).to.deep.equal({
          asOf,
          created,
          existing,
          skipped: specs.length + 2 - created - existing, // + the free package and the one without
        });
      }
      expect(days).to.be.greaterThan(450);
      const rows = await invoicesOf(f);
      const want = new Map<string, object>();
      for (let asOf = first; asOf <= last; asOf = addDays(asOf, 1)) {
        for (const s of specs) {
          const p = billingPeriod(s.cycle, s.day, s.start, asOf, 5);
          if (p) want.set(`${s.id}/${p.period_start}`, { customer_id: s.id, ...p, amount: s.price });
        }
      }
      const got = rows.map((r) => ({
        customer_id: r.customer_id,
        period_start: r.period_start,
        period_end: r.period_end,
        due_date: r.due_date,
        amount: r.amount,
      }));
      const key = (x: { customer_id?: number; period_start: string }) => `${x.customer_id}/${x.period_start}`;
      expect(got.sort((a, b) => key(a).localeCompare(key(b)))).to.deep.equal(
        [...want.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => v),
      );
      expect(rows.every((r) => r.type === 'subscription' && r.status === 'unpaid')).to.equal(true);
      expect(rows.map((r) => numberOf(r.invoice_number))).to.deep.equal(rows.map((_, i) => i + 1));
      expect(rows[0].invoice_number).to.equal('INV-000001');
      const counter = await tenantKnex(f.tenant.id)('tenant_counters')
        .where({ tenant_id: f.tenant.id, name: 'invoice' })
        .first();
      expect(Number(counter.value)).to.equal(rows.length);
    });

    it('a rerun of any day creates nothing and changes no row', async () => {
      const before = JSON.stringify(await invoicesOf(f));
      for (const asOf of [`${LEAP}-02-29`, `${LEAP - 1}-12-31`, `${LEAP + 1}-01-01`]) {
        const again = await bill(f, asOf);
        expect(again.created).to.equal(0);
        expect(again.existing).to.be.greaterThan(0);
      }
      expect(JSON.stringify(await invoicesOf(f))).to.equal(before);
    });
  });
});
