import { randomBytes } from 'node:crypto';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { env } from '../../helpers/env.js';
import type { TenantFixture } from '../../helpers/fixtures.js';
import { startOfDayIn, todayIn } from '../../../lib/clock.js';
import { runBilling, type BillingCounts } from '../../../api/invoices/billing.js';
import type { BillingCycle } from '../../../api/invoices/billing-period.js';

/** Shared pieces of the billing tests (issue 8 item 4): packages, customers, run rows, runs. */

const uniq = () => randomBytes(4).toString('hex');

/** A year after the machine's current one: the calendar cases hang off it, never off a fixed date. */
export const Y = Number(todayIn('UTC').slice(0, 4)) + 1;
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
/** The first leap year after Y. */
export const LEAP = (() => {
  let y = Y + 1;
  while (!leap(y)) y += 1;
  return y;
})();
/** The first non-leap year after LEAP. */
export const NON_LEAP = LEAP + 1;

/** A package of the tenant at `price` (IDR a month). */
export async function makePackage(f: TenantFixture, price: number | string): Promise<number> {
  const p = await f.scope.insert('packages', {
    name: `Home ${uniq()}`,
    price,
    speed_down_kbps: 20000,
    speed_up_kbps: 10000,
  });
  return p.id;
}

/** What a test customer needs. */
export interface CustomerSpec {
  packageId: number | null;
  cycle: BillingCycle;
  billingDay?: number | null;
  /** The service start: 'YYYY-MM-DD' in the tenant's zone; created_at is 00:30 local that day. */
  start: string;
  status?: 'active' | 'suspended' | 'terminated';
}

/**
 * A customer of the tenant whose created_at is 00:30 local time on `spec.start` (in Asia/Jakarta
 * that is 17:30 UTC of the day before, so a UTC date would be wrong by a day).
 * @returns the customer's id
 */
export async function makeCustomer(f: TenantFixture, spec: CustomerSpec): Promise<number> {
  const n = await f.scope.nextNumber('customer');
  const created = new Date(startOfDayIn(f.timeZone, spec.start).getTime() + 30 * 60_000);
  const c = await f.scope.insert('customers', {
    code: `CUST-${String(n).padStart(6, '0')}`,
    name: `Customer ${uniq()}`,
    phone: '+6281234567890',
    address: 'Jl. Test 1',
    package_id: spec.packageId,
    status: spec.status ?? 'active',
    billing_cycle: spec.cycle,
    billing_day: spec.billingDay ?? null,
    created_at: created,
    updated_at: created,
  });
  return c.id;
}

/** A billing_runs row of the tenant (status queued) for `asOf`; returns its id. */
export async function makeRun(f: TenantFixture, asOf: string, trigger: 'manual' | 'schedule' = 'manual') {
  const r = await f.scope.insert('billing_runs', { as_of: asOf, trigger, status: 'queued' });
  return r.id as number;
}

/** runBilling for the tenant as of a day, on a new run row; returns the counts and the run id. */
export async function bill(
  f: TenantFixture,
  asOf: string,
  opts: { batchSize?: number; now?: Date } = {},
): Promise<BillingCounts & { runId: number }> {
  const runId = await makeRun(f, asOf);
  // as the billing job calls it: the tenant's routed knex, the shared one for the tenants row
  const counts = await runBilling(f.scope.knex, {
    tenantId: f.tenant.id,
    sharedKnex: env.knex,
    asOf,
    runId,
    now: opts.now ?? new Date(),
    batchSize: opts.batchSize,
  });
  return { ...counts, runId };
}

/** The tenant's invoices, oldest id first. */
export function invoicesOf(f: TenantFixture) {
  return tenantKnex(f.tenant.id)('invoices').where({ tenant_id: f.tenant.id }).orderBy('id');
}

/** The numeric part of INV-000123 invoice numbers. */
export const numberOf = (invoiceNumber: string) => Number(invoiceNumber.replace(/^INV-/, ''));
