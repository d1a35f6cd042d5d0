import { expect } from 'chai';
import type { Knex } from 'knex';
import { env } from '../helpers/env.js';
import { freshDatabase } from '../helpers/fresh-db.js';
import { bareTenant, effectCounts, ensureEffectsTable, publishMany, recordEffect } from '../helpers/events.js';
import { configureJobDeps } from '../../jobs/deps.js';
import { createQueues } from '../../jobs/queues.js';
import { freePort } from '../../lib/infra/free-port.js';
import { ScanAborted } from '../../jobs/platform-scan.js';
import {
  dispatchEvents,
  EventDispatchFailed,
  jobId,
  MAX_EVENT_ATTEMPTS,
  nudge,
  process as eventDispatch,
  QUEUE,
  retryDelayMs,
} from '../../jobs/event-dispatch.js';
import { registerSubscriber, type EventName, type SubscriberDef } from '../../api/events/service.js';
import { fakeJob } from './fake-job.js';

/**
 * The file works in a database of its own: the job scans every tenant database, and the shard's
 * shared one may hold other files' cut-over tenants (whose databases this file's deps cannot open).
 */
const db = { knex: undefined as unknown as Knex };
const outbox = (tenantId: number) => db.knex('event_outbox').where({ tenant_id: tenantId }).orderBy('id');

describe('job event-dispatch (processor with a fake Job, real PostgreSQL)', () => {
  const unregister: (() => void)[] = [];
  const subscribe = <N extends EventName>(id: string, def: SubscriberDef<N>) => {
    unregister.push(registerSubscriber(id, def));
  };
  /** A subscriber that writes one effect row per run through ctx.trx. */
  const recorder = (id: string, events: EventName[] | '*' = '*') =>
    subscribe(id, {
      events,
      handle: (ev, ctx) => recordEffect(ctx.trx, ev, id, ctx.idempotencyKey),
    });

  before(async () => {
    db.knex = (await freshDatabase()).knex;
    configureJobDeps({ knex: db.knex });
    await ensureEffectsTable(db.knex);
  });
  afterEach(() => {
    while (unregister.length) unregister.pop()!();
  });
  after(() => configureJobDeps({ knex: env.knex }));

  it('delivers each event once to each subscriber of its name, marks it dispatched; a rerun does nothing', async () => {
    const t = await bareTenant(db.knex);
    const incidents = await publishMany(t, 'ticket_incident_created', (i) => ({ ticket_id: 100 + i }), 3, db.knex);
    const inbound = await publishMany(t, 'inbound_chat_message', (i) => ({ communication_id: 200 + i }), 2, db.knex);
    recorder('test.d-incidents', ['ticket_incident_created']);
    recorder('test.d-all');
    const seen: unknown[] = [];
    subscribe('test.d-shape', {
      events: ['ticket_incident_created'],
      handle: async (ev) => {
        seen.push(ev.payload);
      },
    });

    const { job, logs, progress } = fakeJob({ tenant_id: t });
    const first = await eventDispatch(job);
    expect(first).to.deep.equal({ dispatched: 5, deliveries: 3 + 5 + 3, failed: 0, purged: 0 });
    expect(seen).to.deep.equal([{ ticket_id: 100 }, { ticket_id: 101 }, { ticket_id: 102 }]);
    expect(logs[0]).to.equal(`5 event(s) pending in tenant ${t}`);
    expect(logs.at(-1)).to.equal('done: 5 dispatched, 11 delivery(ies), 0 failed, 0 purged');
    expect(progress.at(-1)).to.equal(100);

    const expected = new Map<string, number>();
    for (const id of incidents) expected.set(`${id}/test.d-incidents`, 1);
    for (const id of [...incidents, ...inbound]) expected.set(`${id}/test.d-all`, 1);
    expect(await effectCounts(t, db.knex)).to.deep.equal(expected);
    const keys = await db
      .knex('test_event_effects')
      .where({ tenant_id: t, event_id: incidents[0] })
      .orderBy('subscriber')
      .pluck('idem_key');
    expect(keys).to.deep.equal([`${incidents[0]}:test.d-all`, `${incidents[0]}:test.d-incidents`]);
    const rows = await outbox(t);
    expect(rows.map((r) => r.dispatched_at !== null)).to.deep.equal([true, true, true, true, true]);
    expect(rows.map((r) => r.attempts)).to.deep.equal([0, 0, 0, 0, 0]);
    const deliveries = await db
      .knex('event_deliveries')
      .whereIn('event_id', [...incidents, ...inbound])
      .count({ n: '*' });
    expect(deliveries).to.deep.equal([{ n: 11 }]);

    const second = await eventDispatch(fakeJob({ tenant_id: t }).job);
    expect(second).to.deep.equal({ dispatched: 0, deliveries: 0, failed: 0, purged: 0 });
    expect(await effectCounts(t, db.knex)).to.deep.equal(expected);
  });

  it('marks an event without subscribers dispatched with no delivery', async () => {
    const t = await bareTenant(db.knex);
    const [id] = await publishMany(t, 'inbound_chat_message', () => ({ communication_id: 1 }), 1, db.knex);
    const r = await eventDispatch(fakeJob({ tenant_id: t }).job);
    expect(r).to.deep.equal({ dispatched: 1, deliveries: 0, failed: 0, purged: 0 });
    expect((await db.knex('event_outbox').where({ id }).first()).dispatched_at).to.be.instanceOf(Date);
    expect(await db.knex('event_deliveries').where({ event_id: id }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);
  });

  it('two concurrent dispatchers never deliver an event twice (FOR NO KEY UPDATE SKIP LOCKED)', async () => {
    const t = await bareTenant(db.knex);
    const ids = await publishMany(t, 'ticket_incident_created', (i) => ({ ticket_id: i + 1 }), 40, db.knex);
    subscribe('test.c-slow', {
      events: '*',
      handle: async (ev, ctx) => {
        await ctx.trx.raw('SELECT pg_sleep(0.005)');
        await recordEffect(ctx.trx, ev, 'test.c-slow', ctx.idempotencyKey);
      },
    });
    const run = () => eventDispatch(fakeJob({ tenant_id: t }).job);
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.dispatched + b.dispatched).to.equal(40);
    expect(a.deliveries + b.deliveries).to.equal(40);
    const counts = await effectCounts(t, db.knex);
    expect(counts.size).to.equal(40);
    for (const id of ids) expect(counts.get(`${id}/test.c-slow`), `event ${id}`).to.equal(1);
    expect(await db.knex('event_deliveries').whereIn('event_id', ids).count({ n: '*' })).to.deep.equal([{ n: 40 }]);
  });

  it('skips an event another dispatcher holds, and delivers it once that one lets go', async () => {
    const t = await bareTenant(db.knex);
    const [held, free] = await publishMany(t, 'ticket_incident_created', (i) => ({ ticket_id: i }), 2, db.knex);
    recorder('test.s-rec');
    const other = await db.knex.transaction();
    try {
      await other.raw('SELECT id FROM event_outbox WHERE id = ? FOR NO KEY UPDATE', [held]);
      const r = await eventDispatch(fakeJob({ tenant_id: t }).job);
      expect(r).to.deep.equal({ dispatched: 1, deliveries: 1, failed: 0, purged: 0 });
      expect(await effectCounts(t, db.knex)).to.deep.equal(new Map([[`${free}/test.s-rec`, 1]]));
    } finally {
      await other.rollback();
    }
    const r = await eventDispatch(fakeJob({ tenant_id: t }).job);
    expect(r).to.deep.equal({ dispatched: 1, deliveries: 1, failed: 0, purged: 0 });
    expect(await effectCounts(t, db.knex)).to.deep.equal(
      new Map([
        [`${free}/test.s-rec`, 1],
        [`${held}/test.s-rec`, 1],
      ]),
    );
  });

  it('records a failing subscriber, rolls back its effect, backs off, then retries only that subscriber', async () => {
    const t = await bareTenant(db.knex);
    const [id] = await publishMany(t, 'ticket_incident_created', () => ({ ticket_id: 9 }), 1, db.knex);
    recorder('test.f-steady');
    let fail = true;
    subscribe('test.f-flaky', {
      events: ['ticket_incident_created'],
      handle: async (ev, ctx) => {
        await recordEffect(ctx.trx, ev, 'test.f-flaky', ctx.idempotencyKey);
        if (fail) throw new Error('chat gateway answered 502');
      },
    });

    const {
      rows: [{ t0 }],
    } = await db.knex.raw('SELECT now() AS t0');
    const { result, errors } = await dispatchEvents(db.knex, fakeJob({ tenant_id: t }).job);
    expect(result).to.deep.equal({ dispatched: 0, deliveries: 1, failed: 1, purged: 0 });
    expect(errors).to.deep.equal([
      `event ${id} (ticket_incident_created, tenant ${t}): attempt 1 failed (next attempt in 5 s): ` +
        'test.f-flaky: chat gateway answered 502',
    ]);
    const row = await db
      .knex('event_outbox')
      .where({ id })
      .first(db.knex.raw(`*, (extract(epoch FROM available_at - ?::timestamptz) * 1000)::int AS backoff_ms`, [t0]));
    expect(row).to.include({ attempts: 1, last_error: 'test.f-flaky: chat gateway answered 502', dispatched_at: null });
    expect(row.backoff_ms).to.be.within(5000, 5000 + 120_000); // 5 s after the attempt, which began after t0
    expect(await db.knex('event_deliveries').where({ event_id: id }).pluck('subscriber')).to.deep.equal([
      'test.f-steady',
    ]);
    expect(await effectCounts(t, db.knex)).to.deep.equal(new Map([[`${id}/test.f-steady`, 1]]));

    await db
      .knex('event_outbox')
      .where({ id })
      .update({ available_at: db.knex.raw(`now() + interval '1 hour'`) });
    const during = await eventDispatch(fakeJob({ tenant_id: t }).job); // still backing off
    expect(during).to.deep.equal({ dispatched: 0, deliveries: 0, failed: 0, purged: 0 });

    fail = false;
    await db.knex('event_outbox').where({ id }).update({ available_at: db.knex.fn.now() }); // the backoff has passed
    const after = await eventDispatch(fakeJob({ tenant_id: t }).job);
    expect(after).to.deep.equal({ dispatched: 1, deliveries: 1, failed: 0, purged: 0 });
    expect(await effectCounts(t, db.knex)).to.deep.equal(
      new Map([
        [`${id}/test.f-flaky`, 1],
        [`${id}/test.f-steady`, 1],
      ]),
    );
    const done = await db.knex('event_outbox').where({ id }).first();
    expect(done).to.include({ attempts: 1, last_error: null });
    expect(done.dispatched_at).to.be.instanceOf(Date);
  });

  it('fails the job with the reason (bull-board) and gives an event up after MAX_EVENT_ATTEMPTS', async () => {
    const t = await bareTenant(db.knex);
    const [id] = await publishMany(t, 'inbound_chat_message', () => ({ communication_id: 3 }), 1, db.knex);
    subscribe('test.g-broken', {
      events: '*',
      handle: async () => {
        throw new Error('always broken');
      },
    });
    await db
      .knex('event_outbox')
      .where({ id })
      .update({ attempts: MAX_EVENT_ATTEMPTS - 1 });
    let err: unknown;
    try {
      await eventDispatch(fakeJob({ tenant_id: t }).job);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(EventDispatchFailed);
    expect((err as EventDispatchFailed).message).to.include(
      `attempt ${MAX_EVENT_ATTEMPTS} failed (given up): test.g-broken: always broken`,
    );
    expect((err as EventDispatchFailed).result.failed).to.equal(1);
    await db.knex('event_outbox').where({ id }).update({ available_at: db.knex.fn.now() });
    const later = await eventDispatch(fakeJob({ tenant_id: t }).job);
    expect(later).to.deep.equal({ dispatched: 0, deliveries: 0, failed: 0, purged: 0 });
    expect(await db.knex('event_outbox').where({ id }).first('attempts', 'dispatched_at')).to.deep.equal({
      attempts: MAX_EVENT_ATTEMPTS,
      dispatched_at: null,
    });
  });

  it('bounds a subscriber by its timeout and aborts its signal', async () => {
    const t = await bareTenant(db.knex);
    const [id] = await publishMany(t, 'ticket_incident_created', () => ({ ticket_id: 5 }), 1, db.knex);
    let aborted = false;
    subscribe('test.t-hang', {
      events: '*',
      timeoutMs: 200,
      handle: (_ev, ctx) =>
        new Promise<void>(() => {
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
          });
        }),
    });
    const { result } = await dispatchEvents(db.knex, fakeJob({ tenant_id: t }).job);
    expect(result.failed).to.equal(1);
    expect(aborted).to.equal(true);
    const row = await db.knex('event_outbox').where({ id }).first();
    expect(row.last_error).to.equal('test.t-hang: timed out after 200 ms');
  });

  it('stops before taking an event when its AbortSignal fired (ScanAborted, nothing dispatched)', async () => {
    const t = await bareTenant(db.knex);
    const [id] = await publishMany(t, 'ticket_incident_created', () => ({ ticket_id: 5 }), 1, db.knex);
    const ctl = new AbortController();
    ctl.abort();
    let err: unknown;
    try {
      await eventDispatch(fakeJob({ tenant_id: t }).job, undefined, ctl.signal);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ScanAborted);
    expect((await db.knex('event_outbox').where({ id }).first()).dispatched_at).to.equal(null);
  });

  it('dispatches only the given event when the job names one (nudge)', async () => {
    const t = await bareTenant(db.knex);
    const [first, second] = await publishMany(t, 'ticket_incident_created', (i) => ({ ticket_id: i }), 2, db.knex);
    recorder('test.n-rec');
    const r = await eventDispatch(fakeJob({ event_id: second }).job);
    expect(r).to.deep.equal({ dispatched: 1, deliveries: 1, failed: 0, purged: 0 });
    expect(await effectCounts(t, db.knex)).to.deep.equal(new Map([[`${second}/test.n-rec`, 1]]));
    expect((await db.knex('event_outbox').where({ id: first }).first()).dispatched_at).to.equal(null);
  });

  it('deletes events 30 days after dispatch (deliveries too) and given-up ones 30 days after publication', async () => {
    const t = await bareTenant(db.knex);
    const ids = await publishMany(t, 'inbound_chat_message', (i) => ({ communication_id: i }), 4, db.knex);
    const [old, recent, givenUp, pending] = ids;
    const ago = (days: number) => db.knex.raw(`now() - ?::int * interval '1 day'`, [days]);
    await db
      .knex('event_outbox')
      .where({ id: old })
      .update({ created_at: ago(32), dispatched_at: ago(31) });
    await db
      .knex('event_outbox')
      .where({ id: recent })
      .update({ created_at: ago(2), dispatched_at: ago(1) });
    await db
      .knex('event_outbox')
      .where({ id: givenUp })
      .update({ created_at: ago(31), attempts: MAX_EVENT_ATTEMPTS });
    await db.knex('event_deliveries').insert([old, recent].map((event_id) => ({ event_id, subscriber: 'test.r-x' })));
    await db
      .knex('event_outbox')
      .where({ id: pending })
      .update({ available_at: ago(-1) }); // keep it out of this run
    const r = await eventDispatch(fakeJob({ tenant_id: t }).job);
    expect(r).to.deep.equal({ dispatched: 0, deliveries: 0, failed: 0, purged: 2 });
    expect((await outbox(t)).map((e) => e.id)).to.deep.equal([recent, pending]);
    expect(await db.knex('event_deliveries').whereIn('event_id', [old, recent]).pluck('event_id')).to.deep.equal([
      recent,
    ]);
  });

  it('a run for one tenant opens only its database; a run over all reports a cut-over tenant it cannot reach', async () => {
    const t = await bareTenant(db.knex);
    const [id] = await publishMany(t, 'ticket_incident_created', () => ({ ticket_id: 1 }), 1, db.knex);
    const moved = await bareTenant(db.knex);
    // cut over, but these deps have no APP_KEY to open its database
    await db.knex('tenants').where({ id: moved }).update({ db_mode: 'tenant_db' });
    try {
      const own = await eventDispatch(fakeJob({ tenant_id: t }).job);
      expect(own).to.deep.equal({ dispatched: 1, deliveries: 0, failed: 0, purged: 0 });
      expect((await db.knex('event_outbox').where({ id }).first()).dispatched_at).to.be.instanceOf(Date);

      const errOf = async (data: { tenant_id?: number }) => {
        try {
          await eventDispatch(fakeJob(data).job);
        } catch (e) {
          return e as EventDispatchFailed;
        }
        throw new Error(`a run with ${JSON.stringify(data)} did not fail`);
      };
      for (const data of [{}, { tenant_id: moved }]) {
        const err = await errOf(data);
        expect(err).to.be.instanceOf(EventDispatchFailed);
        expect(err.result.failed).to.equal(1);
        expect(err.errors).to.deep.equal([`tenant ${moved}'s database: APP_KEY is needed to reach a tenant database`]);
      }
    } finally {
      await db.knex('tenants').where({ id: moved }).update({ db_mode: 'shared_db' });
    }
  });

  it('uses fixed job ids without ":" and a backoff doubling from 5 s up to 1 h', () => {
    expect(jobId({ event_id: 12 })).to.equal('event-dispatch-e12');
    expect(jobId({ tenant_id: 3 })).to.match(/^event-dispatch-t3-\d{12}$/);
    expect(jobId({})).to.match(/^event-dispatch-all-\d{12}$/);
    expect([1, 2, 3, 4].map(retryDelayMs)).to.deep.equal([5000, 10_000, 20_000, 40_000]);
    expect(retryDelayMs(20)).to.equal(3_600_000);
  });

  it('nudge() enqueues one job per event on real Redis, and answers false (never throws) without Redis', async () => {
    const queues = createQueues(env.redisUrl, { prefix: `{evtest-${process.pid}}` });
    const down = createQueues(`redis://127.0.0.1:${await freePort()}`);
    try {
      expect(await nudge(queues, 77)).to.equal(true);
      expect(await nudge(queues, 77)).to.equal(true);
      const jobs = await queues.get(QUEUE).getJobs(['waiting']);
      expect(jobs.map((j) => ({ id: j.id, data: j.data }))).to.deep.equal([
        { id: 'event-dispatch-e77', data: { event_id: 77 } },
      ]);
      expect(await nudge(down, 78, 300)).to.equal(false);
    } finally {
      await queues.get(QUEUE).obliterate({ force: true });
      await queues.close();
      await down.close();
    }
  });
});
