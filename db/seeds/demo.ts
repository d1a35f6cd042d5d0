import type { Knex } from 'knex';
import { createPlatformAdmin, createTenant, createUser, ensureCatalog, findTenant } from '../../api/tenants/service.js';
import { recordAudit } from '../../api/audit-logs/service.js';
import { TenantScope } from '../tenant-scope.js';
import { seedTenantData, summarize, type DemoSize, type TenantSeedSummary } from './demo-tenant.js';
import { DEMO_CLERK, DEMO_CUSTOM_ROLE, seedDemoStaff } from './demo-users.js';
import { ROLES } from '../../api/tenants/catalog.js';
import { seedDemoBilling, typeSeededSubscriptions } from './demo-billing.js';
import { seedDemoCustomerNetwork } from './demo-customer-network.js';
import { seedDemoApk } from './demo-apk.js';

/**
 * The demo platform of the embedded default (DESIGN.md §2, issue 2 §2): a platform admin, tenant
 * `demo-isp` (normal mode, 50 customers, its four built-in roles) and tenant `demo-sandbox` (demo
 * mode, a smaller set). bin/dev.ts runs it when the database has no tenant; `npm run cli --
 * demo:seed` runs it on demand.
 */

/** Password of every demo login (printed by `npm start`; the README's walk-through uses it). */
export const DEMO_PASSWORD = 'demo-password';

/** A demo login as the banner and the README show it. */
export interface DemoLogin {
  email: string;
  tenant: string | null;
  role: string;
}

/** The demo logins, in banner order. */
export const DEMO_LOGINS: readonly DemoLogin[] = [
  { email: 'admin@platform.test', tenant: null, role: 'platform admin' },
  { email: 'admin@demo-isp.test', tenant: 'demo-isp', role: 'Super Admin' },
  { email: 'manager@demo-isp.test', tenant: 'demo-isp', role: 'Administrator' },
  { email: 'tech@demo-isp.test', tenant: 'demo-isp', role: 'technician' },
  { email: 'staff@demo-isp.test', tenant: 'demo-isp', role: 'staff' },
  { email: DEMO_CLERK.email, tenant: 'demo-isp', role: DEMO_CUSTOM_ROLE.name },
  { email: 'admin@demo-sandbox.test', tenant: 'demo-sandbox', role: 'Super Admin' },
];

const STAFF_NAMES: Record<string, string> = {
  'manager@demo-isp.test': 'Rina Wijaya',
  'tech@demo-isp.test': 'Budi Santoso',
  'staff@demo-isp.test': 'Siti Rahmawati',
};

/** Options of seedDemo. */
export interface SeedOptions {
  /** Seed one existing tenant (slug or id) instead of the whole platform. */
  tenant?: string;
  /** Size for `tenant` (default: small for a demo-mode tenant, else full). */
  size?: DemoSize;
  /** The moment the data is relative to (default: now). */
  now?: Date;
  /** Progress lines. */
  log?: (line: string) => void;
}

/** What seedDemo did. */
export interface SeedResult {
  /** False when nothing was written (see reason). */
  seeded: boolean;
  reason?: string;
  /** The platform admin created (whole-platform seed only). */
  platform_admin?: { id: number; email: string };
  tenants: TenantSeedSummary[];
}

/** Marker kept in tenants.settings so a tenant is never seeded twice. */
const MARKER = 'demo_seed';

/**
 * Seeds demo data, in one transaction.
 * - Without `opts.tenant`: the whole demo platform, only when the database has no tenant at all
 *   (otherwise `{seeded: false, reason}`).
 * - With `opts.tenant`: the demo data set (packages, customers, OLTs, ONUs, invoices, tickets) in that
 *   existing tenant, once (a tenant already seeded answers `{seeded: false, reason}`).
 * Deterministic per tenant slug (seeded PRNG); timestamps relative to `opts.now`.
 * @throws NotFound for an unknown opts.tenant; Conflict when a demo e-mail is taken by another user
 */
export async function seedDemo(knex: Knex, opts: SeedOptions = {}): Promise<SeedResult> {
  const now = opts.now ?? new Date();
  const log = opts.log ?? (() => {});
  await ensureCatalog(knex);
  if (opts.tenant !== undefined) return seedOneTenant(knex, opts.tenant, { now, log, size: opts.size });
  return knex.transaction(async (trx) => {
    // one seeder at a time; the tenant count is read under the lock
    await trx.raw('SELECT pg_advisory_xact_lock(?)', [0x15d3]);
    const { n } = (await trx('tenants').count({ n: '*' }).first())!;
    if (Number(n) > 0)
      return {
        seeded: false,
        reason: 'The database already has tenants; the demo platform is only seeded into an empty database.',
        tenants: [],
      };
    log('seeding the demo platform ...');
    const admin = await createPlatformAdmin(trx, {
      email: DEMO_LOGINS[0].email,
      password: DEMO_PASSWORD,
      name: 'Platform Admin',
    });

    const isp = await createTenant(trx, {
      slug: 'demo-isp',
      name: 'Demo ISP',
      adminEmail: 'admin@demo-isp.test',
      adminPassword: DEMO_PASSWORD,
    });
    let technicianId: number | null = null;
    const builtIn = (l: DemoLogin) => (ROLES as readonly string[]).includes(l.role);
    for (const login of DEMO_LOGINS.filter((l) => l.tenant === 'demo-isp' && l.role !== 'Super Admin' && builtIn(l))) {
      const u = await createUser(trx, {
        tenant: isp.tenant.id,
        email: login.email,
        password: DEMO_PASSWORD,
        role: login.role,
        name: STAFF_NAMES[login.email],
      });
      if (login.role === 'technician') technicianId = u.id;
      // the staff accounts appear in the demo's audit log (GET /api/audit-logs) as the admin's work
      await recordAudit(new TenantScope(trx, isp.tenant.id), {
        userId: isp.admin.id,
        action: 'users.created',
        subject: { type: 'users', id: u.id },
        after: { email: u.email, role: login.role },
      });
    }
    // issue 8 item 1: the custom role "Billing clerk", its clerk and more technicians
    await seedDemoStaff(trx, isp.tenant.id, isp.admin.id, DEMO_PASSWORD);
    const ispSummary = await seedTenantData(trx, { ...isp.tenant, settings: {} }, { size: 'full', now, technicianId });
    await mark(trx, isp.tenant.id, 'full', now);
    // issue 8 item 4: three months of the billing cycle replace the calendar-month invoices of issue 2
    ispSummary.invoices = await seedDemoBilling(trx, isp.tenant.id, { now, userId: isp.admin.id });
    // issue 8 item 2: PPPoE customers on the first NAS, one of them suspended and isolated
    await seedDemoCustomerNetwork(trx, isp.tenant.id, { now, onNas: 4 });
    await seedDemoApk(trx, isp.tenant.id, { now }); // issue 12: the portal app, buildable with the stub

    const sandbox = await createTenant(trx, {
      slug: 'demo-sandbox',
      name: 'Demo Sandbox',
      adminEmail: 'admin@demo-sandbox.test',
      adminPassword: DEMO_PASSWORD,
      demo: true,
    });
    const sandboxSummary = await seedTenantData(
      trx,
      { ...sandbox.tenant, settings: {} },
      { size: 'small', now, technicianId: null },
    );
    await mark(trx, sandbox.tenant.id, 'small', now);
    await typeSeededSubscriptions(trx, sandbox.tenant.id); // issue 8 item 4: invoice types
    await seedDemoCustomerNetwork(trx, sandbox.tenant.id, { now, onNas: 2 }); // issue 8 item 2
    log(
      `seeded demo-isp (${ispSummary.customers} customers) and demo-sandbox (${sandboxSummary.customers} customers, demo mode)`,
    );
    return {
      seeded: true,
      platform_admin: { id: admin.id, email: admin.email },
      tenants: [ispSummary, sandboxSummary],
    };
  });
}

async function seedOneTenant(
  knex: Knex,
  ref: string,
  opts: { now: Date; log: (l: string) => void; size?: DemoSize },
): Promise<SeedResult> {
  return knex.transaction(async (trx) => {
    const found = await findTenant(trx, ref);
    const tenant = await trx('tenants').where({ id: found.id }).forUpdate().first();
    if (tenant.settings?.[MARKER]) {
      return {
        seeded: false,
        reason: `Tenant ${tenant.slug} already has the demo data (seeded ${tenant.settings[MARKER].at}).`,
        tenants: [await summarize(trx, tenant)],
      };
    }
    const size = opts.size ?? (tenant.demo_mode ? 'small' : 'full');
    const tech = await trx('users as u')
      .join('user_roles as ur', 'ur.user_id', 'u.id')
      .join('roles as r', 'r.id', 'ur.role_id')
      .where({ 'u.tenant_id': tenant.id, 'r.name': 'technician' })
      .orderBy('u.id')
      .first('u.id');
    opts.log(`seeding demo data into ${tenant.slug} (${size}) ...`);
    const summary = await seedTenantData(trx, tenant, { size, now: opts.now, technicianId: tech?.id ?? null });
    await typeSeededSubscriptions(trx, tenant.id); // issue 8 item 4: invoice types
    await seedDemoCustomerNetwork(trx, tenant.id, { now: opts.now, onNas: size === 'full' ? 4 : 2 }); // issue 8 item 2
    await seedDemoApk(trx, tenant.id, { now: opts.now }); // issue 12
    await mark(trx, tenant.id, size, opts.now);
    return { seeded: true, tenants: [summary] };
  });
}

async function mark(trx: Knex.Transaction, tenantId: number, size: DemoSize, now: Date) {
  await trx('tenants')
    .where({ id: tenantId })
    .update({
      settings: trx.raw(`settings || ?::jsonb`, [JSON.stringify({ [MARKER]: { at: now.toISOString(), size } })]),
    });
}
