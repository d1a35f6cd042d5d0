import { randomBytes } from 'node:crypto';
import { createTenant, createUser } from '../../api/tenants/service.js';
import { login } from '../../api/auth/service.js';
import { createToken } from '../../api/tokens/service.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { env } from './env.js';
import { mirrorUser } from '../../db/tenant-mirror.js';
import { TEST_WEB_APP_KEY } from './http.js';
import { cutOverTenant, routedScope, TENANT_DB_MODE } from './tenant-db-mode.js';
import { addDays, DEFAULT_TIME_ZONE, systemClock, todayIn, type Clock } from '../../lib/clock.js';

const uniq = () => randomBytes(4).toString('hex');
export const PASSWORD = 'correct horse battery';

/** A tenant with a Super Admin, logged in. */
export interface TenantFixture {
  tenant: { id: number; slug: string; name: string; demo_mode: boolean };
  admin: { id: number; email: string };
  adminToken: string;
  scope: TenantScope;
  /** tenants.timezone (IANA). */
  timeZone: string;
}

/**
 * Creates a tenant (unique slug) and logs its Super Admin in. In the cut-over test mode
 * (TEST_TENANT_DB=1, test/helpers/tenant-db-mode.ts) the tenant is then cut over to a tenant
 * database of its own and `scope` is the routed scope of a request.
 * @param opts.timeZone tenants.timezone to set (default: the column default, Asia/Jakarta)
 */
export async function makeTenant(
  opts: { demo?: boolean; slug?: string; timeZone?: string } = {},
): Promise<TenantFixture> {
  const slug = opts.slug ?? `t-${uniq()}`;
  const { tenant, admin } = await createTenant(env.knex, {
    slug,
    name: `Tenant ${slug}`,
    adminEmail: `admin-${slug}@example.test`,
    adminPassword: PASSWORD,
    demo: opts.demo,
  });
  const timeZone = opts.timeZone ?? DEFAULT_TIME_ZONE;
  if (opts.timeZone) await env.knex('tenants').where({ id: tenant.id }).update({ timezone: opts.timeZone });
  const { token } = await login(env.knex, { email: admin.email, password: PASSWORD });
  if (!TENANT_DB_MODE)
    return { tenant, admin, adminToken: token, scope: new TenantScope(env.knex, tenant.id), timeZone };
  await cutOverTenant(tenant.id, slug);
  return { tenant, admin, adminToken: token, scope: await routedScope(tenant.id), timeZone };
}

/**
 * Creates a user with a role in a tenant and returns its login token. The user is mirrored into a
 * cut-over tenant's database as the user routes do (mirrorUser; nothing for a shared tenant).
 */
export async function makeUser(tenantId: number, role: string): Promise<{ id: number; email: string; token: string }> {
  const email = `${role.replace(/\s/g, '').toLowerCase()}-${uniq()}@example.test`;
  const u = await createUser(env.knex, { tenant: tenantId, email, password: PASSWORD, role });
  await mirrorUser(env.knex, tenantId, u.id, TEST_WEB_APP_KEY);
  const { token } = await login(env.knex, { email, password: PASSWORD });
  return { id: u.id, email, token };
}

/** Issues an integration token directly through the service. */
export async function makeIntegrationToken(
  f: TenantFixture,
  access: 'read' | 'read_write' = 'read',
  expires_at: string | null = null,
) {
  return createToken(f.scope, f.admin.id, { name: `itest-${uniq()}`, access, expires_at });
}

/**
 * Inserts a package, customer, OLT, ONU, invoice and ticket in the tenant; returns their ids.
 * Nothing in it is due or late at the clock's now: the invoice is unpaid and due 30 days after the
 * tenant's today, the ticket (high, open, no SLA due dates yet) is created at the clock's now.
 * @param opts.clock the clock the dates are relative to (default systemClock)
 */
export async function seedBasics(f: TenantFixture, opts: { clock?: Clock } = {}) {
  const s = f.scope;
  const clock = opts.clock ?? systemClock;
  const dueDate = addDays(todayIn(f.timeZone, clock), 30);
  const pkg = await s.insert('packages', {
    name: `Home ${uniq()}`,
    price: 250000,
    speed_down_kbps: 20000,
    speed_up_kbps: 10000,
  });
  const n = await s.nextNumber('customer');
  const customer = await s.insert('customers', {
    code: `CUST-${String(n).padStart(6, '0')}`,
    name: `Customer ${uniq()}`,
    phone: '+6281234567890',
    address: 'Jl. Test 1',
    package_id: pkg.id,
  });
  const olt = await s.insert('olts', {
    name: `OLT ${uniq()}`,
    vendor: 'ZTE',
    model: 'C320',
    ip_address: '10.0.0.1',
    status: 'online',
  });
  const onu = await s.insert('onus', {
    olt_id: olt.id,
    customer_id: customer.id,
    serial_number: `ZTEG${uniq().toUpperCase()}`,
    status: 'online',
    rx_power: -21.5,
    tx_power: 2.1,
  });
  const invoice = await s.insert('invoices', {
    invoice_number: `INV-${uniq()}`,
    customer_id: customer.id,
    package_id: pkg.id,
    amount: 250000,
    status: 'unpaid',
    due_date: dueDate,
  });
  const ticket = await s.insert('tickets', {
    ticket_number: `TCK-${uniq()}`,
    customer_id: customer.id,
    type: 'no internet',
    priority: 'high',
    status: 'open',
    created_at: clock.now(),
    updated_at: clock.now(),
  });
  return {
    packageId: pkg.id,
    customerId: customer.id,
    oltId: olt.id,
    onuId: onu.id,
    invoiceId: invoice.id,
    ticketId: ticket.id,
  };
}
