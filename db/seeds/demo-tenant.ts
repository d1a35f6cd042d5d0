import type { Knex } from 'knex';
import { TenantScope } from '../tenant-scope.js';
import { seedSchedules } from './demo-schedules.js';
import { seedTicketWork } from './demo-ticket-work.js';
import { seedHomeBasesAndNas } from './demo-network.js';
import { seedDemoCommunications } from './demo-communications.js';
import { seedDemoInventory, serialPrefixOf } from './demo-inventory.js';
import {
  pad,
  pickWeighted,
  seedInvoices,
  seedOnu,
  seedTickets,
  type DemoSizeSpec,
  type SeededCustomer,
} from './demo-customer-rows.js';
import {
  DAY,
  DEMO_OLTS,
  DEMO_PACKAGES,
  FIRST_NAMES,
  HOUR,
  LAST_NAMES,
  createRng,
  macAddress,
  phoneNumber,
  streetAddress,
} from './demo-data.js';

/**
 * The demo data of one tenant (issue 2 §2): packages, customers, OLTs, ONUs, invoices in every
 * status and tickets in every status and priority, all written through TenantScope. Some unpaid
 * invoices are past their due date and some open tickets past their resolution due date, so the
 * invoice-overdue and ticket-sla jobs find work on a fresh demo.
 */

/** Size of a tenant's demo data set. */
export type DemoSize = 'full' | 'small';

const SIZES: Record<DemoSize, DemoSizeSpec> = {
  full: { customers: 50, olts: 2, ticketPriorities: ['high', 'medium', 'low'], extraTickets: 8, schedules: 12 },
  small: { customers: 12, olts: 1, ticketPriorities: ['high', 'low'], extraTickets: 0, schedules: 4 },
};

/** Counts of what was written for a tenant. */
export interface TenantSeedSummary {
  id: number;
  slug: string;
  demo_mode: boolean;
  packages: number;
  customers: number;
  olts: number;
  onus: number;
  /** Invoices per status. */
  invoices: Record<string, number>;
  /** Tickets per status. */
  tickets: Record<string, number>;
  /** Technician schedules per status. */
  schedules: Record<string, number>;
  /** Entries of the tickets' work record (issue 8 item 6): comments, notes, check-ins, attachments. */
  ticket_work: { comments: number; notes: number; check_ins: number; attachments: number };
}

/** FNV-1a of a string: the PRNG seed of a tenant, so each slug gets its own stable data. */
export function seedFor(slug: string): number {
  let h = 0x811c9dc5;
  for (const c of slug) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/**
 * Writes a demo data set into a tenant. Not idempotent by itself: db/seeds/demo.ts guards it with
 * the tenant's settings.demo_seed marker. Run it inside a transaction.
 * @param knex a transaction (or the process knex)
 * @param tenant id, slug, demo_mode and settings of the tenant
 * @param opts.size full (50 customers, 2 OLTs) or small (12 customers, 1 OLT)
 * @param opts.now the moment the data is relative to (due dates, last_seen, ages)
 * @param opts.technicianId user the worked-on tickets are assigned to (null: unassigned)
 */
export async function seedTenantData(
  knex: Knex | Knex.Transaction,
  tenant: { id: number; slug: string; demo_mode: boolean; settings?: Record<string, unknown> | null },
  opts: { size: DemoSize; now: Date; technicianId: number | null },
): Promise<TenantSeedSummary> {
  const size = SIZES[opts.size];
  const scope = new TenantScope(knex, tenant.id);
  const rng = createRng(seedFor(tenant.slug));
  const now = opts.now;
  const at = (msAgo: number) => new Date(now.getTime() - msAgo);

  const packages: { id: number; service_type: string; is_active: boolean; price: number }[] = [];
  for (const [i, p] of DEMO_PACKAGES.entries()) {
    const created = at((400 - i) * DAY);
    packages.push(await scope.insert('packages', { ...p, created_at: created, updated_at: created }));
  }
  const byType = (t: string) => packages.filter((p) => p.service_type === t);
  const home = packages.filter((p) => p.service_type === 'pppoe' && p.is_active);
  const retired = packages.filter((p) => !p.is_active);

  const homeBaseOf = await seedHomeBasesAndNas(scope, {
    now: at(390 * DAY),
    homeBases: size.olts === 1 ? 1 : 3,
    nas: size.olts,
  });
  const olts = [];
  for (const o of DEMO_OLTS.slice(0, size.olts)) {
    const { serialPrefix: _s, frame: _f, ...row } = o;
    olts.push({
      meta: o,
      row: await scope.insert('olts', {
        ...row,
        status: 'online',
        home_base_id: homeBaseOf.get(o.name) ?? null,
        driver: 'fake',
        last_polled_at: now,
        created_at: at(380 * DAY),
        updated_at: at(2 * DAY),
      }),
    });
  }

  const customers: SeededCustomer[] = [];
  let onuCount = 0;
  for (let i = 0; i < size.customers; i++) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const status =
      i === 3
        ? 'suspended'
        : i === 5
          ? 'terminated'
          : pickWeighted(rng, [
              ['terminated', 0.06],
              ['suspended', 0.12],
              ['active', 1],
            ]);
    // customer 3 (the always-suspended one) is PPPoE, so every tenant has a suspended PPPoE customer to
    // isolate on its NAS (demo-customer-network.ts); the draw still happens, keeping the sequence
    const drawn =
      i === 1 || i === 2 || i === 4
        ? null
        : pickWeighted(rng, [
            ['hotspot', 0.1],
            ['dhcp', 0.2],
            ['static', 0.28],
            ['pppoe', 1],
          ]);
    const serviceType = i === 1 ? 'dhcp' : i === 2 ? 'static' : i === 4 ? 'hotspot' : i === 3 ? 'pppoe' : drawn!;
    const pkg =
      serviceType === 'hotspot'
        ? byType('hotspot')[0]
        : serviceType === 'static'
          ? byType('static')[0]
          : rng.chance(0.15) && retired.length
            ? retired[0]
            : rng.pick(home);
    const created = at((size.customers - i) * 6 * DAY + rng.int(0, 20) * HOUR);
    const code = `CUST-${pad(await scope.nextNumber('customer'))}`;
    const c = await scope.insert('customers', {
      code,
      name: `${first} ${last}`,
      email: rng.chance(0.85) ? `${first}.${last}${rng.int(1, 99)}@example.net`.toLowerCase() : null,
      phone: phoneNumber(rng),
      address: streetAddress(rng),
      latitude: rng.float(-6.95, -6.86, 6),
      longitude: rng.float(107.57, 107.66, 6),
      package_id: pkg.id,
      status,
      service_type: serviceType,
      billing_cycle: pickWeighted(rng, [
        ['postpaid', 0.3],
        ['prepaid_rolling', 0.5],
        ['prepaid', 1],
      ]),
      billing_day: rng.int(1, 28),
      customer_tier: rng.chance(0.1) ? 'vip' : 'regular',
      mac_address: serviceType === 'dhcp' || serviceType === 'static' ? macAddress(rng) : null,
      created_at: created,
      updated_at: new Date(Math.min(now.getTime(), created.getTime() + rng.int(0, 30) * DAY)),
    });
    let onu: SeededCustomer['onu'] = null;
    if (serviceType !== 'hotspot') {
      onu = await seedOnu(scope, rng, olts[i % olts.length], {
        customerId: c.id,
        status,
        index: onuCount++,
        now,
        created,
      });
    }
    customers.push({
      id: c.id,
      name: c.name,
      phone: c.phone,
      address: c.address,
      status,
      service_type: serviceType,
      created_at: created,
      price: Number(pkg.price),
      package_id: pkg.id,
      onu,
    });
  }

  for (const [i, c] of customers.entries()) {
    if (c.service_type === 'hotspot') continue;
    await seedInvoices(scope, rng, c, i, now);
  }
  await seedTickets(scope, rng, customers, { ...opts, settings: tenant.settings ?? {}, size });
  await seedSchedules(scope, rng, { now, count: size.schedules, technicianId: opts.technicianId, createdBy: null });
  await seedTicketWork(scope, rng, { now, technicianId: opts.technicianId });
  await seedDemoCommunications(scope, { now });
  // issue 16 item 7: locations, serial ONTs, suppliers, a request per state
  await seedDemoInventory(knex, tenant.id, {
    technicianId: opts.technicianId,
    serialPrefix: serialPrefixOf(tenant.slug),
  });
  return summarize(knex, tenant);
}

/** Counts the tenant's demo rows (what seedTenantData reports). */
export async function summarize(
  knex: Knex | Knex.Transaction,
  tenant: { id: number; slug: string; demo_mode: boolean },
): Promise<TenantSeedSummary> {
  const s = new TenantScope(knex, tenant.id);
  const count = async (t: 'packages' | 'customers' | 'olts' | 'onus') =>
    Number((await s.table(t).count({ n: '*' }).first())!.n);
  const byStatus = async (t: 'invoices' | 'tickets' | 'schedules') =>
    Object.fromEntries(
      (
        (await s.table(t).select('status').count({ n: '*' }).groupBy('status').orderBy('status')) as {
          status: string;
          n: string;
        }[]
      ).map((r) => [r.status, Number(r.n)]),
    );
  const entries = async (t: 'ticket_check_ins' | 'ticket_attachments') =>
    Number((await s.table(t).count({ n: '*' }).first())!.n);
  const kinds = Object.fromEntries(
    (
      (await s.table('ticket_comments').select('kind').count({ n: '*' }).groupBy('kind')) as {
        kind: string;
        n: string;
      }[]
    ).map((r) => [r.kind, Number(r.n)]),
  );
  return {
    id: tenant.id,
    slug: tenant.slug,
    demo_mode: tenant.demo_mode,
    packages: await count('packages'),
    customers: await count('customers'),
    olts: await count('olts'),
    onus: await count('onus'),
    invoices: await byStatus('invoices'),
    tickets: await byStatus('tickets'),
    schedules: await byStatus('schedules'),
    ticket_work: {
      comments: kinds.comment ?? 0,
      notes: kinds.note ?? 0,
      check_ins: await entries('ticket_check_ins'),
      attachments: await entries('ticket_attachments'),
    },
  };
}
