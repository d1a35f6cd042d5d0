import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { addDays, startOfDayIn, todayIn } from '../../../lib/clock.js';

/** Issue 8 item 5: /api/schedules CRUD, status changes, filters, audit, tenant confinement. */
describe('/api/schedules', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };
  let basics: Awaited<ReturnType<typeof seedBasics>>;
  let day: string; // a day 10 days after the tenant's today: no other schedule of this file is there

  const count = async (tenantId: number) =>
    Number((await env.knex('schedules').where({ tenant_id: tenantId }).count('* as n'))[0].n);
  const at = (d: string, hh: number, mm = 0) =>
    new Date(startOfDayIn(a.timeZone, d).getTime() + (hh * 60 + mm) * 60_000).toISOString();
  const create = (body: Record<string, unknown>, token = a.adminToken) =>
    app.request('POST', '/api/schedules', { token, body });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
    basics = await seedBasics(a);
    day = addDays(todayIn(a.timeZone), 10);
  });

  it('creates a schedule: 201 with technician, customer and ticket, status scheduled, audited', async () => {
    const res = await create({
      scheduled_at: at(day, 9),
      job_type: 'installation',
      technician_id: tech.id,
      customer_id: basics.customerId,
      ticket_id: basics.ticketId,
      duration_minutes: 90,
      notes: 'Bring a 50 m drop cable',
    });
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d).to.include({ job_type: 'installation', status: 'scheduled', duration_minutes: 90, started_at: null });
    expect(d.scheduled_at).to.equal(at(day, 9));
    expect(d.technician).to.deep.equal({ id: tech.id, name: d.technician.name });
    expect(d.customer.id).to.equal(basics.customerId);
    expect(d.ticket.id).to.equal(basics.ticketId);
    const audit = await env.knex('audit_log').where({ tenant_id: a.tenant.id, action: 'schedules.created' });
    expect(audit.map((r) => Number(r.subject_id))).to.include(d.id);
    const shown = await app.request('GET', `/api/schedules/${d.id}`, { token: tech.token });
    expect(shown.status).to.equal(200);
    expect(shown.body.data).to.deep.equal(d);
  });

  it('refuses bad bodies and foreign ids with 422 field errors and creates nothing', async () => {
    const other = await makeUser(b.tenant.id, 'technician');
    const bOnly = await seedBasics(b);
    const before = await count(a.tenant.id);
    const cases: [Record<string, unknown>, string][] = [
      [{ job_type: 'repair' }, 'scheduled_at'],
      [{ scheduled_at: 'tomorrow' }, 'scheduled_at'],
      [{ scheduled_at: at(day, 8), duration_minutes: 0 }, 'duration_minutes'],
      [{ scheduled_at: at(day, 8), technician_id: other.id }, 'technician_id'],
      [{ scheduled_at: at(day, 8), customer_id: bOnly.customerId }, 'customer_id'],
      [{ scheduled_at: at(day, 8), ticket_id: bOnly.ticketId }, 'ticket_id'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors).join(','), JSON.stringify(body)).to.contain(field);
    }
    expect(await count(a.tenant.id)).to.equal(before);
  });

  it("lists by time ascending with the tenant's days, technician and status filters, never another tenant's", async () => {
    const d2 = addDays(day, 1);
    // 23:30 on `day` and 00:30 on d2 in the tenant's zone: different days whatever UTC says
    const late = (await create({ scheduled_at: at(day, 23, 30), technician_id: tech.id })).body.data.id;
    const early = (await create({ scheduled_at: at(d2, 0, 30) })).body.data.id;
    const noon = (await create({ scheduled_at: at(d2, 12) })).body.data.id;
    await app.request('POST', '/api/schedules', { token: b.adminToken, body: { scheduled_at: at(d2, 12) } });

    const list = async (q: string) => {
      const res = await app.request('GET', `/api/schedules?${q}`, { token: tech.token });
      expect(res.status, q).to.equal(200);
      return res.body;
    };
    const both = await list(`from=${day}&to=${d2}&per_page=100`);
    const ids = both.data.map((r: { id: number }) => r.id);
    expect(ids.indexOf(late)).to.be.lessThan(ids.indexOf(early));
    expect(ids.indexOf(early)).to.be.lessThan(ids.indexOf(noon));
    const times = both.data.map((r: { scheduled_at: string }) => r.scheduled_at);
    expect(times).to.deep.equal([...times].sort());
    expect(both.total).to.equal(both.data.length);
    expect((await list(`from=${d2}&to=${d2}`)).data.map((r: { id: number }) => r.id)).to.deep.equal([early, noon]);
    const mine = await list(`technician_id=${tech.id}&from=${day}&to=${d2}`);
    expect(mine.data.every((r: { technician_id: number }) => r.technician_id === tech.id)).to.equal(true);
    expect(mine.data.map((r: { id: number }) => r.id)).to.include(late);
    expect((await list('status=cancelled')).total).to.equal(0);
    const bad = await app.request('GET', '/api/schedules?from=2026-13-01', { token: tech.token });
    expect(bad.status).to.equal(422);
  });

  it('replaces the fields with PUT (omitted ones become null), refuses status there and foreign ids (404)', async () => {
    const id = (await create({ scheduled_at: at(day, 10), job_type: 'survey', notes: 'gate code 1234' })).body.data.id;
    const res = await app.request('PUT', `/api/schedules/${id}`, {
      token: a.adminToken,
      body: { scheduled_at: at(day, 11), job_type: 'repair', technician_id: tech.id },
    });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ job_type: 'repair', notes: null, technician_id: tech.id, status: 'scheduled' });
    expect(res.body.data.scheduled_at).to.equal(at(day, 11));
    const withStatus = await app.request('PUT', `/api/schedules/${id}`, {
      token: a.adminToken,
      body: { scheduled_at: at(day, 12), status: 'done' },
    });
    expect(withStatus.status).to.equal(422);
    expect(withStatus.body.errors.status[0]).to.match(/status/);
    const foreign = await app.request('PUT', `/api/schedules/${id}`, {
      token: b.adminToken,
      body: { scheduled_at: at(day, 13) },
    });
    expect(foreign.status).to.equal(404);
    expect((await app.request('GET', `/api/schedules/${id}`, { token: b.adminToken })).status).to.equal(404);
    const row = await env.knex('schedules').where({ id }).first();
    expect(row.scheduled_at.toISOString()).to.equal(at(day, 11));
    expect(row.status).to.equal('scheduled');
    const audit = await env.knex('audit_log').where({ action: 'schedules.updated', subject_id: id });
    expect(audit).to.have.length(1);
    expect(audit[0].before.job_type).to.equal('survey');
    expect(audit[0].after.job_type).to.equal('repair');
  });

  const moves: [string[], string, number, string?][] = [
    [[], 'in_progress', 200],
    [['in_progress'], 'done', 200],
    [[], 'cancelled', 200],
    [['in_progress'], 'cancelled', 200],
    [[], 'done', 422, 'scheduled'],
    [['in_progress', 'done'], 'cancelled', 422, 'done'],
    [['cancelled'], 'in_progress', 422, 'cancelled'],
    [['in_progress', 'done'], 'in_progress', 422, 'done'],
  ];
  for (const [path, target, want, stays] of moves) {
    it(`status ${['scheduled', ...path].join(' -> ')} -> ${target}: ${want === 200 ? 'allowed' : '422 INVALID_TRANSITION'}`, async () => {
      const id = (await create({ scheduled_at: at(day, 14) })).body.data.id;
      for (const s of path) {
        const r = await app.request('POST', `/api/schedules/${id}/status`, {
          token: a.adminToken,
          body: { status: s },
        });
        expect(r.status).to.equal(200);
      }
      const res = await app.request('POST', `/api/schedules/${id}/status`, {
        token: a.adminToken,
        body: { status: target },
      });
      expect(res.status).to.equal(want);
      const row = await env.knex('schedules').where({ id }).first();
      if (want === 200) {
        expect(res.body.data.status).to.equal(target);
        expect(row.status).to.equal(target);
        if (target === 'in_progress') expect(res.body.data.started_at).to.be.a('string');
        else expect(res.body.data.finished_at).to.be.a('string');
      } else {
        expect(res.body.code).to.equal('INVALID_TRANSITION');
        expect(row.status).to.equal(stays);
      }
      const changes = await env.knex('audit_log').where({ action: 'schedules.status_changed', subject_id: id });
      expect(changes).to.have.length(path.length + (want === 200 ? 1 : 0));
    });
  }

  it('refuses to edit a finished schedule (422 INVALID_TRANSITION) and a technician may read but not write', async () => {
    const id = (await create({ scheduled_at: at(day, 15) })).body.data.id;
    await app.request('POST', `/api/schedules/${id}/status`, { token: a.adminToken, body: { status: 'cancelled' } });
    const edit = await app.request('PUT', `/api/schedules/${id}`, {
      token: a.adminToken,
      body: { scheduled_at: at(day, 16) },
    });
    expect(edit.status).to.equal(422);
    expect(edit.body.code).to.equal('INVALID_TRANSITION');
    const before = await count(a.tenant.id);
    const denied = await create({ scheduled_at: at(day, 16) }, tech.token);
    expect(denied.status).to.equal(403);
    expect(denied.body.message).to.contain('schedules.manage');
    expect(await count(a.tenant.id)).to.equal(before);
  });
});
