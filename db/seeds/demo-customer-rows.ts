/**
 * The per-customer rows of a tenant's demo data (issue 2 §2), split out of demo-tenant.ts: the
 * customer's ONU with its readings, invoices in every status and tickets in every status and
 * priority, written through TenantScope with the tenant's seeded PRNG.
 */
import { TenantScope } from '../tenant-scope.js';
import { demoReading } from './demo-network.js';
import { dueDates, type Priority } from '../../api/tickets/sla.js';
import { DAY, DEMO_OLTS, HOUR, TICKET_TYPES, monthEnd, monthStart, ymd, type Rng } from './demo-data.js';

/** How much a demo data set holds (full or small). */
export interface DemoSizeSpec {
  customers: number;
  olts: number;
  ticketPriorities: Priority[];
  extraTickets: number;
  schedules: number;
}

/** A customer as the tenant seed wrote it (what its ONU, invoices and tickets refer to). */
export interface SeededCustomer {
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

/** Six-digit zero padding of a number (INV-000001). */
export const pad = (n: number) => String(n).padStart(6, '0');

export function pickWeighted<T extends string>(rng: Rng, table: [T, number][]): T {
  const r = rng.next();
  return (table.find(([, upTo]) => r < upTo) ?? table[table.length - 1])[0];
}

export async function seedOnu(
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
export async function seedInvoices(scope: TenantScope, rng: Rng, c: SeededCustomer, i: number, now: Date) {
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
export async function seedTickets(
  scope: TenantScope,
  rng: Rng,
  customers: SeededCustomer[],
  opts: { now: Date; technicianId: number | null; settings: Record<string, unknown>; size: DemoSizeSpec },
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
