import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics } from '../../helpers/fixtures.js';
import {
  cutOverTenant,
  cutOverTenantIds,
  routedScope,
  sharedFootprint,
  sharedFootprintChanges,
  TENANT_DB_MODE,
  tenantKnex,
} from '../../helpers/tenant-db-mode.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import * as invoiceOverdue from '../../../jobs/invoice-overdue.js';
import * as ticketSla from '../../../jobs/ticket-sla.js';
import { addDays, ManualClock, todayIn } from '../../../lib/clock.js';
import { fakeJob } from '../../jobs/fake-job.js';
import { leaveTenantsShared } from '../../helpers/shared-mode.js';

/**
 * Issue 15 "Cut-over tenant: ... shared rows untouched; crons run on its database": the cut-over
 * test mode's own checks (test/helpers/tenant-db-mode.ts). bin/test.ts runs this file last in the
 * TEST_TENANT_DB=1 processes, after #2's and #6's suites; in a normal run it cuts its own tenant over.
 */
describe('the suites on a cut-over tenant (issue 15)', function () {
  leaveTenantsShared();
  this.timeout(120_000);
  let app: TestApp;

  before(async () => {
    app = await startTestApp();
  });
  after(() => configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY }));

  /** A tenant cut over to its own database (makeTenant does it in the mode; else here). */
  async function cutOver() {
    const f = await makeTenant();
    if (TENANT_DB_MODE) return f;
    await cutOverTenant(f.tenant.id, f.tenant.slug);
    return { ...f, scope: await routedScope(f.tenant.id) };
  }

  it('invoice-overdue and ticket-sla (the job functions, test clock) change the tenant database, not shared', async () => {
    const f = await cutOver();
    const clock = new ManualClock();
    const basics = await seedBasics(f, { clock });
    // the invoice fell due yesterday; the ticket has no SLA due dates yet and is 2 days old
    const k = tenantKnex(f.tenant.id);
    await k('invoices')
      .where({ id: basics.invoiceId })
      .update({ due_date: addDays(todayIn(f.timeZone, clock), -1) });
    expect(await env.knex('invoices').where({ tenant_id: f.tenant.id })).to.deep.equal([]);
    const before = await sharedFootprint(f.tenant.id);
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, queues: app.queues, clock });
    const overdue = fakeJob({ tenant_id: f.tenant.id });
    const r = await invoiceOverdue.process(overdue.job);
    expect(r.tenants).to.deep.equal({ [String(f.tenant.id)]: 1 });
    expect((await k('invoices').where({ id: basics.invoiceId }).first()).status).to.equal('overdue');
    expect(overdue.logs.join('\n')).to.contain(`tenant ${f.tenant.id}'s database`);
    const sla = fakeJob({ tenant_id: f.tenant.id });
    const s = await ticketSla.process(sla.job);
    expect(s.tenants[String(f.tenant.id)]).to.deep.equal({ due_dates_set: 1, breached: 0 });
    const t = await k('tickets').where({ id: basics.ticketId }).first();
    expect(t.response_due_at).to.be.an.instanceOf(Date);
    // two days later the high-priority ticket is past its due dates: breached, in its database
    clock.advance(2 * 24 * 3600_000);
    const late = await ticketSla.process(fakeJob({ tenant_id: f.tenant.id }).job);
    expect(late.tenants[String(f.tenant.id)]).to.deep.equal({ due_dates_set: 0, breached: 1 });
    expect((await k('tickets').where({ id: basics.ticketId }).first()).sla_breached).to.equal(true);
    expect(await sharedFootprint(f.tenant.id)).to.deep.equal(before);
    expect(await env.knex('tickets').where({ tenant_id: f.tenant.id })).to.deep.equal([]);
  });

  it('a user made after the cutover is mirrored with the shared ids of its role links', async () => {
    const f = await cutOver();
    const u = await makeUser(f.tenant.id, 'staff');
    const shared = await env.knex('user_roles').where({ user_id: u.id }).select('id', 'role_id');
    expect(shared).to.have.length(1);
    expect(await tenantKnex(f.tenant.id)('user_roles').where({ user_id: u.id }).select('id', 'role_id')).to.deep.equal(
      shared,
    );
  });

  it('shared rows untouched: no cut-over tenant’s rows in the shared moved tables changed since its cutover', async () => {
    expect(cutOverTenantIds().length).to.be.at.least(2);
    expect(await sharedFootprintChanges()).to.deep.equal([]);
  });
});
