import { expect } from 'chai';
import type { Knex } from 'knex';
import { DEMO_LOGINS, DEMO_PASSWORD, seedDemo } from '../../db/seeds/demo.js';
import { DEMO_CUSTOM_ROLE, DEMO_EXTRA_TECHNICIANS } from '../../db/seeds/demo-users.js';
import { login } from '../../api/auth/service.js';
import { listAuditLogs } from '../../api/audit-logs/service.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { makeTenant } from '../helpers/fixtures.js';
import { fakeReading } from '../../jobs/adapters/olt/index.js';
import { env } from '../helpers/env.js';
import { freshDatabase } from '../helpers/fresh-db.js';

const count = async (q: Knex.QueryBuilder) => Number((await q.count({ n: '*' }).first())!.n);

describe('demo seed (db/seeds/demo.ts)', function () {
  this.timeout(60_000);
  const now = new Date(Math.floor(Date.now() / 60_000) * 60_000); // the seed is relative to it: any day works
  let knex: Knex;
  let result: Awaited<ReturnType<typeof seedDemo>>;
  let isp: { id: number; demo_mode: boolean };
  let sandbox: { id: number; demo_mode: boolean };

  before(async () => {
    knex = (await freshDatabase()).knex;
    result = await seedDemo(knex, { now });
    isp = await knex('tenants').where({ slug: 'demo-isp' }).first();
    sandbox = await knex('tenants').where({ slug: 'demo-sandbox' }).first();
  });

  it('seeds a platform admin and the two tenants, demo-sandbox in demo mode', async () => {
    expect(result.seeded).to.equal(true);
    expect(result.tenants.map((t) => t.slug)).to.deep.equal(['demo-isp', 'demo-sandbox']);
    expect(isp.demo_mode).to.equal(false);
    expect(sandbox.demo_mode).to.equal(true);
    const admin = await knex('users').where({ email: 'admin@platform.test' }).first();
    expect(admin).to.include({ is_platform_admin: true, tenant_id: null });
  });

  it('gives demo-isp 5 packages, 50 customers, 2 OLTs (ZTE and Huawei) and ONUs for most customers', async () => {
    expect(await count(knex('packages').where({ tenant_id: isp.id }))).to.equal(5);
    expect(await count(knex('customers').where({ tenant_id: isp.id }))).to.equal(50);
    expect(await knex('olts').where({ tenant_id: isp.id }).orderBy('id').pluck('vendor')).to.deep.equal([
      'ZTE',
      'Huawei',
    ]);
    const onus = await knex('onus').where({ tenant_id: isp.id });
    expect(onus.length).to.be.within(35, 50);
    const customerIds = new Set(await knex('customers').where({ tenant_id: isp.id }).pluck('id'));
    expect(onus.every((o) => customerIds.has(o.customer_id))).to.equal(true);
    expect(new Set(onus.map((o) => o.status))).to.deep.equal(new Set(['online', 'offline', 'los', 'power_fail']));
    // active ONUs show the fake OLT driver's reading, polled at the seed's moment (issue 8 item 3)
    for (const o of onus.filter((x) => x.is_active)) {
      const r = fakeReading(o.serial_number, now);
      expect([o.status, o.rx_power, o.tx_power, o.uptime === null ? null : Number(o.uptime)]).to.deep.equal([
        r.status,
        r.rx_power,
        r.tx_power,
        r.uptime,
      ]);
    }
    for (const o of onus.filter((x) => x.status === 'online')) {
      expect(o.rx_power).to.be.within(-28, -8);
      expect(o.tx_power).to.be.within(0.5, 4.99);
      expect(o.pon_port).to.match(/^\d\/\d\/\d{1,2}$/);
      expect(Number(o.uptime)).to.be.at.least(0);
      expect(o.last_seen.getTime()).to.equal(now.getTime());
    }
    expect(onus.every((o) => /^(ZTEG|HWTC)[0-9A-F]{8}$/.test(o.serial_number))).to.equal(true);
  });

  it('gives demo-isp home bases, NAS and OLTs at their POPs, polled at the seed moment (issue 8 item 3)', async () => {
    const bases = await knex('home_bases').where({ tenant_id: isp.id }).orderBy('id');
    expect(bases.map((b) => b.name)).to.deep.equal(['POP Dago', 'POP Buah Batu', 'Gudang Kiaracondong']);
    expect(bases.every((b) => b.latitude < -6.8 && b.latitude > -7 && b.longitude > 107.5)).to.equal(true);
    const olts = await knex('olts').where({ tenant_id: isp.id }).orderBy('id');
    expect(olts.map((o) => o.home_base_id)).to.deep.equal([bases[0].id, bases[1].id]);
    const polled = (o: { driver: string; is_active: boolean; last_polled_at: Date }) =>
      o.driver === 'fake' && o.is_active && o.last_polled_at.getTime() === now.getTime();
    expect(olts.every(polled)).to.equal(true);
    const nas = await knex('nas').where({ tenant_id: isp.id }).orderBy('id');
    expect(nas.map((n) => n.nas_key)).to.deep.equal(['dago-core', 'buahbatu-core']);
    expect(nas.every((n) => n.driver === 'fake' && n.credentials_enc === null)).to.equal(true);
    expect(await count(knex('home_bases').where({ tenant_id: sandbox.id }))).to.equal(1);
    expect(await count(knex('nas').where({ tenant_id: sandbox.id }))).to.equal(1);
    const ticketOnus = await knex('tickets as t')
      .join('onus as o', 'o.id', 't.onu_id')
      .where({ 't.tenant_id': isp.id, 't.type': 'LOS red light on ONU' })
      .pluck('o.status');
    expect(ticketOnus.every((st) => st === 'los')).to.equal(true);
  });

  it('gives customers codes, E.164 phones, every status and service type, and MACs for dhcp/static', async () => {
    const rows = await knex('customers').where({ tenant_id: isp.id }).orderBy('id');
    expect(rows.map((r) => r.code)).to.deep.equal(
      Array.from({ length: 50 }, (_, i) => `CUST-${String(i + 1).padStart(6, '0')}`),
    );
    expect(rows.every((r) => /^\+628\d{8,10}$/.test(r.phone))).to.equal(true);
    expect(new Set(rows.map((r) => r.status))).to.deep.equal(new Set(['active', 'suspended', 'terminated']));
    expect(new Set(rows.map((r) => r.service_type))).to.deep.equal(new Set(['pppoe', 'hotspot', 'dhcp', 'static']));
    for (const r of rows) {
      if (r.service_type === 'dhcp' || r.service_type === 'static')
        expect(r.mac_address).to.match(/^([0-9A-F]{2}:){5}[0-9A-F]{2}$/);
      else expect(r.mac_address).to.equal(null);
    }
    expect(
      rows.every((r) => r.latitude < -6.8 && r.latitude > -7 && r.longitude > 107.5 && r.longitude < 107.7),
    ).to.equal(true);
  });

  it('has invoices in every status, some unpaid past due (work for invoice-overdue)', async () => {
    const statuses = await knex('invoices').where({ tenant_id: isp.id }).distinct('status').pluck('status');
    expect(statuses.sort()).to.deep.equal(['cancelled', 'overdue', 'paid', 'unpaid']);
    const pastDue = await count(
      knex('invoices')
        .where({ tenant_id: isp.id, status: 'unpaid' })
        .where('due_date', '<', now.toISOString().slice(0, 10)),
    );
    expect(pastDue).to.be.greaterThan(0);
    const numbers = await knex('invoices').where({ tenant_id: isp.id }).orderBy('id').pluck('invoice_number');
    expect(numbers[0]).to.equal('INV-000001');
    expect(new Set(numbers).size).to.equal(numbers.length);
  });

  it('has tickets in every status and priority, with SLA due dates, some open ones past due (work for ticket-sla)', async () => {
    const rows = await knex('tickets').where({ tenant_id: isp.id });
    expect(new Set(rows.map((r) => r.status))).to.deep.equal(new Set(['open', 'inprogress', 'resolved', 'closed']));
    expect(new Set(rows.map((r) => r.priority))).to.deep.equal(new Set(['high', 'medium', 'low']));
    for (const s of ['open', 'inprogress', 'resolved', 'closed']) {
      for (const p of ['high', 'medium', 'low'])
        expect(
          rows.some((r) => r.status === s && r.priority === p),
          `${s}/${p}`,
        ).to.equal(true);
    }
    expect(rows.every((r) => r.response_due_at && r.resolution_due_at && r.resolution_due_at > r.created_at)).to.equal(
      true,
    );
    const pastDue = rows.filter(
      (r) => ['open', 'inprogress'].includes(r.status) && r.resolution_due_at < now && !r.sla_breached,
    );
    expect(pastDue.length).to.be.greaterThan(0);
    const tech = await knex('users').where({ email: 'tech@demo-isp.test' }).first();
    expect(rows.filter((r) => r.status === 'inprogress').every((r) => r.assigned_to === tech.id)).to.equal(true);
  });

  it('creates the demo users with their roles; they log in with the demo password', async () => {
    const roles = await knex('users as u')
      .join('user_roles as ur', 'ur.user_id', 'u.id')
      .join('roles as r', 'r.id', 'ur.role_id')
      .whereIn(
        'u.email',
        DEMO_LOGINS.map((l) => l.email),
      )
      .select('u.email', 'r.name');
    for (const l of DEMO_LOGINS.filter((x) => x.tenant))
      expect(roles).to.deep.include({ email: l.email, name: l.role });
    const session = await login(knex, { email: 'tech@demo-isp.test', password: DEMO_PASSWORD });
    expect(session.user.roles).to.deep.equal(['technician']);
  });

  it("records the staff accounts in demo-isp's audit log, done by its Super Admin", async () => {
    const admin = await knex('users').where({ email: 'admin@demo-isp.test' }).first();
    const page = await listAuditLogs(
      new TenantScope(knex, isp.id),
      { page: 1, per_page: 50, action: 'users.created' },
      'Asia/Jakarta',
    );
    const staff = [
      ...DEMO_LOGINS.filter((l) => l.tenant === 'demo-isp' && l.role !== 'Super Admin').map((l) => l.email),
      ...DEMO_EXTRA_TECHNICIANS.map((t) => t.email),
    ];
    expect(page.total).to.equal(staff.length);
    expect(page.data.map((r) => r.user?.id)).to.deep.equal(staff.map(() => admin.id));
    expect(page.data.map((r) => r.after?.email).sort()).to.deep.equal(staff.sort());
    const other = await listAuditLogs(new TenantScope(knex, sandbox.id), { page: 1, per_page: 50 }, 'Asia/Jakarta');
    expect(other.total).to.equal(0);
  });

  it('gives demo-isp the custom role Billing clerk held by its clerk, and more technicians (issue 8 item 1)', async () => {
    const role = await knex('roles').where({ tenant_id: isp.id, name: DEMO_CUSTOM_ROLE.name }).first();
    const perms = await knex('role_permissions as rp')
      .join('permissions as p', 'p.id', 'rp.permission_id')
      .where('rp.role_id', role.id)
      .pluck('p.name');
    expect([...perms].sort()).to.deep.equal([...DEMO_CUSTOM_ROLE.permissions].sort());
    const session = await login(knex, { email: 'clerk@demo-isp.test', password: DEMO_PASSWORD });
    expect(session.user.roles).to.deep.equal([DEMO_CUSTOM_ROLE.name]);
    expect(session.user.permissions).to.include('invoices.manage').and.not.include('users.manage');
    const techs = await knex('users as u')
      .join('user_roles as ur', 'ur.user_id', 'u.id')
      .join('roles as r', 'r.id', 'ur.role_id')
      .where({ 'u.tenant_id': isp.id, 'r.name': 'technician', 'u.is_active': true })
      .pluck('u.email');
    expect(techs).to.have.length(1 + DEMO_EXTRA_TECHNICIANS.length);
    expect(await knex('roles').where({ tenant_id: sandbox.id })).to.have.length(0);
    const audit = await knex('audit_log').where({ tenant_id: isp.id, action: 'roles.created' });
    expect(audit.map((r) => r.after.name)).to.deep.equal([DEMO_CUSTOM_ROLE.name]);
  });

  it('gives demo-isp technician schedules in every status, on the technician, around now', async () => {
    const tech = await knex('users').where({ email: 'tech@demo-isp.test' }).first();
    const rows = await knex('schedules').where({ tenant_id: isp.id });
    expect(rows).to.have.length(12);
    expect([...new Set(rows.map((r) => r.status))].sort()).to.deep.equal([
      'cancelled',
      'done',
      'in_progress',
      'scheduled',
    ]);
    expect(rows.every((r) => r.technician_id === tech.id && r.customer_id !== null)).to.equal(true);
    const upcoming = rows.filter((r) => r.status === 'scheduled');
    expect(upcoming.every((r) => r.scheduled_at > now)).to.equal(true);
    expect(rows.filter((r) => r.status === 'done').every((r) => r.finished_at <= now)).to.equal(true);
    expect(result.tenants[0].schedules.scheduled).to.equal(upcoming.length);
    expect(result.tenants[1].schedules).to.deep.equal({ cancelled: 1, done: 2, in_progress: 1 });
  });

  it('documents the demo tickets: finished ones fully, half of those in progress, one open one', async () => {
    const tickets = await knex('tickets').where({ tenant_id: isp.id }).orderBy('id');
    const work = async (table: string, id: number) => count(knex(table).where({ tenant_id: isp.id, ticket_id: id }));
    const documented = async (id: number) =>
      (await work('ticket_comments', id)) +
        (await work('ticket_check_ins', id)) +
        (await work('ticket_attachments', id)) >
      0;
    for (const t of tickets.filter((x) => x.status === 'resolved' || x.status === 'closed')) {
      expect(await documented(t.id), t.ticket_number).to.equal(true);
      expect(await work('ticket_check_ins', t.id), t.ticket_number).to.equal(1);
    }
    const inProgress = await Promise.all(tickets.filter((x) => x.status === 'inprogress').map((t) => documented(t.id)));
    expect(inProgress).to.include(true).and.to.include(false);
    const open = await Promise.all(tickets.filter((x) => x.status === 'open').map((t) => documented(t.id)));
    expect(open.filter(Boolean)).to.have.length(1);
    const tech = await knex('users').where({ email: 'tech@demo-isp.test' }).first();
    const checkIns = await knex('ticket_check_ins').where({ tenant_id: isp.id });
    expect(checkIns.every((c) => c.user_id === tech.id && c.accuracy >= 4 && c.accuracy <= 25)).to.equal(true);
    expect(checkIns.every((c) => c.created_at <= now)).to.equal(true);
    const notes = await knex('ticket_comments').where({ tenant_id: isp.id, kind: 'note' });
    expect(notes.every((n) => n.user_id === tech.id && n.body.length > 10)).to.equal(true);
    expect(result.tenants[0].ticket_work).to.deep.include({
      notes: notes.length,
      check_ins: checkIns.length,
      attachments: 0,
    });
    const sb = result.tenants[1].ticket_work;
    expect(sb.check_ins).to.be.greaterThan(0).and.lessThan(checkIns.length);
    const sbAuthors = await knex('ticket_comments')
      .where({ tenant_id: sandbox.id })
      .distinct('user_id')
      .pluck('user_id');
    expect(sbAuthors.every((id) => id !== null)).to.equal(true);
  });

  it('gives demo-sandbox a smaller set', async () => {
    const sb = result.tenants[1];
    expect(sb.customers).to.equal(12);
    expect(sb.olts).to.equal(1);
    expect(Object.keys(sb.invoices).length).to.be.greaterThan(1);
    expect(Object.keys(sb.tickets).sort()).to.deep.equal(['closed', 'inprogress', 'open', 'resolved']);
  });

  it('does nothing when run again (the database has tenants)', async () => {
    const before = await Promise.all(
      ['tenants', 'users', 'customers', 'invoices', 'tickets', 'onus'].map((t) => count(knex(t))),
    );
    const again = await seedDemo(knex, { now });
    expect(again.seeded).to.equal(false);
    expect(again.reason).to.match(/already has tenants/);
    const after = await Promise.all(
      ['tenants', 'users', 'customers', 'invoices', 'tickets', 'onus'].map((t) => count(knex(t))),
    );
    expect(after).to.deep.equal(before);
  });

  it('is deterministic: another fresh database gets the same customers, MACs and serials', async () => {
    const other = (await freshDatabase()).knex;
    await seedDemo(other, { now });
    const pick = (k: Knex) =>
      k('customers as c')
        .join('tenants as t', 't.id', 'c.tenant_id')
        .leftJoin('onus as o', 'o.customer_id', 'c.id')
        .orderBy(['t.slug', 'c.code'])
        .select('t.slug', 'c.code', 'c.name', 'c.phone', 'c.mac_address', 'c.status', 'o.serial_number', 'o.rx_power');
    expect(await pick(other)).to.deep.equal(await pick(knex));
  });
});

describe('demo seed of one tenant (seedDemo with opts.tenant)', function () {
  this.timeout(60_000);

  it('seeds a normal tenant with the full set once; a second run adds nothing', async () => {
    const f = await makeTenant();
    const first = await seedDemo(env.knex, { tenant: f.tenant.slug });
    expect(first.seeded).to.equal(true);
    expect(first.tenants[0]).to.include({ slug: f.tenant.slug, customers: 50, olts: 2, packages: 5 });
    const second = await seedDemo(env.knex, { tenant: String(f.tenant.id) });
    expect(second.seeded).to.equal(false);
    expect(second.reason).to.match(/already has the demo data/);
    expect(await count(f.scope.table('customers'))).to.equal(50);
    expect(await count(f.scope.table('tickets'))).to.equal(
      first.tenants[0].tickets.open +
        first.tenants[0].tickets.inprogress +
        first.tenants[0].tickets.resolved +
        first.tenants[0].tickets.closed,
    );
  });

  it('seeds a demo-mode tenant with the small set, codes continuing its own counters', async () => {
    const f = await makeTenant({ demo: true });
    const n = await f.scope.nextNumber('customer');
    await f.scope.insert('customers', {
      code: `CUST-${String(n).padStart(6, '0')}`,
      name: 'Existing',
      phone: '+628111111111',
      address: 'Jl. A 1',
    });
    const r = await seedDemo(env.knex, { tenant: f.tenant.slug });
    expect(r.tenants[0]).to.include({ customers: 13, olts: 1 });
    const codes = await f.scope.table('customers').orderBy('id').pluck('code');
    expect(codes[0]).to.equal('CUST-000001');
    expect(codes[1]).to.equal('CUST-000002');
    expect(new Set(codes).size).to.equal(13);
  });

  it('refuses an unknown tenant with NotFound', async () => {
    let err: unknown;
    try {
      await seedDemo(env.knex, { tenant: 'no-such-tenant' });
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string }).code).to.equal('NOT_FOUND');
  });
});
