import { expect } from 'chai';
import { execa, type ResultPromise } from 'execa';
import { env } from '../helpers/env.js';
import { bareTenant, effectCounts, ensureEffectsTable, publishMany, waitFor } from '../helpers/events.js';

const CHILD = 'test/jobs/event-worker-child.ts';
const SUBSCRIBERS = ['test.kill-a', 'test.kill-b'];

type Child = ResultPromise<{ reject: false; timeout: number }> & { output: () => string };

/** Starts test/jobs/event-worker-child.ts as its own process (tsx), collecting its stdout. */
function startChild(vars: Record<string, string>): Child {
  const child = execa(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, LOG_LEVEL: 'warn', ...vars },
    reject: false,
    timeout: 240_000,
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return Object.assign(child, { output: () => out });
}

/** Polls the child's output for a line matching `re` (bounded); fails early when the child exits. */
async function waitForLine(child: Child, re: RegExp, what: string): Promise<RegExpMatchArray> {
  let exited = false;
  void child.then(() => {
    exited = true;
  });
  return waitFor(
    what,
    async () => {
      const m = child.output().match(re);
      if (!m && exited) throw new Error(`worker exited before ${what}: ${child.output().slice(-2000)}`);
      return m;
    },
    120_000,
  );
}

describe('outbox delivery once across a worker kill (real worker processes, SIGKILL)', function () {
  this.timeout(300_000);
  const children: Child[] = [];

  before(ensureEffectsTable);
  after(async () => {
    for (const c of children) {
      if (c.exitCode === undefined || c.exitCode === null) c.kill('SIGKILL');
      await c;
    }
  });

  it('a worker killed in the middle of a batch loses nothing and delivers nothing twice', async () => {
    const tenantId = await bareTenant();
    const ids = await publishMany(tenantId, 'ticket_incident_created', (i) => ({ ticket_id: 1000 + i }), 8);
    const common = { QUEUE_PREFIX: `{evkill-${process.pid}-${Date.now()}}`, TENANT_ID: String(tenantId) };

    // Worker A delivers events 1 and 2, then blocks in subscriber test.kill-b of event 3, after
    // test.kill-a's and its own effect of event 3 were written in the uncommitted transaction.
    const a = startChild({ ...common, WORKER_TAG: 'A', BLOCK_AT: '3' });
    children.push(a);
    const blocked = Number((await waitForLine(a, /^BLOCKED (\d+)$/m, 'worker A to block'))[1]);
    expect(blocked).to.equal(ids[2]);
    const dispatchedBeforeKill = await env
      .knex('event_outbox')
      .where({ tenant_id: tenantId })
      .whereNotNull('dispatched_at')
      .orderBy('id')
      .pluck('id');
    expect(dispatchedBeforeKill).to.deep.equal(ids.slice(0, 2));
    const committed = await effectCounts(tenantId);
    const firstTwo = ids.slice(0, 2).flatMap((id) => SUBSCRIBERS.map((s) => `${id}/${s}`));
    expect([...committed.keys()].sort()).to.deep.equal(firstTwo.sort());

    a.kill('SIGKILL');
    const ra = await a;
    expect(ra.signal).to.equal('SIGKILL');

    // Worker B takes over: the killed transaction was rolled back by PostgreSQL, event 3 is free.
    const b = startChild({ ...common, WORKER_TAG: 'B' });
    children.push(b);
    await waitFor(
      'every event dispatched by worker B',
      async () => {
        const [{ n }] = await env
          .knex('event_outbox')
          .where({ tenant_id: tenantId })
          .whereNull('dispatched_at')
          .count({ n: '*' });
        return Number(n) === 0;
      },
      120_000,
      200,
    );
    b.kill('SIGTERM');
    const rb = await b;
    expect(rb.exitCode, b.output()).to.equal(0);

    const counts = await effectCounts(tenantId);
    const expected = new Map(ids.flatMap((id) => SUBSCRIBERS.map((s) => [`${id}/${s}`, 1] as const)));
    expect(new Map([...counts].sort())).to.deep.equal(new Map([...expected].sort()));
    // the worker also runs the chat bot's own subscribers (issue 11): count this test's subscribers
    const deliveries = await env
      .knex('event_deliveries')
      .whereIn('event_id', ids)
      .whereIn('subscriber', SUBSCRIBERS)
      .count({ n: '*' });
    expect(deliveries).to.deep.equal([{ n: ids.length * SUBSCRIBERS.length }]);
    const byWorker = await env
      .knex('test_event_effects')
      .where({ tenant_id: tenantId })
      .groupBy('event_id')
      .orderBy('event_id')
      .select('event_id', env.knex.raw(`string_agg(DISTINCT worker, ',') AS workers`));
    expect(byWorker.map((r) => r.workers)).to.deep.equal(['A', 'A', 'B', 'B', 'B', 'B', 'B', 'B']);
    const rows = await env.knex('event_outbox').whereIn('id', ids).orderBy('id').select('attempts', 'last_error');
    expect(rows).to.deep.equal(ids.map(() => ({ attempts: 0, last_error: null })));
  });
});
