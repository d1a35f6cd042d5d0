import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import * as customerNetwork from '../../../jobs/customer-network.js';
import {
  PPPOE_SECRET,
  breakQueues,
  createCustomer,
  customerBody,
  customerRow,
  makeNas,
  networkQueue,
} from './support.js';

/**
 * Issue 8 item 2: POST /api/customers/{id}/status (each transition allowed and refused, 202 with the
 * versioned push job) and POST /api/customers/{id}/network-sync; Redis down at enqueue -> 503 and
 * nothing changed.
 */
describe('/api/customers/{id}/status and /network-sync', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  let nas: number;
  const status = (id: number, body: Record<string, unknown>, f = a) =>
    app.request('POST', `/api/customers/${id}/status`, { token: f.adminToken, body });
  const sync = (id: number, f = a) => app.request('POST', `/api/customers/${id}/network-sync`, { token: f.adminToken });
  /** A customer of tenant a in `start` status, on the NAS. */
  const customerIn = async (start: 'active' | 'suspended' | 'terminated') => {
    const c = await createCustomer(app, a, { nas_id: nas, pppoe_password: PPPOE_SECRET });
    if (start === 'suspended') expect((await status(c.id, { status: 'suspended' })).status).to.equal(202);
    if (start === 'terminated') expect((await status(c.id, { status: 'terminated' })).status).to.equal(202);
    return c.id;
  };

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant();
    nas = await makeNas(a);
  });

  const allowed: [string, string, string | null][] = [
    ['active', 'suspended', 'manual'],
    ['suspended', 'active', null],
    ['active', 'terminated', null],
    ['suspended', 'terminated', null],
  ];
  for (const [from, to, suspendReason] of allowed) {
    it(`${from} -> ${to}: 202, the row changes at once, audited, a push job with the next version`, async () => {
      const id = await customerIn(from as 'active' | 'suspended');
      const before = await customerRow(id);
      const res = await status(id, { status: to, reason: 'Requested by phone' });
      expect(res.status, res.text).to.equal(202);
      const d = res.body.data;
      expect(d).to.include({ id, status: to, suspend_reason: suspendReason, status_reason: 'Requested by phone' });
      expect(d.network.sync_status).to.equal('pending');
      expect(d.network.version).to.be.greaterThan(Number(before.network_version));
      expect(res.body.job_id).to.equal(customerNetwork.pushJobId(a.tenant.id, id, d.network.version));
      const job = (await networkQueue(app).getJob(res.body.job_id))!;
      expect(job.data).to.deep.equal({ tenant_id: a.tenant.id, customer_id: id, version: d.network.version });
      expect(JSON.stringify(job.data)).not.to.include(PPPOE_SECRET);
      const audit = await tenantKnex(a.tenant.id)('audit_log')
        .where({ action: 'customers.status_changed', subject_id: id })
        .orderBy('id', 'desc')
        .first();
      expect(audit.before).to.include({ status: from });
      expect(audit.after).to.include({ status: to, suspend_reason: suspendReason, reason: 'Requested by phone' });
      expect(audit.user_id).to.equal(a.admin.id);
    });
  }

  const refused: [string, string][] = [
    ['active', 'active'],
    ['suspended', 'suspended'],
    ['terminated', 'active'],
    ['terminated', 'suspended'],
    ['terminated', 'terminated'],
  ];
  for (const [from, to] of refused) {
    it(`${from} -> ${to}: 422 INVALID_TRANSITION naming the state, nothing changed, no job`, async () => {
      const id = await customerIn(from as 'active' | 'suspended' | 'terminated');
      const before = await customerRow(id);
      const res = await status(id, { status: to });
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('INVALID_TRANSITION');
      expect(res.body.message).to.include(from);
      expect(res.body.errors.status).to.have.length(1);
      expect(await customerRow(id)).to.deep.equal(before);
      const next = customerNetwork.pushJobId(a.tenant.id, id, Number(before.network_version) + 1);
      expect(await networkQueue(app).getJob(next)).to.equal(undefined);
    });
  }

  it('a customer without a NAS changes status with job_id null (nothing to push); bad bodies are 422', async () => {
    const c = await createCustomer(app, a);
    const res = await status(c.id, { status: 'suspended' });
    expect(res.status).to.equal(202);
    expect(res.body.job_id).to.equal(null);
    expect(res.body.data).to.include({ status: 'suspended', suspend_reason: 'manual' });
    expect(res.body.data.network).to.include({ sync_status: 'none', version: 0 });
    for (const body of [
      {},
      { status: 'blocked' },
      { status: 'active', reason: 'x'.repeat(501) },
      { status: 'active', x: 1 },
    ]) {
      const bad = await status(c.id, body);
      expect(bad.status, JSON.stringify(body)).to.equal(422);
      expect(bad.body.code).to.equal('VALIDATION_FAILED');
    }
  });

  it("another tenant's customer is 404 on both endpoints and unchanged", async () => {
    const id = await customerIn('active');
    const before = await customerRow(id);
    expect((await status(id, { status: 'suspended' }, b)).status).to.equal(404);
    expect((await sync(id, b)).status).to.equal(404);
    expect(await customerRow(id)).to.deep.equal(before);
  });

  it('network-sync: 202 with a new version and job (an older job skips itself); 422 without a NAS', async () => {
    const id = await customerIn('active');
    const v1 = Number((await customerRow(id)).network_version);
    await tenantKnex(a.tenant.id)('customers')
      .where({ id })
      .update({ network_sync_status: 'failed', network_error: 'x' });
    const res = await sync(id);
    expect(res.status, res.text).to.equal(202);
    const v2 = res.body.data.network.version;
    expect(v2).to.be.greaterThan(v1);
    expect(res.body.data.network).to.include({ sync_status: 'pending', error: null });
    expect(res.body.job_id).to.equal(customerNetwork.pushJobId(a.tenant.id, id, v2));
    expect((await networkQueue(app).getJob(res.body.job_id))!.data).to.deep.equal({
      tenant_id: a.tenant.id,
      customer_id: id,
      version: v2,
    });
    const audit = await tenantKnex(a.tenant.id)('audit_log')
      .where({ action: 'customers.network_sync_requested', subject_id: id })
      .first();
    expect(audit.after).to.deep.equal({ job_id: res.body.job_id });
    const plain = await createCustomer(app, a);
    const none = await sync(plain.id);
    expect(none.status).to.equal(422);
    expect(none.body.errors).to.have.property('nas_id');
  });

  it('Redis down at enqueue: 503 QUEUE_UNAVAILABLE and nothing changed (status, network-sync, create, PUT)', async () => {
    const id = await customerIn('active');
    const plain = await createCustomer(app, a);
    const before = await customerRow(id);
    const plainBefore = await customerRow(plain.id);
    const audits = async () =>
      Number((await tenantKnex(a.tenant.id)('audit_log').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n);
    const count = async () =>
      Number((await tenantKnex(a.tenant.id)('customers').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n);
    const [auditsBefore, customersBefore] = [await audits(), await count()];
    const restore = breakQueues(app);
    try {
      const answers = [
        await status(id, { status: 'suspended' }),
        await sync(id),
        await app.request('POST', '/api/customers', { token: a.adminToken, body: customerBody({ nas_id: nas }) }),
        await app.request('PUT', `/api/customers/${plain.id}`, { token: a.adminToken, body: { nas_id: nas } }),
      ];
      for (const res of answers) {
        expect(res.status, res.text).to.equal(503);
        expect(res.body.code).to.equal('QUEUE_UNAVAILABLE');
        expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      }
      // what reaches no NAS still works without Redis
      const rename = await app.request('PUT', `/api/customers/${plain.id}`, {
        token: a.adminToken,
        body: { name: 'Renamed while Redis is down' },
      });
      expect(rename.status).to.equal(200);
    } finally {
      restore();
    }
    expect(await customerRow(id)).to.deep.equal(before);
    const after = await customerRow(plain.id);
    const same = {
      name: plainBefore.name,
      updated_at: plainBefore.updated_at,
      search_vector: plainBefore.search_vector,
    };
    expect({ ...after, ...same }).to.deep.equal(plainBefore);
    expect(await count()).to.equal(customersBefore);
    expect(await audits()).to.equal(auditsBefore + 1);
  });
});
