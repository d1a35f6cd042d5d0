import { expect } from 'chai';
import { Writable } from 'node:stream';
import { env } from '../helpers/env.js';
import { makeTenant } from '../helpers/fixtures.js';
import { startTestApp } from '../helpers/http.js';
import * as customerNetwork from '../../jobs/customer-network.js';
import { createLogger } from '../../lib/logger.js';
import { startWorkers, type WorkerHandle } from '../../workers/main.js';
import { registry } from '../../workers/registry.js';
import { PPPOE_SECRET, createCustomer, customerRow, makeNas, networkQueue } from '../api/customers/support.js';

/**
 * Polls `check` every 100 ms until it is true, failing after `ms` with what `state` says then. The
 * bound leaves room for a push retried after its 5 s and 10 s backoffs on a loaded machine.
 */
async function until(
  what: string,
  check: () => Promise<boolean>,
  state: () => Promise<unknown> = async () => null,
  ms = 90_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not reached in ${ms} ms; ${JSON.stringify(await state())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Issue 8 item 2, integration: the API enqueues, a real worker (startWorkers, the registry's
 * customer-network entry) on the app's unique queue prefix pushes to the fake NAS. A suspended
 * customer ends up isolated in the fake driver's table; no Redis key, job log or log line holds the
 * PPPoE password.
 */
describe('job customer-network through a real worker', () => {
  it('create on a NAS -> active session; suspend (202) -> isolated; each step logged in bull-board', async function () {
    this.timeout(300_000);
    const app = await startTestApp();
    const t = await makeTenant();
    const nas = await makeNas(t, { isolation_profile: 'isolir-pppoe' });
    const lines: string[] = [];
    const logger = createLogger(
      'info',
      new Writable({
        write(chunk, _e, cb) {
          lines.push(chunk.toString());
          cb();
        },
      }) as never, // a Writable is a pino destination; the logger's type names its own stream type
    );
    let handle: WorkerHandle | null = null;
    try {
      handle = await startWorkers({
        redisUrl: env.redisUrl,
        knex: env.knex,
        appKey: app.appKey,
        prefix: app.queues.prefix,
        logger,
        queues: ['customer-network'],
        registry: { 'customer-network': registry['customer-network'] },
      });
      const c = await createCustomer(app, t, { nas_id: nas, pppoe_password: PPPOE_SECRET });
      const session = () =>
        env.knex('network_fake_sessions').where({ nas_id: nas, username: c.data.pppoe_username }).first();
      const q = networkQueue(app);
      const diagnosis = async () => {
        const row = await customerRow(c.id);
        const jobs = await q.getJobs(['waiting', 'delayed', 'active', 'failed', 'completed']);
        return {
          row: { status: row.network_sync_status, error: row.network_error },
          jobs: await Promise.all(jobs.map(async (j) => [j.id, await j.getState(), j.attemptsMade, j.failedReason])),
        };
      };
      await until('the first push', async () => (await customerRow(c.id)).network_sync_status === 'synced', diagnosis);
      expect(await session()).to.include({ state: 'active', tenant_id: t.tenant.id });

      const res = await app.request('POST', `/api/customers/${c.id}/status`, {
        token: t.adminToken,
        body: { status: 'suspended', reason: 'Unpaid since last month' },
      });
      expect(res.status).to.equal(202);
      expect(res.body.data).to.include({ status: 'suspended', suspend_reason: 'manual' });
      await until('the isolation', async () => (await session())?.state === 'isolated');
      expect(await session()).to.include({ state: 'isolated', profile: 'isolir-pppoe' });
      await until('the synced row', async () => (await customerRow(c.id)).network_sync_status === 'synced');
      const shown = await app.request('GET', `/api/customers/${c.id}`, { token: t.adminToken });
      expect(shown.body.data.network).to.include({ sync_status: 'synced', state: 'isolated', error: null });

      const job = (await q.getJob(res.body.job_id))!;
      expect(await job.getState()).to.equal('completed');
      expect(job.returnvalue).to.include({ outcome: 'synced', state: 'isolated', customer_id: c.id });
      const { logs } = await q.getJobLogs(res.body.job_id);
      expect(logs.join('\n'))
        .to.match(/waiting for the change/)
        .and.match(/applying isolated/)
        .and.match(/synced/);
      const keys = await env.redis.keys(`${app.queues.prefix}*`);
      expect(keys.length).to.be.greaterThan(0);
      for (const k of keys) {
        const type = await env.redis.type(k);
        const dump =
          type === 'hash'
            ? JSON.stringify(await env.redis.hgetall(k))
            : type === 'list'
              ? JSON.stringify(await env.redis.lrange(k, 0, -1))
              : '';
        expect(dump, k).not.to.include(PPPOE_SECRET);
      }
      expect(await q.getJobSchedulers()).to.have.length(1);
      expect((await q.getJobSchedulers())[0].key).to.equal(customerNetwork.scheduler.id);
    } finally {
      await handle?.close();
    }
    expect(lines.join('')).to.include('job completed');
    expect(lines.join('') + app.logs.join('')).not.to.include(PPPOE_SECRET);
  });
});
