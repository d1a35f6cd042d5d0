import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, makeIntegrationToken, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { findRow, knexHolding } from '../../helpers/tenant-db-mode.js';

/** Document 1, "States and transitions": the ticket reopen rule, through PATCH /api/tickets/{id}. */
describe('PATCH /api/tickets/{id}: status changes and the reopen rule', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { token: string };
  let admin: { token: string };
  let staff: { token: string };

  const status = async (id: number) => (await findRow('tickets', { id })).status as string;
  const setStatus = async (id: number, s: string) =>
    (await knexHolding('tickets', { id }))('tickets').where({ id }).update({ status: s });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
    admin = await makeUser(a.tenant.id, 'Administrator');
    staff = await makeUser(a.tenant.id, 'staff');
  });

  for (const from of ['resolved', 'closed']) {
    for (const to of ['open', 'inprogress']) {
      it(`a technician cannot reopen a ${from} ticket to ${to}: 422 with a field error naming an admin, status unchanged`, async () => {
        const { ticketId } = await seedBasics(a);
        await setStatus(ticketId, from);
        const res = await app.request('PATCH', `/api/tickets/${ticketId}`, { token: tech.token, body: { status: to } });
        expect(res.status).to.equal(422);
        expect(res.body.code).to.equal('VALIDATION_FAILED');
        expect(res.body.errors.status[0]).to.match(/Administrator/);
        expect(await status(ticketId)).to.equal(from);
      });

      it(`an Administrator reopens a ${from} ticket to ${to}`, async () => {
        const { ticketId } = await seedBasics(a);
        await setStatus(ticketId, from);
        const res = await app.request('PATCH', `/api/tickets/${ticketId}`, {
          token: admin.token,
          body: { status: to },
        });
        expect(res.status).to.equal(200);
        expect(res.body.data.status).to.equal(to);
        expect(res.body.data.resolved_at).to.equal(null);
        expect(await status(ticketId)).to.equal(to);
      });
    }
  }

  it('a Super Admin may reopen; staff may not', async () => {
    const { ticketId } = await seedBasics(a);
    await setStatus(ticketId, 'closed');
    expect(
      (await app.request('PATCH', `/api/tickets/${ticketId}`, { token: staff.token, body: { status: 'open' } })).status,
    ).to.equal(422);
    const res = await app.request('PATCH', `/api/tickets/${ticketId}`, {
      token: a.adminToken,
      body: { status: 'open' },
    });
    expect(res.status).to.equal(200);
    expect(await status(ticketId)).to.equal('open');
  });

  it('a technician moves an open ticket forward: inprogress sets responded_at, resolved sets resolved_at', async () => {
    const { ticketId } = await seedBasics(a);
    const p = await app.request('PATCH', `/api/tickets/${ticketId}`, {
      token: tech.token,
      body: { status: 'inprogress' },
    });
    expect(p.status).to.equal(200);
    expect(p.body.data.responded_at).to.be.a('string');
    const r = await app.request('PATCH', `/api/tickets/${ticketId}`, {
      token: tech.token,
      body: { status: 'resolved' },
    });
    expect(r.status).to.equal(200);
    expect(r.body.data.status).to.equal('resolved');
    expect(r.body.data.resolved_at).to.be.a('string');
  });

  it("validates the status (422) and answers 404 for another tenant's ticket without changing it", async () => {
    const { ticketId } = await seedBasics(a);
    const bad = await app.request('PATCH', `/api/tickets/${ticketId}`, {
      token: admin.token,
      body: { status: 'done' },
    });
    expect(bad.status).to.equal(422);
    expect(bad.body.errors).to.have.property('status');
    const foreign = await seedBasics(b);
    const res = await app.request('PATCH', `/api/tickets/${foreign.ticketId}`, {
      token: admin.token,
      body: { status: 'closed' },
    });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
    expect(await status(foreign.ticketId)).to.equal('open');
  });

  it('refuses integration tokens and missing tokens (401), and demo tenants (403 demo_guard_blocked)', async () => {
    const { ticketId } = await seedBasics(a);
    const it1 = await makeIntegrationToken(a, 'read_write');
    for (const token of [it1.token, undefined]) {
      const res = await app.request('PATCH', `/api/tickets/${ticketId}`, { token, body: { status: 'closed' } });
      expect(res.status).to.equal(401);
      expect(res.body.code).to.equal('UNAUTHENTICATED');
    }
    const demo = await makeTenant({ demo: true });
    const d = await seedBasics(demo);
    const res = await app.request('PATCH', `/api/tickets/${d.ticketId}`, {
      token: demo.adminToken,
      body: { status: 'closed' },
    });
    expect(res.status).to.equal(403);
    expect(res.body.code).to.equal('demo_guard_blocked');
    expect(await status(d.ticketId)).to.equal('open');
    expect(await status(ticketId)).to.equal('open');
  });
});
