import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { registerCleanup } from '../../helpers/env.js';
import { addDays, todayIn } from '../../../lib/clock.js';
import { createQueues } from '../../../jobs/queues.js';
import * as billingCycle from '../../../jobs/billing-cycle.js';

/** Issue 8 item 4: POST /api/invoices/billing-runs (202) and GET /api/invoices/billing-runs/{id}. */
describe('/api/invoices/billing-runs', () => {
  let app: TestApp;
  let a: TenantFixture;
  let b: TenantFixture;
  const runs = (tenantId: number) => tenantKnex(tenantId)('billing_runs').where({ tenant_id: tenantId }).orderBy('id');
  const post = (body: Record<string, unknown>, token = a.adminToken, on = app) =>
    on.request('POST', '/api/invoices/billing-runs', { token, body });

  before(async () => {
    app = await startTestApp();
    a = await makeTenant();
    b = await makeTenant({ timeZone: 'America/New_York' });
  });

  it("queues a run as of today in the tenant's zone by default: 202 {data: run}, its job carries ids only", async () => {
    const before = todayIn(b.timeZone);
    const res = await post({}, b.adminToken);
    const after = todayIn(b.timeZone);
    expect(res.status).to.equal(202);
    const run = res.body.data;
    expect([before, after]).to.include(run.as_of);
    expect(run).to.include({
      trigger: 'manual',
      status: 'queued',
      created: 0,
      existing: 0,
      skipped: 0,
      error: null,
      job_id: `billing-run-${run.id}`,
      started_at: null,
      finished_at: null,
    });
    const job = (await app.queues.get(billingCycle.QUEUE).getJob(run.job_id))!;
    expect(job.name).to.equal(billingCycle.RUN_JOB);
    expect(job.data).to.deep.equal({ run_id: run.id, tenant_id: b.tenant.id });
    const shown = await app.request('GET', `/api/invoices/billing-runs/${run.id}`, { token: b.adminToken });
    expect(shown.status).to.equal(200);
    expect(shown.body.data).to.deep.equal(run);
    const row = (await runs(b.tenant.id)).at(-1);
    expect(row).to.include({ id: run.id, requested_by: b.admin.id, status: 'queued' });
  });

  it("takes an as_of in the past; the run shows the job's progress", async () => {
    const asOf = addDays(todayIn(a.timeZone), -45);
    const res = await post({ as_of: asOf });
    expect(res.status).to.equal(202);
    expect(res.body.data.as_of).to.equal(asOf);
    await tenantKnex(a.tenant.id)('billing_runs')
      .where({ id: res.body.data.id })
      .update({ status: 'completed', created: 7 });
    const shown = await app.request('GET', `/api/invoices/billing-runs/${res.body.data.id}`, { token: a.adminToken });
    expect(shown.body.data).to.include({ status: 'completed', created: 7 });
  });

  it('refuses an as_of after today or before 2000, malformed ones and unknown fields with 422; nothing queued', async () => {
    const before = (await runs(a.tenant.id)).length;
    const cases: [Record<string, unknown>, string][] = [
      [{ as_of: addDays(todayIn(a.timeZone), 1) }, 'as_of'],
      [{ as_of: '1999-12-31' }, 'as_of'],
      [{ as_of: 'today' }, 'as_of'],
      [{ as_of: null }, 'as_of'],
      [{ dry_run: true }, 'dry_run'],
    ];
    for (const [body, field] of cases) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.code).to.equal('VALIDATION_FAILED');
      expect(res.body.errors, JSON.stringify(body)).to.have.property(field);
    }
    expect(await runs(a.tenant.id)).to.have.length(before);
  });

  it("a foreign tenant's run is 404; staff may read runs but not start one (403)", async () => {
    const theirs = (await post({}, b.adminToken)).body.data.id;
    const res = await app.request('GET', `/api/invoices/billing-runs/${theirs}`, { token: a.adminToken });
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('NOT_FOUND');
    const staff = await makeUser(a.tenant.id, 'staff');
    const before = (await runs(a.tenant.id)).length;
    const refused = await post({}, staff.token);
    expect(refused.status).to.equal(403);
    expect(refused.body.message).to.include('invoices.manage');
    expect(await runs(a.tenant.id)).to.have.length(before);
    const mine = (await runs(a.tenant.id)).at(-1);
    const read = await app.request('GET', `/api/invoices/billing-runs/${mine.id}`, { token: staff.token });
    expect(read.status).to.equal(200);
  });

  it('answers 503 QUEUE_UNAVAILABLE when Redis is down and leaves no run row behind', async () => {
    const down = await startTestApp();
    const dead = createQueues('redis://127.0.0.1:1', { prefix: `{billing-dead-${process.pid}}` });
    registerCleanup(() => dead.close());
    Object.assign(down.queues, { get: dead.get.bind(dead) });
    const before = await runs(a.tenant.id);
    const res = await post({}, a.adminToken, down);
    expect(res.status).to.equal(503);
    expect(res.body.code).to.equal('QUEUE_UNAVAILABLE');
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    expect(await runs(a.tenant.id)).to.deep.equal(before);
  });
});
