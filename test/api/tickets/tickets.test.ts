import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { MODULES } from '../../../api/tenants/catalog.js';
import { mirrorUser } from '../../../db/tenant-mirror.js';
import { resolutionRequirements } from '../../../api/tickets/work-record.js';

const HOUR = 3_600_000;

/** Issue 8 item 6: /api/tickets CRUD, the work record, resolution_requirements, audit, tenant confinement. */
describe('/api/tickets: CRUD and the work record', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let tech: { id: number; token: string };
  let staff: { id: number; token: string };
  let basics: Awaited<ReturnType<typeof seedBasics>>;
  let bBasics: Awaited<ReturnType<typeof seedBasics>>;

  const count = async (table: string, tenantId = a.tenant.id) =>
    Number((await tenantKnex(tenantId)(table).where({ tenant_id: tenantId }).count('* as n'))[0].n);
  const create = (body: Record<string, unknown>, token = a.adminToken) =>
    app.request('POST', '/api/tickets', { token, body });
  const audits = (action: string, id: number) =>
    tenantKnex(a.tenant.id)('audit_log').where({
      tenant_id: a.tenant.id,
      action,
      subject_type: 'tickets',
      subject_id: id,
    });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    tech = await makeUser(a.tenant.id, 'technician');
    staff = await makeUser(a.tenant.id, 'staff');
    basics = await seedBasics(a);
    bBasics = await seedBasics(b);
  });

  it('creates a ticket: 201, source admin, number, SLA due dates, assignee, empty work record, audited', async () => {
    const before = Date.now();
    const res = await create(
      {
        type: 'no internet',
        customer_id: basics.customerId,
        onu_id: basics.onuId,
        priority: 'high',
        description: 'Red LOS light since the storm.\nCustomer home after 17:00.',
        location_text: 'Jl. Test 1, back gate',
        contact_name: 'Ibu Sari',
        contact_phone: '+6281200000001',
        external_id: 'CRM-77',
        assigned_to: tech.id,
      },
      staff.token,
    );
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(d).to.deep.include({
      source: 'admin',
      type: 'no internet',
      priority: 'high',
      status: 'open',
      external_id: 'CRM-77',
      assigned_to: tech.id,
      customer_id: basics.customerId,
      contact_name: 'Ibu Sari',
      sla_breached: false,
      responded_at: null,
      comments: [],
      attachments: [],
      check_ins: [],
      resolution_requirements: { processed: false, documented: false, met: false },
    });
    expect(d.ticket_number).to.match(/^TCK-\d{6}$/);
    expect(d.assignee).to.deep.include({ id: tech.id });
    expect(d.customer).to.deep.include({ id: basics.customerId });
    expect(d.onu).to.deep.include({ id: basics.onuId });
    const created = Date.parse(d.created_at);
    expect(created).to.be.within(before - 5000, Date.now() + 5000);
    // high priority: response 1 h, resolution 4 h after creation (DESIGN.md §6)
    expect(Date.parse(d.response_due_at) - created).to.equal(HOUR);
    expect(Date.parse(d.resolution_due_at) - created).to.equal(4 * HOUR);
    const audit = await audits('tickets.created', d.id);
    expect(audit).to.have.length(1);
    expect(audit[0].user_id).to.equal(staff.id);
    expect(audit[0].after).to.deep.include({ source: 'admin', priority: 'high', assigned_to: tech.id });

    const shown = await app.request('GET', `/api/tickets/${d.id}`, { token: tech.token });
    expect(shown.status).to.equal(200);
    expect(shown.body.data).to.deep.equal(d);
    const minimal = await create({ type: 'slow speed' });
    expect(minimal.status).to.equal(201);
    expect(minimal.body.data).to.include({ priority: 'medium', status: 'open', assigned_to: null, customer_id: null });
  });

  it("refuses bad bodies and another tenant's ids with 422 field errors and creates nothing", async () => {
    const other = await makeUser(b.tenant.id, 'technician');
    const gone = await makeUser(a.tenant.id, 'technician');
    await env.knex('users').where({ id: gone.id }).update({ is_active: false });
    // as the user routes do after a user write: a cut-over tenant's database keeps a copy
    await mirrorUser(env.knex, a.tenant.id, gone.id, TEST_WEB_APP_KEY);
    const before = { tickets: await count('tickets'), audit: await count('audit_log') };
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'type'],
      [{ type: '' }, 'type'],
      [{ type: 'a\nb' }, 'type'],
      [{ type: 'x', priority: 'urgent' }, 'priority'],
      [{ type: 'x', status: 'resolved' }, 'status'],
      [{ type: 'x', customer_id: bBasics.customerId }, 'customer_id'],
      [{ type: 'x', onu_id: bBasics.onuId }, 'onu_id'],
      [{ type: 'x', assigned_to: other.id }, 'assigned_to'],
      [{ type: 'x', assigned_to: 2147483000 }, 'assigned_to'],
      [{ type: 'x', assigned_to: gone.id }, 'assigned_to'],
      [{ type: 'x', source: 'external' }, 'source'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(Object.keys(res.body.errors), JSON.stringify(body)).to.include(field);
    }
    expect({ tickets: await count('tickets'), audit: await count('audit_log') }).to.deep.equal(before);
  });

  it("lists newest first with per_page 20 and the filters, never another tenant's tickets", async () => {
    const c2 = await seedBasics(a);
    const mk = async (body: Record<string, unknown>) => (await create(body)).body.data.id as number;
    const t1 = await mk({ type: 'Fiber cut ZX-filter', priority: 'low', customer_id: c2.customerId });
    const t2 = await mk({ type: 'ONU reboot ZX-filter', priority: 'high', assigned_to: tech.id });
    const t3 = await mk({ type: 'billing question ZX-filter', contact_name: 'Pak Joko', priority: 'high' });
    await app.request('PATCH', `/api/tickets/${t3}`, { token: a.adminToken, body: { status: 'inprogress' } });
    await app.request('POST', '/api/tickets', { token: b.adminToken, body: { type: 'ZX-filter of b' } });

    const list = async (q: string) => {
      const res = await app.request('GET', `/api/tickets?${q}`, { token: staff.token });
      expect(res.status, q).to.equal(200);
      return res.body;
    };
    const ids = (body: { data: { id: number }[] }) => body.data.map((r) => r.id);
    const all = await list('search=zx-FILTER');
    expect(ids(all)).to.deep.equal([t3, t2, t1]);
    expect(all).to.include({ total: 3, per_page: 20, current_page: 1 });
    expect((await list('')).per_page).to.equal(20);
    expect(ids(await list('search=zx-filter&priority=high'))).to.deep.equal([t3, t2]);
    expect(ids(await list('search=zx-filter&status=inprogress'))).to.deep.equal([t3]);
    expect(ids(await list(`customer_id=${c2.customerId}`))).to.deep.equal([c2.ticketId, t1].sort((x, y) => y - x));
    expect(ids(await list(`search=zx-filter&assigned_to=${tech.id}`))).to.deep.equal([t2]);
    expect(ids(await list('search=Pak%20Joko'))).to.deep.equal([t3]);
    expect(ids(await list('search=zx-filter&per_page=2&page=2'))).to.deep.equal([t1]);
    expect((await list('search=of%20b')).total).to.equal(0);
    for (const q of ['status=done', 'priority=urgent', 'assigned_to=abc', 'per_page=101']) {
      const bad = await app.request('GET', `/api/tickets?${q}`, { token: staff.token });
      expect(bad.status, q).to.equal(422);
    }
  });

  it('replaces the fields with PUT: omitted ones become null, priority moves the due dates, audited', async () => {
    const d = (await create({ type: 'no internet', priority: 'low', contact_name: 'Ani', description: 'x' })).body.data;
    const res = await app.request('PUT', `/api/tickets/${d.id}`, {
      token: tech.token,
      body: { type: 'ONU replaced', priority: 'high', customer_id: basics.customerId, location_text: 'pole 12' },
    });
    expect(res.status).to.equal(200);
    const u = res.body.data;
    expect(u).to.deep.include({
      type: 'ONU replaced',
      priority: 'high',
      customer_id: basics.customerId,
      location_text: 'pole 12',
      contact_name: null,
      description: null,
      status: 'open',
      ticket_number: d.ticket_number,
      source: 'admin',
    });
    expect(u.created_at).to.equal(d.created_at);
    expect(Date.parse(u.resolution_due_at) - Date.parse(d.created_at)).to.equal(4 * HOUR);
    expect(u.resolution_due_at).not.to.equal(d.resolution_due_at);
    const audit = await audits('tickets.updated', d.id);
    expect(audit).to.have.length(1);
    expect(audit[0].before).to.include({ type: 'no internet', priority: 'low' });
    expect(audit[0].after).to.include({ type: 'ONU replaced', priority: 'high' });
    // same priority: due dates stay
    const again = await app.request('PUT', `/api/tickets/${d.id}`, {
      token: tech.token,
      body: { type: 'ONU replaced', priority: 'high' },
    });
    expect(again.body.data.resolution_due_at).to.equal(u.resolution_due_at);
  });

  it('PUT refuses status (422 naming PATCH) and foreign ids (422); a foreign path id is 404, unchanged', async () => {
    const d = (await create({ type: 'wifi weak' })).body.data;
    const withStatus = await app.request('PUT', `/api/tickets/${d.id}`, {
      token: a.adminToken,
      body: { type: 'wifi weak', status: 'closed' },
    });
    expect(withStatus.status).to.equal(422);
    expect(withStatus.body.code).to.equal('VALIDATION_FAILED');
    expect(withStatus.body.errors.status[0]).to.include('PATCH /api/tickets/{id}');
    for (const [field, value] of [
      ['customer_id', bBasics.customerId],
      ['onu_id', bBasics.onuId],
    ] as const) {
      const res = await app.request('PUT', `/api/tickets/${d.id}`, {
        token: a.adminToken,
        body: { type: 'changed', [field]: value },
      });
      expect(res.status, field).to.equal(422);
      expect(res.body.errors, field).to.have.property(field);
    }
    const foreign = await app.request('PUT', `/api/tickets/${d.id}`, { token: b.adminToken, body: { type: 'hijack' } });
    expect(foreign.status).to.equal(404);
    expect((await app.request('GET', `/api/tickets/${d.id}`, { token: b.adminToken })).status).to.equal(404);
    const row = await tenantKnex(a.tenant.id)('tickets').where({ id: d.id }).first();
    expect(row).to.include({ type: 'wifi weak', status: 'open' });
    expect(await audits('tickets.updated', d.id)).to.have.length(0);
  });

  it('changing assigned_to in PUT needs tickets.assign (403 naming it); keeping it does not', async () => {
    const d = (await create({ type: 'relocation', assigned_to: tech.id })).body.data;
    const keep = await app.request('PUT', `/api/tickets/${d.id}`, {
      token: tech.token,
      body: { type: 'relocation, 2nd floor', assigned_to: tech.id },
    });
    expect(keep.status).to.equal(200);
    const change = await app.request('PUT', `/api/tickets/${d.id}`, {
      token: tech.token,
      body: { type: 'relocation', assigned_to: staff.id },
    });
    expect(change.status).to.equal(403);
    expect(change.body.code).to.equal('FORBIDDEN');
    expect(change.body.message).to.include('tickets.assign');
    const drop = await app.request('PUT', `/api/tickets/${d.id}`, { token: tech.token, body: { type: 'relocation' } });
    expect(drop.status).to.equal(403);
    const byAdmin = await app.request('PUT', `/api/tickets/${d.id}`, {
      token: a.adminToken,
      body: { type: 'relocation', assigned_to: staff.id },
    });
    expect(byAdmin.status).to.equal(200);
    expect(byAdmin.body.data.assignee).to.deep.include({ id: staff.id });
  });

  it('appends comments and notes (201, oldest first in the detail), validates them, audits them', async () => {
    const d = (await create({ type: 'noise on line' })).body.data;
    const c1 = await app.request('POST', `/api/tickets/${d.id}/comments`, {
      token: tech.token,
      body: { body: '  Called the customer, visit tomorrow.  ' },
    });
    expect(c1.status).to.equal(201);
    expect(c1.body.data).to.deep.include({ kind: 'comment', body: 'Called the customer, visit tomorrow.' });
    expect(c1.body.data.user).to.deep.include({ id: tech.id });
    const c2 = await app.request('POST', `/api/tickets/${d.id}/comments`, {
      token: staff.token,
      body: { body: 'Customer is a reseller, handle with care.', kind: 'note' },
    });
    expect(c2.status).to.equal(201);
    expect(c2.body.data.kind).to.equal('note');
    const before = await count('ticket_comments');
    for (const [body, field] of [
      [{}, 'body'],
      [{ body: '   \n ' }, 'body'],
      [{ body: 'x', kind: 'reply' }, 'kind'],
      [{ body: 'x'.repeat(5001) }, 'body'],
      [{ body: 'x', user_id: 1 }, 'user_id'],
    ] as const) {
      const res = await app.request('POST', `/api/tickets/${d.id}/comments`, { token: tech.token, body });
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.errors, JSON.stringify(body)).to.have.property(field);
    }
    const foreign = await app.request('POST', `/api/tickets/${bBasics.ticketId}/comments`, {
      token: a.adminToken,
      body: { body: 'hello' },
    });
    expect(foreign.status).to.equal(404);
    expect(await count('ticket_comments')).to.equal(before);
    expect(await count('ticket_comments', b.tenant.id)).to.equal(0);
    const detail = (await app.request('GET', `/api/tickets/${d.id}`, { token: a.adminToken })).body.data;
    expect(detail.comments.map((c: { id: number }) => c.id)).to.deep.equal([c1.body.data.id, c2.body.data.id]);
    const audit = await audits('tickets.comment_added', d.id);
    expect(audit.map((r) => r.after)).to.deep.equal([
      { comment_id: c1.body.data.id, kind: 'comment' },
      { comment_id: c2.body.data.id, kind: 'note' },
    ]);
  });

  it('records check-ins (degrees, metres), validates the position, audits them', async () => {
    const d = (await create({ type: 'cable cut' })).body.data;
    const res = await app.request('POST', `/api/tickets/${d.id}/check-ins`, {
      token: tech.token,
      body: { latitude: -6.2001, longitude: 106.8167, accuracy: 12.5, note: 'At the ODP box' },
    });
    expect(res.status).to.equal(201);
    expect(res.body.data).to.deep.include({
      latitude: -6.2001,
      longitude: 106.8167,
      accuracy: 12.5,
      note: 'At the ODP box',
    });
    expect(res.body.data.user).to.deep.include({ id: tech.id });
    const before = await count('ticket_check_ins');
    for (const [body, field] of [
      [{ latitude: 91, longitude: 0, accuracy: 5 }, 'latitude'],
      [{ latitude: 0, longitude: -181, accuracy: 5 }, 'longitude'],
      [{ latitude: 0, longitude: 0, accuracy: -1 }, 'accuracy'],
      [{ latitude: 0, longitude: 0 }, 'accuracy'],
      [{ latitude: '1', longitude: 0, accuracy: 5 }, 'latitude'],
    ] as const) {
      const r = await app.request('POST', `/api/tickets/${d.id}/check-ins`, { token: tech.token, body });
      expect(r.status, JSON.stringify(body)).to.equal(422);
      expect(r.body.errors, JSON.stringify(body)).to.have.property(field);
    }
    const foreign = await app.request('POST', `/api/tickets/${bBasics.ticketId}/check-ins`, {
      token: tech.token,
      body: { latitude: 0, longitude: 0, accuracy: 5 },
    });
    expect(foreign.status).to.equal(404);
    expect(await count('ticket_check_ins')).to.equal(before);
    const audit = await audits('tickets.checked_in', d.id);
    expect(audit.map((r) => r.after)).to.deep.equal([{ check_in_id: res.body.data.id, accuracy: 12.5 }]);
    const detail = (await app.request('GET', `/api/tickets/${d.id}`, { token: a.adminToken })).body.data;
    expect(detail.check_ins).to.deep.equal([res.body.data]);
  });

  it('resolution_requirements: processed = responded_at set, documented = any entry, met = both', async () => {
    const req = async (id: number) =>
      (await app.request('GET', `/api/tickets/${id}`, { token: a.adminToken })).body.data.resolution_requirements;
    const documentedFirst = (await create({ type: 'no internet' })).body.data.id;
    expect(await req(documentedFirst)).to.deep.equal({ processed: false, documented: false, met: false });
    await app.request('POST', `/api/tickets/${documentedFirst}/check-ins`, {
      token: tech.token,
      body: { latitude: -6.2, longitude: 106.8, accuracy: 8 },
    });
    expect(await req(documentedFirst)).to.deep.equal({ processed: false, documented: true, met: false });
    await app.request('PATCH', `/api/tickets/${documentedFirst}`, {
      token: tech.token,
      body: { status: 'inprogress' },
    });
    expect(await req(documentedFirst)).to.deep.equal({ processed: true, documented: true, met: true });

    const processedFirst = (await create({ type: 'slow' })).body.data.id;
    await app.request('PATCH', `/api/tickets/${processedFirst}`, { token: tech.token, body: { status: 'inprogress' } });
    expect(await req(processedFirst)).to.deep.equal({ processed: true, documented: false, met: false });
    await app.request('POST', `/api/tickets/${processedFirst}/comments`, {
      token: tech.token,
      body: { body: 'Replaced the patch cord.', kind: 'note' },
    });
    expect(await req(processedFirst)).to.deep.equal({ processed: true, documented: true, met: true });
    expect(resolutionRequirements(null, 3)).to.deep.equal({ processed: false, documented: true, met: false });
  });

  it('PATCH keeps its answer (the read shape without the work record) and its reopen rule', async () => {
    const id = (await create({ type: 'no internet' })).body.data.id;
    const res = await app.request('PATCH', `/api/tickets/${id}`, { token: tech.token, body: { status: 'resolved' } });
    expect(res.status).to.equal(200);
    expect(res.body.data.status).to.equal('resolved');
    expect(res.body.data).not.to.have.property('comments');
    const reopen = await app.request('PATCH', `/api/tickets/${id}`, { token: tech.token, body: { status: 'open' } });
    expect(reopen.status).to.equal(422);
  });

  it('module_disabled (403) on every ticket route when the tenant switches tickets off; nothing written', async () => {
    const t = await makeTenant();
    const { ticketId } = await seedBasics(t);
    await env
      .knex('tenants')
      .where({ id: t.tenant.id })
      .update({ modules: JSON.stringify(MODULES.filter((m) => m !== 'tickets')) });
    const before = {
      tickets: await count('tickets', t.tenant.id),
      comments: await count('ticket_comments', t.tenant.id),
    };
    for (const [method, path, body] of [
      ['GET', '/api/tickets', undefined],
      ['POST', '/api/tickets', { type: 'x' }],
      ['GET', `/api/tickets/${ticketId}`, undefined],
      ['PUT', `/api/tickets/${ticketId}`, { type: 'x' }],
      ['POST', `/api/tickets/${ticketId}/comments`, { body: 'x' }],
      ['POST', `/api/tickets/${ticketId}/check-ins`, { latitude: 0, longitude: 0, accuracy: 1 }],
      ['POST', `/api/tickets/${ticketId}/attachments`, undefined],
    ] as const) {
      const res = await app.request(method, path, { token: t.adminToken, body });
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body).to.deep.equal({
        message: 'The tickets module is disabled for this tenant.',
        code: 'module_disabled',
      });
    }
    expect({
      tickets: await count('tickets', t.tenant.id),
      comments: await count('ticket_comments', t.tenant.id),
    }).to.deep.equal(before);
  });

  it('a demo tenant may create and document tickets but not upload files (403 demo_guard_blocked)', async () => {
    const demo = await makeTenant({ demo: true });
    const created = await app.request('POST', '/api/tickets', { token: demo.adminToken, body: { type: 'demo' } });
    expect(created.status).to.equal(201);
    const id = created.body.data.id;
    const note = await app.request('POST', `/api/tickets/${id}/comments`, {
      token: demo.adminToken,
      body: { body: 'Trying the demo.' },
    });
    expect(note.status).to.equal(201);
    const form = new FormData();
    form.append('file', new Blob([Buffer.from('%PDF-1.4\n%%EOF\n')]), 'a.pdf');
    const up = await fetch(`${app.url}/api/tickets/${id}/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.adminToken}` },
      body: form,
    });
    expect(up.status).to.equal(403);
    expect((await up.json()).code).to.equal('demo_guard_blocked');
    expect(await count('ticket_attachments', demo.tenant.id)).to.equal(0);
  });
});
