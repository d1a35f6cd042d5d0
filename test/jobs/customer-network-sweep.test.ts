import { expect } from 'chai';
import { UnrecoverableError, Worker } from 'bullmq';
import { env } from '../helpers/env.js';
import { makeTenant, type TenantFixture } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/http.js';
import { configureJobDeps } from '../../jobs/deps.js';
import * as customerNetwork from '../../jobs/customer-network.js';
import type { CustomerNetworkSweepResult } from '../../jobs/customer-network.js';
import { ManualClock } from '../../lib/clock.js';
import { fakeJob } from './fake-job.js';
import { createCustomer, customerRow, makeNas, networkQueue } from '../api/customers/support.js';

/** Polls `check` every 50 ms until it is true, failing after `ms`. */
async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Issue 8 item 2, "a sweep re-enqueues customers pending over 5 min": the sweep job of
 * customer-network on real Redis, with the job clock moved past the 5 minutes.
 */
describe('job customer-network (sweep)', () => {
  let app: TestApp;
  let t: TenantFixture;
  let nas: number;

  before(async () => {
    app = await startTestApp();
    t = await makeTenant();
    nas = await makeNas(t);
  });

  it('re-requests stale pending syncs: adds a lost job, re-runs a failed one, leaves a queued one; then waits 5 minutes', async function () {
    this.timeout(60_000);
    const queue = networkQueue(app);
    const jobOf = async (id: number) =>
      queue.getJob(customerNetwork.pushJobId(t.tenant.id, id, Number((await customerRow(id)).network_version)));
    // c2's job fails for good in a worker that gives up on everything
    const c2 = await createCustomer(app, t, { nas_id: nas });
    const worker = new Worker(
      customerNetwork.QUEUE,
      async () => {
        throw new UnrecoverableError('given up on purpose');
      },
      { connection: { url: env.redisUrl }, prefix: app.queues.prefix },
    );
    try {
      await until(async () => (await (await jobOf(c2.id))!.getState()) === 'failed');
    } finally {
      await worker.close();
    }
    const c1 = await createCustomer(app, t, { nas_id: nas });
    await (await jobOf(c1.id))!.remove(); // Redis lost it
    const c3 = await createCustomer(app, t, { nas_id: nas }); // still waiting
    const c4 = await createCustomer(app, t, { nas_id: nas }); // asked for recently (below)
    const clock = new ManualClock(Date.now() + customerNetwork.PENDING_STALE_MS + 60_000);
    await env.knex('customers').where({ id: c4.id }).update({ network_requested_at: clock.now() });
    configureJobDeps({ knex: env.knex, clock, queues: app.queues });

    const sweep = fakeJob({});
    const result = (await customerNetwork.process({
      ...sweep.job,
      name: customerNetwork.SWEEP_JOB,
    })) as CustomerNetworkSweepResult;
    expect(result.kind).to.equal('sweep');
    expect(result.tenants[String(t.tenant.id)]).to.equal(3);
    expect(result.enqueued).to.be.at.least(1);
    expect(result.retried).to.be.at.least(1);
    expect(result.queued).to.be.at.least(1);
    expect(await (await jobOf(c1.id))!.getState()).to.equal('waiting');
    expect((await jobOf(c1.id))!.data).to.deep.equal({
      tenant_id: t.tenant.id,
      customer_id: c1.id,
      version: Number((await customerRow(c1.id)).network_version),
    });
    expect(await (await jobOf(c2.id))!.getState()).to.equal('waiting');
    expect(await (await jobOf(c3.id))!.getState()).to.equal('waiting');
    for (const c of [c1, c2, c3, c4]) {
      expect((await customerRow(c.id)).network_requested_at.getTime(), `customer ${c.id}`).to.equal(
        clock.now().getTime(),
      );
    }
    expect(sweep.logs.join('\n')).to.match(new RegExp(`tenant ${t.tenant.id}: 3 stale sync\\(s\\) re-requested`));
    expect(sweep.progress.at(-1)).to.equal(100);

    const again = fakeJob({});
    const second = (await customerNetwork.process({
      ...again.job,
      name: customerNetwork.SWEEP_JOB,
    })) as CustomerNetworkSweepResult;
    expect(second.tenants[String(t.tenant.id)]).to.equal(undefined);
    clock.advance(customerNetwork.PENDING_STALE_MS + 1000);
    const later = fakeJob({});
    const third = (await customerNetwork.process({
      ...later.job,
      name: customerNetwork.SWEEP_JOB,
    })) as CustomerNetworkSweepResult;
    expect(third.tenants[String(t.tenant.id)]).to.equal(4);
  });
});
