import { expect } from 'chai';
import { env } from '../helpers/env.js';
import { makeTenant, seedBasics, type TenantFixture } from '../helpers/fixtures.js';
import { configureJobDeps } from '../../jobs/deps.js';
import { process as ticketSla } from '../../jobs/ticket-sla.js';
import { ScanAborted } from '../../jobs/platform-scan.js';
import { dueDates } from '../../api/tickets/sla.js';
import { ManualClock } from '../../lib/clock.js';
import { fakeJob } from './fake-job.js';

/**
 * The job compares due dates with the job clock: a ManualClock standing at T0 (the machine's time
 * when the file loads), so how long a run takes changes nothing. The job scans every tenant; the
 * tests look only at the tenants they create.
 */
const T0 = Date.now();
const MIN = 60_000;
const OLD = new Date(T0 - 400 * 24 * 60 * MIN);
const ago = (minutes: number) => new Date(T0 - minutes * MIN);

let seq = 0;
async function ticket(f: TenantFixture, row: Record<string, unknown>): Promise<number> {
  const r = await f.scope.insert('tickets', {
    ticket_number: `SLA-${++seq}-${Date.now()}`,
    type: 'no internet',
    priority: 'medium',
    status: 'open',
    updated_at: OLD,
    ...row,
  });
  return r.id;
}

async function rows(ids: number[]) {
  const list = await env
    .knex('tickets')
    .whereIn('id', ids)
    .select('id', 'sla_breached', 'response_due_at', 'resolution_due_at', 'updated_at');
  return new Map(
    list.map((r) => [
      r.id as number,
      {
        breached: r.sla_breached as boolean,
        response: r.response_due_at as Date | null,
        resolution: r.resolution_due_at as Date | null,
        touched: new Date(r.updated_at).getTime() !== OLD.getTime(),
      },
    ]),
  );
}

describe('job ticket-sla (processor with a fake Job)', () => {
  const clock = new ManualClock(T0);
  let a: TenantFixture;
  let b: TenantFixture;
  const aSettings = { sla: { high: { response_minutes: 15, resolution_minutes: 60 } } };
  let ids: Record<string, number>;
  let created: Record<string, Date>;

  before(async () => {
    configureJobDeps({ knex: env.knex, clock });
    a = await makeTenant();
    b = await makeTenant();
    await seedBasics(a, { clock });
    await env.knex('tickets').whereIn('tenant_id', [a.tenant.id, b.tenant.id]).del();
    await env
      .knex('tenants')
      .where({ id: a.tenant.id })
      .update({ settings: JSON.stringify(aSettings) });
    created = { aNoDates: ago(120), bNoDates: ago(60) };
    ids = {
      // breached: response due passed without a response
      aNoResponse: await ticket(a, {
        priority: 'high',
        created_at: ago(90),
        response_due_at: ago(30),
        resolution_due_at: ago(-150),
      }),
      // breached: resolution due passed (responded in time)
      aResolutionLate: await ticket(a, {
        status: 'inprogress',
        created_at: ago(2000),
        responded_at: ago(1990),
        response_due_at: ago(1800),
        resolution_due_at: ago(10),
      }),
      // not breached: both due dates ahead
      aFuture: await ticket(a, { created_at: ago(5), response_due_at: ago(-235), resolution_due_at: ago(-1435) }),
      // not looked at: resolved (history)
      aResolvedPast: await ticket(a, {
        status: 'resolved',
        created_at: ago(5000),
        response_due_at: ago(4000),
        resolution_due_at: ago(3000),
        resolved_at: ago(100),
      }),
      // not breached: responded before the response due date, resolution ahead
      aRespondedInTime: await ticket(a, {
        created_at: ago(300),
        responded_at: ago(200),
        response_due_at: ago(60),
        resolution_due_at: ago(-1000),
      }),
      // already flagged: left alone
      aAlreadyBreached: await ticket(a, {
        sla_breached: true,
        created_at: ago(5000),
        response_due_at: ago(4000),
        resolution_due_at: ago(3000),
      }),
      // no due dates, tenant override high = 15 min / 60 min, opened 2 h ago -> dates set and breached
      aNoDates: await ticket(a, { priority: 'high', created_at: created.aNoDates }),
      // no due dates, default low = 8 h / 72 h, opened 1 h ago -> dates set, not breached
      bNoDates: await ticket(b, { priority: 'low', created_at: created.bNoDates }),
      // closed without due dates: history, untouched
      bClosedNoDates: await ticket(b, { status: 'closed', created_at: ago(9000), closed_at: ago(8000) }),
      // late response (after response_due_at): breached
      bLateResponse: await ticket(b, {
        status: 'inprogress',
        created_at: ago(600),
        response_due_at: ago(500),
        responded_at: ago(400),
        resolution_due_at: ago(-3000),
      }),
    };
  });

  it('sets missing due dates from the tenant SLA and flags exactly the breached active tickets, in both tenants', async () => {
    const { job, progress, logs } = fakeJob({});
    const result = await ticketSla(job);
    expect(result.as_of).to.equal(new Date(T0).toISOString());
    expect(result.tenants[String(a.tenant.id)]).to.deep.equal({ due_dates_set: 1, breached: 3 });
    expect(result.tenants[String(b.tenant.id)]).to.deep.equal({ due_dates_set: 1, breached: 1 });
    expect(result.changed).to.be.at.least(5);
    const r = await rows(Object.values(ids));
    const expectRow = (key: string, breached: boolean, touched: boolean) => {
      expect({ breached: r.get(ids[key])!.breached, touched: r.get(ids[key])!.touched }, key).to.deep.equal({
        breached,
        touched,
      });
    };
    expectRow('aNoResponse', true, true);
    expectRow('aResolutionLate', true, true);
    expectRow('aNoDates', true, true);
    expectRow('bLateResponse', true, true);
    expectRow('bNoDates', false, true);
    expectRow('aFuture', false, false);
    expectRow('aResolvedPast', false, false);
    expectRow('aRespondedInTime', false, false);
    expectRow('aAlreadyBreached', true, false);
    expectRow('bClosedNoDates', false, false);

    const wantA = dueDates(aSettings, 'high', created.aNoDates);
    expect(r.get(ids.aNoDates)!.response!.getTime()).to.equal(wantA.response_due_at.getTime());
    expect(r.get(ids.aNoDates)!.resolution!.getTime()).to.equal(wantA.resolution_due_at.getTime());
    const wantB = dueDates({}, 'low', created.bNoDates);
    expect(r.get(ids.bNoDates)!.response!.getTime()).to.equal(wantB.response_due_at.getTime());
    expect(r.get(ids.bNoDates)!.resolution!.getTime()).to.equal(wantB.resolution_due_at.getTime());
    expect(r.get(ids.bClosedNoDates)!.response).to.equal(null);

    expect(progress.at(-1)).to.equal(100);
    expect(logs).to.include(
      `tenant ${a.tenant.id} (${a.tenant.slug}): 1 ticket(s) got due dates, 3 flagged sla_breached`,
    );
    expect(logs).to.include(
      `tenant ${b.tenant.id} (${b.tenant.slug}): 1 ticket(s) got due dates, 1 flagged sla_breached`,
    );
  });

  it('changes nothing in these tenants when run again', async () => {
    const snapshot = () =>
      env
        .knex('tickets')
        .whereIn('tenant_id', [a.tenant.id, b.tenant.id])
        .select('id', 'sla_breached', 'response_due_at', 'resolution_due_at', 'updated_at')
        .orderBy('id');
    const before = await snapshot();
    const result = await ticketSla(fakeJob({}).job);
    expect(result.tenants).to.not.have.any.keys(String(a.tenant.id), String(b.tenant.id));
    expect(await snapshot()).to.deep.equal(before);
  });

  it('flags a ticket when the clock passes its due date, not a millisecond before', async () => {
    const c = await makeTenant();
    const due = new Date(T0 + 30 * MIN);
    const id = await ticket(c, {
      created_at: ago(200),
      responded_at: ago(190),
      response_due_at: ago(180),
      resolution_due_at: due,
    });
    const data = { tenant_id: c.tenant.id };
    try {
      clock.set(due);
      expect((await ticketSla(fakeJob(data).job)).tenants).to.deep.equal({});
      expect((await rows([id])).get(id)).to.include({ breached: false, touched: false });
      clock.advance(1);
      const result = await ticketSla(fakeJob(data).job);
      expect(result.as_of).to.equal(new Date(due.getTime() + 1).toISOString());
      expect(result.tenants).to.deep.equal({ [String(c.tenant.id)]: { due_dates_set: 0, breached: 1 } });
      expect((await rows([id])).get(id)).to.include({ breached: true, touched: true });
    } finally {
      clock.set(T0);
    }
  });

  it('stops before changing anything when its signal is already aborted', async () => {
    const c = await makeTenant();
    const id = await ticket(c, { created_at: ago(10), response_due_at: ago(5), resolution_due_at: ago(-100) });
    const controller = new AbortController();
    controller.abort();
    let err: unknown;
    try {
      await ticketSla(fakeJob({}).job, undefined, controller.signal);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ScanAborted);
    expect((await rows([id])).get(id)).to.include({ breached: false, touched: false });
    const result = await ticketSla(fakeJob({ tenant_id: c.tenant.id }).job);
    expect(result.tenants).to.deep.equal({ [String(c.tenant.id)]: { due_dates_set: 0, breached: 1 } });
  });
});
