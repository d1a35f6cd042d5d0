import type { Knex } from 'knex';
import { TenantScope } from '../tenant-scope.js';
import { seedSchedules } from './demo-schedules.js';
import { seedTicketWork } from './demo-ticket-work.js';
import { demoReading, seedHomeBasesAndNas } from './demo-network.js';
import { seedDemoCommunications } from './demo-communications.js';
import { seedDemoInventory, serialPrefixOf } from './demo-inventory.js';
import { dueDates, type Priority } from '../../api/tickets/sla.js';
import {
  DAY,
  DEMO_OLTS,
  DEMO_PACKAGES,
  FIRST_NAMES,
  HOUR,
  LAST_NAMES,
  TICKET_TYPES,
  createRng,
  macAddress,
  monthEnd,
  monthStart,
  phoneNumber,
  streetAddress,
  ymd,
  type Rng,
} from './demo-data.js';

/**
 * The demo data of one tenant (issue 2 §2): packages, customers, OLTs, ONUs, invoices in every
 * status and tickets in every status and priority, all written through TenantScope. Some unpaid
 * invoices are past their due date and some open tickets past their resolution due date, so the
 * invoice-overdue and ticket-sla jobs find work on a fresh demo.
 */

/** Size of a tenant's demo data set. */
export type DemoSize = 'full' | 'small';

const SIZES: Record<
  DemoSize,
  { customers: number; olts: number; ticketPriorities: Priority[]; extraTickets: number; schedules: number }
> = {
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

interface SeededCustomer {
  id: number;
  name: string;
  phone: string;
  address: string;
  status: string;
  service_type: string;
  created_at: Date;
  price: number;
  package_id: number;
  onu: { id: number; status: string } | null;
}

const pad = (n: number) => String(n).padStart(6, '0');

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
    const serviceType =
      i === 1
        ? 'dhcp'
        : i === 2
          ? 'static'
          : i === 4
            ? 'hotspot'
            : pickWeighted(rng, [
                ['hotspot', 0.1],
                ['dhcp', 0.2],
                ['static', 0.28],
                ['pppoe', 1],
              ]);
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

function pickWeighted<T extends string>(rng: Rng, table: [T, number][]): T {
  const r = rng.next();
  return (table.find(([, upTo]) => r < upTo) ?? table[table.length - 1])[0];
}

async function seedOnu(
  scope: TenantScope,
  rng: Rng,
  olt: { meta: (typeof DEMO_OLTS)[number]; row: { id: number } },
  c: { customerId: number; status: string; index: number; now: Date; created: Date },
) {
  const k = c.index;
  const status =
    c.status !== 'active'
      ? 'offline'
      : k % 9 === 4
        ? 'los'
        : k % 9 === 7
          ? 'power_fail'
          : k % 13 === 6
            ? 'offline'
            : 'online';
  const online = status === 'online';
  const rx = rng.float(-27, -18, 2);
  const tx = rng.float(1.5, 2.8, 2);
  const seenAgo = online
    ? rng.int(5, 120) * 1000
    : c.status === 'terminated'
      ? rng.int(30, 90) * DAY
      : rng.int(1, 72) * HOUR;
  // the rng draws stay as they were, so the rest of the demo data does not move
  const serial = `${olt.meta.serialPrefix}${rng.hex(8)}`;
  const ponPort = `${olt.meta.frame}/${rng.int(1, 2)}/${rng.int(1, 16)}`;
  const bandwidth = online ? rng.float(3, 92, 2) : null;
  const uptime = online ? rng.int(3600, 45 * 24 * 3600) : null;
  const seen = new Date(c.now.getTime() - seenAgo);
  const stored = {
    status,
    rx_power: status === 'los' || status === 'power_fail' ? null : rx,
    tx_power: status === 'power_fail' ? null : tx,
    bandwidth_pct: bandwidth,
    uptime,
    last_seen: seen,
    updated_at: seen,
  };
  // an active ONU shows what the fake OLT driver reports, as polled at `now` (issue 8 item 3)
  if (c.status !== 'terminated') {
    const r = demoReading(serial, c.now);
    const up = r.status === 'online';
    Object.assign(stored, {
      status: r.status,
      rx_power: r.rx_power,
      tx_power: r.tx_power,
      uptime: r.uptime,
      bandwidth_pct: up ? (bandwidth ?? 5 + (k % 17) * 4.5) : null,
      last_seen: up ? c.now : seen,
      updated_at: up ? c.now : seen,
    });
  }
  const row = await scope.insert('onus', {
    olt_id: olt.row.id,
    customer_id: c.customerId,
    serial_number: serial,
    pon_port: ponPort,
    ...stored,
    is_active: c.status !== 'terminated',
    created_at: c.created,
  });
  return { id: row.id, status: stored.status };
}

/**
 * Three monthly invoices per customer (two months back, last month, this month), due on the 10th:
 * terminated -> paid, cancelled; suspended -> paid, overdue, overdue/unpaid; active -> paid, paid
 * (every 7th left unpaid past its due date), and this month paid or unpaid.
 */
async function seedInvoices(scope: TenantScope, rng: Rng, c: SeededCustomer, i: number, now: Date) {
  for (const back of [2, 1, 0]) {
    const start = monthStart(now, back);
    const end = monthEnd(start);
    if (c.created_at > new Date(end.getTime() + DAY)) continue;
    if (c.status === 'terminated' && back === 0) continue;
    const due = new Date(start.getTime() + 9 * DAY);
    const pastDue = due < now;
    let status: string;
    if (c.status === 'terminated') status = back === 2 ? 'paid' : 'cancelled';
    else if (c.status === 'suspended') status = back === 2 ? 'paid' : back === 1 || pastDue ? 'overdue' : 'unpaid';
    else if (back === 2) status = 'paid';
    else if (back === 1) status = i % 7 === 0 ? 'unpaid' : 'paid';
    else status = rng.chance(pastDue ? 0.6 : 0.3) ? 'paid' : 'unpaid';
    const paidAt =
      status === 'paid'
        ? new Date(Math.min(now.getTime() - HOUR, due.getTime() - rng.int(0, 8) * DAY + rng.int(8, 20) * HOUR))
        : null;
    const created = new Date(Math.min(start.getTime(), now.getTime()));
    const updated = paidAt ?? (status === 'overdue' ? new Date(Math.min(now.getTime(), due.getTime() + DAY)) : created);
    await scope.insert('invoices', {
      invoice_number: `INV-${pad(await scope.nextNumber('invoice'))}`,
      customer_id: c.id,
      package_id: c.package_id,
      amount: c.price,
      status,
      due_date: ymd(due),
      paid_at: paidAt,
      period_start: ymd(start),
      period_end: ymd(end),
      created_at: created,
      updated_at: updated,
    });
  }
}

const DESCRIPTIONS: Record<string, string> = {
  'No internet': 'Customer reports no connection since this morning; router lights normal.',
  'Slow connection': 'Speed test shows a fraction of the package speed in the evening.',
  'LOS red light on ONU': 'LOS light blinking red on the ONU; possible fibre break at the drop cable.',
  'Intermittent connection': 'Connection drops every few minutes, PPPoE session reconnects.',
  'Relocation request': 'Customer is moving house and asks to relocate the service.',
  'Router replacement': 'Router restarts by itself; customer asks for a replacement.',
  'Package upgrade': 'Customer asks to upgrade to a faster package from next month.',
  'Billing question': "Customer asks why last month's invoice is still unpaid after transfer.",
  'Wi-Fi password reset': 'Customer forgot the Wi-Fi password and asks for a reset.',
  'Cable cut after storm': 'Drop cable fell down after the storm; neighbours affected too.',
};

/**
 * Tickets in every status x priority, plus extra open ones. Open and in-progress tickets alternate
 * between fresh (not due yet) and stale (opened days ago: resolution past due, sla_breached still
 * false, work for the ticket-sla job).
 */
async function seedTickets(
  scope: TenantScope,
  rng: Rng,
  customers: SeededCustomer[],
  opts: { now: Date; technicianId: number | null; settings: Record<string, unknown>; size: (typeof SIZES)[DemoSize] },
) {
  const specs: { status: string; priority: Priority }[] = [];
  for (const status of ['open', 'inprogress', 'resolved', 'closed'])
    for (const priority of opts.size.ticketPriorities) specs.push({ status, priority });
  for (let i = 0; i < opts.size.extraTickets; i++)
    specs.push({ status: i % 3 === 0 ? 'inprogress' : 'open', priority: rng.pick(['high', 'medium', 'low'] as const) });
  const withService = customers.filter((c) => c.status !== 'terminated');
  let live = 0;
  for (const spec of specs) {
    const c = rng.pick(withService);
    const type = c.onu?.status === 'los' ? 'LOS red light on ONU' : rng.pick(TICKET_TYPES);
    const done = spec.status === 'resolved' || spec.status === 'closed';
    const stale = !done && live++ % 2 === 1;
    const openedAgo = done
      ? rng.int(3, 20) * DAY + rng.int(0, 23) * HOUR
      : stale
        ? rng.int(2, 6) * DAY + rng.int(0, 23) * HOUR
        : rng.int(10, 50) * 60_000;
    const opened = new Date(opts.now.getTime() - openedAgo);
    const due = dueDates(opts.settings, spec.priority, opened);
    const responded = spec.status === 'open' ? null : new Date(opened.getTime() + rng.int(5, 300) * 60_000);
    const resolved = done ? new Date(responded!.getTime() + rng.int(1, 70) * HOUR) : null;
    const closed = spec.status === 'closed' ? new Date(resolved!.getTime() + DAY) : null;
    const last = closed ?? resolved ?? responded ?? opened;
    const source = rng.pick(['admin', 'portal', 'external', 'bot'] as const);
    await scope.insert('tickets', {
      ticket_number: `TCK-${pad(await scope.nextNumber('ticket'))}`,
      source,
      external_id: source === 'external' ? `CRM-${rng.int(1000, 9999)}` : null,
      customer_id: c.id,
      onu_id: c.onu?.id ?? null,
      assigned_to: spec.status === 'open' ? null : opts.technicianId,
      type,
      priority: spec.priority,
      status: spec.status,
      description: DESCRIPTIONS[type] ?? null,
      location_text: c.address,
      contact_name: c.name,
      contact_phone: c.phone,
      sla_breached: done ? resolved! > due.resolution_due_at : false,
      ...due,
      responded_at: responded,
      resolved_at: resolved,
      closed_at: closed,
      created_at: opened,
      updated_at: new Date(Math.min(opts.now.getTime(), last.getTime())),
    });
  }
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
