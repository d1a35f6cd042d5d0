import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant } from '../../helpers/fixtures.js';
import { ACCOUNTS, configure } from '../../api/wabot/inbound-support.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import { createQueues, safeJobId, type Queues } from '../../../jobs/queues.js';
import {
  DEVICE_JOB,
  process as statusProcess,
  QUEUE,
  REPORT_JOB,
  scheduler,
  TICK_JOB,
  TICK_MS,
  type TickResult,
} from '../../../jobs/wabot-status.js';
import { ManualClock } from '../../../lib/clock.js';
import { fakeJob } from '../fake-job.js';

/**
 * Issue 11 item 3: the `wabot-status` scheduler's tick (a fake Job, no worker): one report job per
 * tenant with an enabled wablas account every 5 minutes, a device job every third tick (15
 * minutes); demo tenants, the module off and tenants without an enabled wablas account get none.
 */
describe('wabot-status scheduler tick', function () {
  this.timeout(60_000);
  let app: TestApp;
  let queues: Queues;
  // tomorrow (UTC) from the real date: the test does not rest on a calendar date
  const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const clock = new ManualClock(`${day}T03:00:00Z`);
  const [WABLAS, FONNTE] = ACCOUNTS;
  const ids: Record<string, number> = {};

  before(async () => {
    app = await startTestApp();
    queues = createQueues(env.redisUrl, { prefix: `{status-tick-${process.pid}}` });
    configureJobDeps({ knex: env.knex, redis: env.redis, queues, clock, appKey: app.appKey });
    const tenant = async (name: string, accounts: readonly Record<string, unknown>[]) => {
      const f = await makeTenant();
      await configure(app, f, {}, accounts);
      ids[name] = f.tenant.id;
      return f;
    };
    await tenant('due', [WABLAS, FONNTE]);
    await tenant('fonnteOnly', [FONNTE]);
    await tenant('wablasOff', [{ ...WABLAS, enabled: false }, FONNTE]);
    await env
      .knex('tenants')
      .where({ id: (await tenant('demo', [WABLAS])).tenant.id })
      .update({ demo_mode: true });
    await env
      .knex('tenants')
      .where({ id: (await tenant('moduleOff', [WABLAS])).tenant.id })
      .update({ modules: JSON.stringify([]) });
  });
  after(() => queues.close());

  /** Runs one tick at `at` and answers which of our tenants got a report and a device job of its slot. */
  async function tickAt(at: string) {
    clock.set(new Date(at));
    const { job } = fakeJob({});
    const result = (await statusProcess({ ...job, name: TICK_JOB })) as TickResult;
    const slot = Math.floor(new Date(at).getTime() / TICK_MS);
    const queue = queues.get(QUEUE);
    const jobsOf = async (name: string) => {
      const out: string[] = [];
      for (const [k, id] of Object.entries(ids)) {
        const j = await queue.getJob(safeJobId(name, id, 'slot', slot));
        if (j) {
          expect(j.data).to.deep.equal(name === REPORT_JOB ? { tenant_id: id, limit: 50 } : { tenant_id: id });
          out.push(k);
        }
      }
      return out;
    };
    return { result, reports: await jobsOf(REPORT_JOB), devices: await jobsOf(DEVICE_JOB) };
  }

  it('every 5 minutes a report job per due tenant; the device job on every third tick only', async () => {
    expect(scheduler.repeat).to.deep.equal({ every: 5 * 60_000 });
    // 03:00 UTC: slot divisible by 3 (15-minute boundary)
    const first = await tickAt(`${day}T03:00:00Z`);
    expect(first.reports).to.deep.equal(['due']);
    expect(first.devices).to.deep.equal(['due']);
    expect(first.result.reports).to.be.at.least(1);
    expect(first.result.devices).to.equal(first.result.reports);
    for (const at of [`${day}T03:05:00Z`, `${day}T03:10:00Z`]) {
      const t = await tickAt(at);
      expect(t.reports, at).to.deep.equal(['due']);
      expect(t.devices, at).to.deep.equal([]);
      expect(t.result.devices, at).to.equal(0);
    }
    expect((await tickAt(`${day}T03:15:00Z`)).devices).to.deep.equal(['due']);
  });
});
