import { expect } from 'chai';
import { QueueEvents } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { env } from '../helpers/env.js';
import { makeTenant } from '../helpers/fixtures.js';
import { configureJobDeps } from '../../jobs/deps.js';
import { createQueues, type Queues } from '../../jobs/queues.js';
import * as billingCycle from '../../jobs/billing-cycle.js';
import { BillingAborted, runBilling } from '../../api/invoices/billing.js';
import { createInvoice } from '../../api/invoices/service.js';
import { requestBillingRun } from '../../api/invoices/billing-runs.js';
import { addDays, ManualClock, startOfDayIn, todayIn } from '../../lib/clock.js';
import { billingPeriod } from '../../api/invoices/billing-period.js';
import { startWorkers, type WorkerHandle } from '../../workers/main.js';
import { registry } from '../../workers/registry.js';
import { fakeJob } from './fake-job.js';
import { createLogger } from '../../lib/logger.js';
import { invoicesOf, makeCustomer, makePackage, makeRun, numberOf } from '../api/invoices/billing-world.js';

const uniq = () => randomBytes(4).toString('hex');
const runRow = (id: number) => env.knex('billing_runs').where({ id }).first();

/** A tenant with `n` active prepaid customers on the 1st (service started a year before `asOf`). */
async function tenantWith(n: number, asOf: string, extra: Partial<{ timeZone: string }> = {}) {
  const f = await makeTenant(extra);
  const pkg = await makePackage(f, 200000);
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(await makeCustomer(f, { packageId: pkg, cycle: 'prepaid', billingDay: 1, start: addDays(asOf, -365) }));
  }
  return { f, ids };
}

/** The run result of a processor call (fails the test for a sweep result). */
function runResult(r: billingCycle.BillingSweepResult | billingCycle.BillingRunResult) {
  if (r.kind !== 'run') throw new Error(`expected a run result, got ${r.kind}`);
  return r;
}

/** Issue 8 item 4: job billing-cycle, the processor with a fake Job, the sweep on real Redis, a real worker. */
describe('job billing-cycle', () => {
  const clock = new ManualClock();
  const today = () => todayIn('Asia/Jakarta', clock);
  beforeEach(() => configureJobDeps({ knex: env.knex, clock }));

  it('a requested run bills the tenant, records counts, progress, log lines and an audit entry; a second delivery does nothing', async () => {
    const asOf = today();
    const { f, ids } = await tenantWith(3, asOf);
    const runId = await makeRun(f, asOf);
    const { job, progress, logs } = fakeJob({ run_id: runId, tenant_id: f.tenant.id });
    const result = runResult(await billingCycle.process(job));
    expect(result).to.deep.include({
      outcome: 'billed',
      run_id: runId,
      as_of: asOf,
      created: 3,
      existing: 0,
      skipped: 0,
    });
    const run = await runRow(runId);
    expect(run).to.include({ status: 'completed', created: 3, existing: 0, skipped: 0, error: null });
    expect(run.finished_at.getTime()).to.equal(clock.now().getTime());
    expect(progress.at(-1)).to.equal(100);
    expect(logs[0]).to.equal(
      `tenant ${f.tenant.id} (${f.tenant.slug}): billing as of ${asOf} (manual run ${runId}), 3 active or suspended customer(s)`,
    );
    expect(logs.at(-1)).to.equal(
      `tenant ${f.tenant.id} (${f.tenant.slug}): 3 invoice(s) created, 0 already there, 0 customer(s) not billable`,
    );
    const rows = await invoicesOf(f);
    expect(rows.map((r) => r.customer_id)).to.deep.equal(ids);
    expect(rows.every((r) => r.billing_run_id === runId && r.created_at.getTime() === clock.now().getTime())).to.equal(
      true,
    );
    const audit = await env.knex('audit_log').where({ tenant_id: f.tenant.id, action: 'invoices.billing_run' });
    expect(audit).to.have.length(1);
    expect(audit[0].after).to.include({ as_of: asOf, created: 3, existing: 0, skipped: 0 });

    const again = runResult(await billingCycle.process(fakeJob({ run_id: runId, tenant_id: f.tenant.id }).job));
    expect(again).to.deep.include({ outcome: 'done', created: 3 });
    const second = await makeRun(f, asOf);
    const rerun = runResult(await billingCycle.process(fakeJob({ run_id: second, tenant_id: f.tenant.id }).job));
    expect(rerun).to.deep.include({ outcome: 'billed', created: 0, existing: 3 });
    expect(await invoicesOf(f)).to.have.length(3);
    // a run of another tenant named with this tenant's id finds nothing
    const other = await makeTenant();
    const gone = runResult(await billingCycle.process(fakeJob({ run_id: runId, tenant_id: other.tenant.id }).job));
    expect(gone.outcome).to.equal('gone');
  });

  it('a stopped run is marked failed and its retry completes: invoices of the first attempt count as created', async () => {
    const asOf = today();
    const { f } = await tenantWith(5, asOf);
    const runId = await makeRun(f, asOf);
    const ac = new AbortController();
    const opts = { tenantId: f.tenant.id, asOf, runId, now: clock.now(), batchSize: 2 };
    let err: unknown;
    try {
      await runBilling(env.knex, { ...opts, signal: ac.signal, onBatch: () => ac.abort() });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(BillingAborted);
    expect(await invoicesOf(f)).to.have.length(2);
    expect(await runBilling(env.knex, opts)).to.deep.equal({ created: 5, existing: 0, skipped: 0, considered: 5 });

    // through the processor: an aborted signal fails the attempt and marks the run
    const next = await makeRun(f, addDays(asOf, 40));
    let thrown: unknown;
    try {
      await billingCycle.process(fakeJob({ run_id: next, tenant_id: f.tenant.id }).job, undefined, AbortSignal.abort());
    } catch (e) {
      thrown = e;
    }
    expect(thrown).to.be.instanceOf(BillingAborted);
    expect(await runRow(next)).to.include({
      status: 'failed',
      error: 'Stopped by a worker shutdown; the job runs it again.',
    });
    const retried = runResult(await billingCycle.process(fakeJob({ run_id: next, tenant_id: f.tenant.id }).job));
    expect(retried).to.deep.include({ outcome: 'billed', created: 5 });
    expect(await runRow(next)).to.include({ status: 'completed', error: null, created: 5 });
  });

  it('two concurrent runs and manual invoices: one invoice per customer, numbers 1..N without gap or duplicate', async () => {
    const asOf = today();
    const { f, ids } = await tenantWith(40, asOf);
    const runs = [await makeRun(f, asOf), await makeRun(f, asOf)];
    const tenant = { timezone: f.timeZone, settings: {} };
    const results = await Promise.all([
      ...runs.map((runId) =>
        runBilling(env.knex, { tenantId: f.tenant.id, asOf, runId, now: clock.now(), batchSize: 3 }),
      ),
      ...Array.from({ length: 8 }, (_, i) =>
        createInvoice(f.scope, { userId: null }, tenant, {
          customer_id: ids[i],
          amount: '50000',
          description: `Router replacement ${i}`,
        }),
      ),
    ]);
    const [a, b] = results as { created: number; existing: number }[];
    expect(a.created + b.created).to.equal(40);
    expect(a.existing + b.existing).to.equal(40);
    const rows = await invoicesOf(f);
    expect(rows).to.have.length(48);
    const numbers = rows.map((r) => numberOf(r.invoice_number)).sort((x, y) => x - y);
    expect(numbers).to.deep.equal(Array.from({ length: 48 }, (_, i) => i + 1));
    const subs = rows.filter((r) => r.type === 'subscription');
    expect(subs.map((r) => r.customer_id).sort((x, y) => x - y)).to.deep.equal([...ids].sort((x, y) => x - y));
    expect(new Set(subs.map((r) => r.period_start)).size).to.equal(1);
    const counter = await env.knex('tenant_counters').where({ tenant_id: f.tenant.id, name: 'invoice' }).first();
    expect(Number(counter.value)).to.equal(48);
  });

  describe('the sweep and the scheduled run (real Redis)', () => {
    let queues: Queues;
    before(() => {
      queues = createQueues(env.redisUrl, { prefix: `{billing-${process.pid}-${uniq()}}` });
    });
    after(() => queues.close());

    it("at 00:30 in Jakarta (17:30 UTC the day before) enqueues the tenant's local day; the run bills that day; reruns add nothing", async () => {
      const D = addDays(todayIn('UTC', clock), 3);
      const at = new Date(startOfDayIn('Asia/Jakarta', D).getTime() + 30 * 60_000);
      expect(at.toISOString()).to.equal(`${addDays(D, -1)}T17:30:00.000Z`);
      clock.set(at);
      const { f } = await tenantWith(2, D);
      const ny = await makeTenant({ timeZone: 'America/New_York' });
      configureJobDeps({ knex: env.knex, clock, queues });
      const sweep = await billingCycle.process(fakeJob({}).job);
      expect(sweep.kind).to.equal('sweep');
      const q = queues.get(billingCycle.QUEUE);
      const id = billingCycle.tenantJobId(f.tenant.id, D);
      expect(id).to.equal(`billing-cycle-t${f.tenant.id}-${D.replaceAll('-', '')}`);
      const job = (await q.getJob(id))!;
      expect(job.name).to.equal(billingCycle.TENANT_JOB);
      expect(job.data).to.deep.equal({ tenant_id: f.tenant.id, as_of: D });
      // New York is still on the day before
      const nyJob = (await q.getJob(billingCycle.tenantJobId(ny.tenant.id, addDays(D, -1))))!;
      expect(nyJob.data).to.deep.equal({ tenant_id: ny.tenant.id, as_of: addDays(D, -1) });
      const waiting = await q.getWaitingCount();
      clock.advance(3600_000); // the next hourly sweep, same local day: the same ids
      await billingCycle.process(fakeJob({}).job);
      expect(await q.getWaitingCount()).to.equal(waiting);

      const result = runResult(await billingCycle.process(fakeJob(job.data).job));
      expect(result).to.deep.include({ outcome: 'billed', as_of: D, created: 2 });
      const run = await env.knex('billing_runs').where({ tenant_id: f.tenant.id, job_id: id }).first();
      expect(run).to.include({ trigger: 'schedule', status: 'completed', as_of: D, created: 2, requested_by: null });
      const want = billingPeriod('prepaid', 1, addDays(D, -365), D, 7)!;
      expect((await invoicesOf(f)).map((r) => [r.period_start, r.period_end, r.due_date])).to.deep.equal([
        [want.period_start, want.period_end, want.due_date],
        [want.period_start, want.period_end, want.due_date],
      ]);
      const again = runResult(await billingCycle.process(fakeJob(job.data).job));
      expect(again.outcome).to.equal('done');
      expect(await env.knex('billing_runs').where({ tenant_id: f.tenant.id })).to.have.length(1);
    });
  });

  it('runs a requested run through a real worker: the job completes, the run row and the job log show it', async function () {
    this.timeout(60_000);
    const prefix = `{billing-w-${process.pid}-${uniq()}}`;
    const asOf = today();
    const { f } = await tenantWith(4, asOf);
    const events = new QueueEvents(billingCycle.QUEUE, { connection: { url: env.redisUrl }, prefix });
    const queues = createQueues(env.redisUrl, { prefix });
    let handle: WorkerHandle | null = null;
    try {
      await events.waitUntilReady();
      handle = await startWorkers({
        redisUrl: env.redisUrl,
        knex: env.knex,
        clock,
        prefix,
        logger: createLogger('silent'),
        queues: ['billing-cycle'],
        registry: { 'billing-cycle': registry['billing-cycle'] },
      });
      const run = await requestBillingRun(
        f.scope,
        queues.get(billingCycle.QUEUE),
        { userId: f.admin.id },
        { timezone: f.timeZone },
        undefined,
        clock,
      );
      expect(run).to.include({ status: 'queued', as_of: asOf, job_id: `billing-run-${run.id}` });
      const done = new Promise<unknown>((resolve, reject) => {
        events.on('completed', ({ jobId, returnvalue }) => {
          if (jobId === run.job_id) resolve(typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue);
        });
        events.on('failed', ({ jobId, failedReason }) => {
          if (jobId === run.job_id) reject(new Error(failedReason));
        });
      });
      const q = queues.get(billingCycle.QUEUE);
      const state = await q.getJobState(run.job_id!);
      const result = state === 'completed' ? (await q.getJob(run.job_id!))!.returnvalue : await done;
      expect(result).to.deep.include({ kind: 'run', outcome: 'billed', created: 4, existing: 0 });
      expect(await runRow(run.id)).to.include({ status: 'completed', created: 4, requested_by: f.admin.id });
      const { logs } = await q.getJobLogs(run.job_id!);
      expect(logs.at(-1)).to.include(`tenant ${f.tenant.id} (${f.tenant.slug}): 4 invoice(s) created`);
      const job = (await q.getJob(run.job_id!))!;
      expect(job.data).to.deep.equal({ run_id: run.id, tenant_id: f.tenant.id });
      expect(job.progress).to.equal(100);
    } finally {
      await handle?.close();
      await Promise.all([events.close(), queues.close()]);
    }
  });
});
