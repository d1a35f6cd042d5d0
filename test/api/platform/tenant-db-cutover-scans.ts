import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { TEST_WEB_APP_KEY } from '../../helpers/http.js';
import type { TenantFixture } from '../../helpers/fixtures.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import * as invoiceOverdue from '../../../jobs/invoice-overdue.js';
import * as eventDispatch from '../../../jobs/event-dispatch.js';
import { RETENTION_DAYS } from '../../../jobs/event-dispatch/attempt.js';
import { dateIn, ManualClock } from '../../../lib/clock.js';
import { fakeJob } from '../../jobs/fake-job.js';
import type { CutOverTenant } from './tenant-db-cutover-jobs.js';

/** The cut-over tenant with the rows the cutover test seeded (seedBasics). */
export interface CutOverBasics extends CutOverTenant {
  invoiceId: () => number;
  /** A tenant that stays on the shared database. */
  other: () => TenantFixture;
}

/**
 * Issue 15 item 4's cross-tenant scans on a cut-over tenant, registered inside the cutover test after
 * the cutover (one setup): invoice-overdue and event-dispatch reach its database; the overdue cut-off
 * follows the SHARED tenants row's time zone; the shared purge spares its shared rows.
 */
export function scansOnCutOverTenant(t: CutOverBasics): void {
  const scan = (data: object = {}) => fakeJob(data);

  it('cron scans (invoice-overdue, event-dispatch) reach the cut-over tenant’s database', async () => {
    const a = t.tenant();
    await t.inTenantDb("UPDATE invoices SET due_date = current_date - 10, status = 'unpaid' WHERE id = $1", [
      t.invoiceId(),
    ]);
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY });
    const run = scan();
    const result = await invoiceOverdue.process(run.job);
    expect(result.tenants[String(a.tenant.id)]).to.equal(1);
    expect((await t.inTenantDb('SELECT status FROM invoices WHERE id = $1', [t.invoiceId()]))[0].status).to.equal(
      'overdue',
    );
    expect((await env.knex('invoices').where({ id: t.invoiceId() }).first()).status).to.equal('unpaid');
    expect(run.logs.join('\n')).to.contain(`tenant ${a.tenant.id}'s database`);
    // event-dispatch: an event the tenant's services wrote in its database is dispatched there
    const [ev] = await t.inTenantDb(
      "INSERT INTO event_outbox (tenant_id, name, payload) VALUES ($1, 'test_cutover', '{}') RETURNING id",
      [a.tenant.id],
    );
    const dispatched = await eventDispatch.process(scan().job);
    expect(dispatched.dispatched).to.be.at.least(1);
    const [row] = await t.inTenantDb('SELECT dispatched_at FROM event_outbox WHERE id = $1', [ev.id]);
    expect(row.dispatched_at).to.be.an.instanceOf(Date);
  });

  it('invoice-overdue takes the cut-over tenant’s time zone from the shared tenants row, not its database’s copy', async () => {
    const a = t.tenant();
    const id = a.tenant.id;
    const clock = new ManualClock();
    // 25 hours apart: when it is day D in Pago Pago (UTC-11) it is D+1 or D+2 in Kiritimati (UTC+14)
    const due = dateIn('Pacific/Pago_Pago', clock.now());
    const [copy] = await t.inTenantDb('SELECT timezone FROM tenants WHERE id = $1', [id]);
    const before = (await env.knex('tenants').where({ id }).first('timezone')).timezone;
    await t.inTenantDb("UPDATE invoices SET due_date = $2::date, status = 'unpaid' WHERE id = $1", [
      t.invoiceId(),
      due,
    ]);
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, clock });
    const status = async () =>
      (await t.inTenantDb('SELECT status FROM invoices WHERE id = $1', [t.invoiceId()]))[0].status;
    try {
      // due today in the shared row's zone: not overdue yet
      await env.knex('tenants').where({ id }).update({ timezone: 'Pacific/Pago_Pago' });
      const early = await invoiceOverdue.process(scan({ tenant_id: id }).job);
      expect(early.today).to.deep.equal({ 'Pacific/Pago_Pago': due });
      expect(early.tenants).to.deep.equal({});
      expect(await status()).to.equal('unpaid');
      // the shared row changes after the cutover; the tenant database's copy keeps its old zone
      await env.knex('tenants').where({ id }).update({ timezone: 'Pacific/Kiritimati' });
      const late = await invoiceOverdue.process(scan({ tenant_id: id }).job);
      expect(late.tenants).to.deep.equal({ [String(id)]: 1 });
      expect(await status()).to.equal('overdue');
      expect(await t.inTenantDb('SELECT timezone FROM tenants WHERE id = $1', [id])).to.deep.equal([copy]);
    } finally {
      await env.knex('tenants').where({ id }).update({ timezone: before });
      configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY });
    }
  });

  it('the event purge spares a cut-over tenant’s shared rows and still purges its database and other tenants', async () => {
    const a = t.tenant();
    const other = t.other();
    const old = `now() - interval '${RETENTION_DAYS + 5} days'`;
    const expired = (tenantId: number) =>
      env.knex.raw(
        `INSERT INTO event_outbox (tenant_id, name, payload, created_at, dispatched_at)
         VALUES (?, 'test_purge', '{}', ${old}, ${old}) RETURNING id`,
        [tenantId],
      );
    const kept = Number((await expired(a.tenant.id)).rows[0].id);
    const purged = Number((await expired(other.tenant.id)).rows[0].id);
    const [inTenant] = await t.inTenantDb(
      `INSERT INTO event_outbox (tenant_id, name, payload, created_at, dispatched_at)
       VALUES ($1, 'test_purge', '{}', ${old}, ${old}) RETURNING id`,
      [a.tenant.id],
    );
    try {
      configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY });
      const r = await eventDispatch.process(scan().job);
      expect(r.purged).to.be.at.least(2);
      const left = (await env.knex('event_outbox').whereIn('id', [kept, purged]).pluck('id')).map(Number);
      expect(left).to.deep.equal([kept]);
      expect(await t.inTenantDb('SELECT id FROM event_outbox WHERE id = $1', [inTenant.id])).to.deep.equal([]);
    } finally {
      await env.knex('event_outbox').where({ id: kept }).del();
    }
  });
}
