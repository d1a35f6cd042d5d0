import { addDays } from '../../lib/clock.js';

/**
 * The billing period rules of issue 8 item 4, as plain TypeScript: the reference the SQL of
 * api/invoices/billing.ts is tested against (test/api/invoices/billing-period.test.ts compares them
 * over every anchor day and cycle for years of as_of days). The billing run itself computes periods
 * in SQL, for all customers of a batch in one statement.
 *
 * - A period runs from the anchor day to the day before the anchor day of the next month; an anchor
 *   day past a month's end is clamped to its last day (anchor 31: 31 Jan - 27 Feb, 28 Feb - 30 Mar,
 *   31 Mar - 29 Apr ...; in a leap year 29 Feb).
 * - prepaid: anchored on billing_day (1 when the customer has none); the period containing as_of.
 * - prepaid_rolling: anchored on the service start's day of the month; the period containing as_of.
 * - postpaid: anchored on billing_day (1 when none); the last period that ended before as_of.
 * - Due: period_start + invoice_due_days (postpaid: period_end + 1 + invoice_due_days).
 * - Not billed (null): a service that starts after as_of (prepaid, rolling) or after the period's
 *   end (postpaid).
 * Dates are 'YYYY-MM-DD' calendar days of the tenant's time zone.
 */

/** Billing cycles of document 1 (customers.billing_cycle). */
export type BillingCycle = 'prepaid' | 'prepaid_rolling' | 'postpaid';

/** A billed period with its due date, all 'YYYY-MM-DD'. */
export interface BillingPeriod {
  period_start: string;
  period_end: string;
  due_date: string;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * The month index of a date: year * 12 + month - 1 (what the SQL function billing_anchor_date takes).
 * @param date 'YYYY-MM-DD'
 */
export function monthIndexOf(date: string): number {
  return Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7)) - 1;
}

/**
 * Day `anchorDay` of the month `monthIndex`, clamped to the month's last day (the SQL function
 * billing_anchor_date of migration 20261128020000).
 * @param monthIndex year * 12 + month - 1 (years 1..9999)
 * @param anchorDay 1..31
 * @returns 'YYYY-MM-DD'
 */
export function anchorDate(monthIndex: number, anchorDay: number): string {
  const year = Math.floor(monthIndex / 12);
  const month = (monthIndex % 12) + 1;
  const last = new Date(Date.UTC(2000, month, 0)).getUTCDate(); // the month's length in a leap year
  const days = month === 2 && !isLeap(year) ? 28 : last;
  return `${pad(year, 4)}-${pad(month)}-${pad(Math.min(anchorDay, days))}`;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/**
 * The anchor day of a customer: the service start's day of the month for prepaid_rolling, else
 * billing_day, 1 when the customer has none.
 * @param serviceStart 'YYYY-MM-DD' (the customer's created_at in the tenant's zone)
 */
export function anchorDayOf(cycle: BillingCycle, billingDay: number | null, serviceStart: string): number {
  return cycle === 'prepaid_rolling' ? Number(serviceStart.slice(8, 10)) : (billingDay ?? 1);
}

/**
 * The period a run as of `asOf` bills for one customer (see the file comment for the rules).
 * @param cycle the customer's billing cycle
 * @param billingDay customers.billing_day (1..28) or null
 * @param serviceStart 'YYYY-MM-DD': the day the service started, in the tenant's zone
 * @param asOf 'YYYY-MM-DD': the run's day, in the tenant's zone
 * @param dueDays the tenant's invoice_due_days (0..365)
 * @returns the period and due date, or null when the service had not started (nothing to bill)
 */
export function billingPeriod(
  cycle: BillingCycle,
  billingDay: number | null,
  serviceStart: string,
  asOf: string,
  dueDays: number,
): BillingPeriod | null {
  const day = anchorDayOf(cycle, billingDay, serviceStart);
  const m = monthIndexOf(asOf);
  let k = asOf >= anchorDate(m, day) ? m : m - 1; // the period containing as_of starts in month k
  if (cycle === 'postpaid') k -= 1; // the one before it, which ended before as_of
  const start = anchorDate(k, day);
  const end = addDays(anchorDate(k + 1, day), -1);
  if (serviceStart > (cycle === 'postpaid' ? end : asOf)) return null;
  const due = addDays(cycle === 'postpaid' ? addDays(end, 1) : start, dueDays);
  return { period_start: start, period_end: end, due_date: due };
}
