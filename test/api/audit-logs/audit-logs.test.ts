import { expect } from 'chai';
import { recordAudit } from '../../../api/audit-logs/service.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

/** GET /api/audit-logs (DESIGN.md §10 "audit"): the first admin route built the new way. */
describe('GET /api/audit-logs', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
  });

  it("records token creation and revocation in the tenant's audit log, never the token, and lists them newest first", async () => {
    const created = await app.request('POST', '/api/integrations/api-tokens', {
      token: a.adminToken,
      body: { name: 'billing sync', access: 'read' },
    });
    expect(created.status).to.equal(201);
    const id = created.body.data.id;
    expect(
      (await app.request('DELETE', `/api/integrations/api-tokens/${id}`, { token: a.adminToken })).status,
    ).to.equal(200);
    const res = await app.request('GET', '/api/audit-logs?action=integrations.', { token: a.adminToken });
    expect(res.status).to.equal(200);
    expect(res.body.total).to.equal(2);
    expect(res.body.data.map((e: { action: string }) => e.action)).to.deep.equal([
      'integrations.token_revoked',
      'integrations.token_created',
    ]);
    const [revoked, made] = res.body.data;
    expect(made.subject).to.deep.equal({ type: 'auth_tokens', id });
    expect(made.user).to.deep.include({ id: a.admin.id, email: a.admin.email });
    expect(made.after).to.deep.equal({ name: 'billing sync', access: 'read', expires_at: null });
    expect(revoked.before).to.deep.equal({ name: 'billing sync', access: 'read' });
    expect(made.ip).to.be.a('string');
    expect(JSON.stringify(res.body)).not.to.include(created.body.token);
  });

  it("filters by user, exact action, subject and days of the tenant's zone (Asia/Jakarta), and stays in the tenant", async () => {
    const other = await makeUser(a.tenant.id, 'Administrator');
    const at = async (action: string, userId: number, iso: string, subjectId = 7) => {
      const rowId = await recordAudit(a.scope, { userId, action, subject: { type: 'invoices', id: subjectId } });
      await env.knex('audit_log').where({ id: rowId }).update({ at: iso });
    };
    // 2 days before today (UTC); Jakarta is UTC+7: 16:59:59Z is still day D there, 17:00:00Z is day D+1
    const d = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const next = new Date(Date.parse(`${d}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    await at('finance.invoice_paid', a.admin.id, `${d}T16:59:59Z`);
    await at('finance.invoice_paid', other.id, `${d}T17:00:00Z`, 8);
    await recordAudit(b.scope, { userId: b.admin.id, action: 'finance.invoice_paid' });
    const list = async (q: string) => (await app.request('GET', `/api/audit-logs?${q}`, { token: a.adminToken })).body;

    expect((await list('action=finance.invoice_paid')).total).to.equal(2);
    expect(
      (await list(`action=finance.invoice_paid&user_id=${other.id}`)).data.map((e: { subject: unknown }) => e.subject),
    ).to.deep.equal([{ type: 'invoices', id: 8 }]);
    expect((await list('subject_type=invoices&subject_id=7')).total).to.equal(1);
    expect((await list(`action=finance.invoice_paid&date_from=${d}&date_to=${d}`)).data[0].subject.id).to.equal(7);
    expect((await list(`action=finance.invoice_paid&date_from=${next}&date_to=${next}`)).data[0].subject.id).to.equal(
      8,
    );
    const page = await list('action=finance.invoice_paid&per_page=1&page=2');
    expect(page).to.deep.include({ current_page: 2, per_page: 1, total: 2, last_page: 2, from: 2, to: 2 });
  });

  it('needs settings.view (a technician gets 403 naming it), a login token (401 otherwise) and valid filters (422)', async () => {
    const tech = await makeUser(a.tenant.id, 'technician');
    const denied = await app.request('GET', '/api/audit-logs', { token: tech.token });
    expect(denied.status).to.equal(403);
    expect(denied.body.message).to.include('settings.view');
    expect((await app.request('GET', '/api/audit-logs')).status).to.equal(401);
    const bad = await app.request('GET', '/api/audit-logs?date_from=yesterday&per_page=0', { token: a.adminToken });
    expect(bad.status).to.equal(422);
    expect(Object.keys(bad.body.errors).sort()).to.deep.equal(['date_from', 'per_page']);
  });
});
