import { expect } from 'chai';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';
import { addOrUnavailable, createQueues, QueueUnavailableError, safeJobId, type Queues } from '../../jobs/queues.js';
import { describeError } from '../../api/http/error-table.js';
import { freePort } from '../../lib/infra/free-port.js';
import { startRedis } from '../../lib/infra/redis.js';
import { env, registerCleanup } from '../helpers/env.js';

/** Resolves to the rejection of `p` (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** jobs/queues.ts addOrUnavailable: the producer side of DESIGN.md §4 QUEUE_UNAVAILABLE (503). */
describe('jobs/queues addOrUnavailable (QUEUE_UNAVAILABLE when Redis cannot take a job)', () => {
  const opened: Queues[] = [];
  const open = (url: string) => {
    const q = createQueues(url, { prefix: `{test-queues-${process.pid}-${opened.length}}` });
    opened.push(q);
    return q;
  };
  after(async () => {
    for (const q of opened) await q.close();
  });

  it('adds the job when Redis is up and returns it; a fixed job id dedupes a second add', async () => {
    const queues = open(env.redisUrl);
    const q = queues.get('invoice-overdue');
    const id = safeJobId('test', 'enqueue', process.pid);
    const job = await addOrUnavailable(q, 'invoice-overdue', { tenant_id: 7 }, { jobId: id });
    expect(job.id).to.equal(id);
    expect((await q.getJob(id))!.data).to.deep.equal({ tenant_id: 7 });
    const again = await addOrUnavailable(q, 'invoice-overdue', { tenant_id: 7 }, { jobId: id });
    expect(again.id).to.equal(id);
    expect(await q.getWaitingCount()).to.equal(1);
  });

  it('throws QueueUnavailableError (503 QUEUE_UNAVAILABLE) when nothing listens at the Redis URL, instead of hanging', async () => {
    const port = await freePort();
    const queues = open(`redis://127.0.0.1:${port}`);
    const err = await rejection(addOrUnavailable(queues.get('ticket-sla'), 'ticket-sla', {}, {}, 300));
    expect(err).to.be.instanceOf(QueueUnavailableError);
    expect(describeError(err)).to.include({ status: 503, code: 'QUEUE_UNAVAILABLE' });
    expect((err as Error).cause).to.be.instanceOf(Error);
  });

  it('throws QueueUnavailableError once a Redis that was up has stopped', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-queue-redis-'));
    registerCleanup(() => fs.rm(dir, { recursive: true, force: true }));
    const redis = await startRedis(dir);
    let stopped = false;
    registerCleanup(() => (stopped ? undefined : redis.stop()));
    const queues = open(redis.url);
    const q = queues.get('ticket-sla');
    const ok = await addOrUnavailable(q, 'ticket-sla', {}, { jobId: 'before-stop' }, 2000);
    expect(ok.id).to.equal('before-stop');
    await redis.stop();
    stopped = true;
    const err = await rejection(addOrUnavailable(q, 'ticket-sla', {}, { jobId: 'after-stop' }, 500));
    expect(err).to.be.instanceOf(QueueUnavailableError);
    expect(describeError(err)).to.include({ status: 503, code: 'QUEUE_UNAVAILABLE' });
  });
});
