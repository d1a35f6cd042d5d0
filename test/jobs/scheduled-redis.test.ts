import { expect } from 'chai';
import { QueueEvents } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { env } from '../helpers/env.js';
import { makeTenant, seedBasics } from '../helpers/fixtures.js';
import { createLogger } from '../../lib/logger.js';
import { createQueues } from '../../jobs/queues.js';
import * as invoiceOverdue from '../../jobs/invoice-overdue.js';
import * as ticketSla from '../../jobs/ticket-sla.js';
import { startWorkers } from '../../workers/main.js';
import { addDays, ManualClock, todayIn } from '../../lib/clock.js';

const silent = () =>
  createLogger(
    'silent',
    new Writable({
      write(_c, _e, cb) {
        cb();
      },
    }),
  );

/** The first 'completed' event of a queue whose job id matches, with its return value. */
function firstCompleted(events: QueueEvents, idPattern: RegExp): Promise<{ jobId: string; returnvalue: any }> {
  return new Promise((resolve) => {
    const on = (e: { jobId: string; returnvalue: unknown }) => {
      if (!idPattern.test(e.jobId)) return;
      events.off('completed', on);
      resolve({
        jobId: e.jobId,
        returnvalue: typeof e.returnvalue === 'string' ? JSON.parse(e.returnvalue) : e.returnvalue,
      });
    };
    events.on('completed', on);
  });
}

/**
 * Issue 2 "Tests": the scheduled jobs on real Redis. The worker's own schedulers (upsertJobScheduler)
 * produce the first runs; a manual run afterwards changes nothing.
 */
describe('scheduled jobs invoice-overdue and ticket-sla on real Redis (worker, schedulers, a second run)', function () {
  this.timeout(60_000);

  it("the schedulers' first runs change the rows; another run of each changes nothing", async () => {
    const prefix = `{sched-${process.pid}-${randomBytes(3).toString('hex')}}`;
    // the jobs read "now" and "today" from this clock, standing still: however long the run takes
    const clock = new ManualClock();
    const at = (hours: number) => new Date(clock.now().getTime() + hours * 3600_000);
    const t = await makeTenant();
    const { customerId } = await seedBasics(t, { clock });
    const today = todayIn(t.timeZone, clock);
    const hex = randomBytes(3).toString('hex');
    const invoice = (n: string, due: string) =>
      t.scope.insert('invoices', {
        invoice_number: `INV-${n}-${hex}`,
        customer_id: customerId,
        amount: 10,
        status: 'unpaid',
        due_date: due,
      });
    const overdue = await invoice('S', addDays(today, -3));
    const notDue = await invoice('N', addDays(today, 3));
    const dueToday = await invoice('T', today);
    const late = await t.scope.insert('tickets', {
      ticket_number: `TCK-S-${hex}`,
      type: 'no internet',
      priority: 'high',
      status: 'open',
      created_at: at(-3),
      response_due_at: at(-2),
      resolution_due_at: at(1),
    });
    const undated = await t.scope.insert('tickets', {
      ticket_number: `TCK-U-${hex}`,
      type: 'slow',
      priority: 'low',
      status: 'open',
      created_at: at(0),
    });

    const invEvents = new QueueEvents(invoiceOverdue.QUEUE, { connection: { url: env.redisUrl }, prefix });
    const slaEvents = new QueueEvents(ticketSla.QUEUE, { connection: { url: env.redisUrl }, prefix });
    const queues = createQueues(env.redisUrl, { prefix });
    let handle: Awaited<ReturnType<typeof startWorkers>> | null = null;
    try {
      await Promise.all([invEvents.waitUntilReady(), slaEvents.waitUntilReady()]);
      const firstInv = firstCompleted(invEvents, /^repeat:invoice-overdue-hourly:/);
      const firstSla = firstCompleted(slaEvents, /^repeat:ticket-sla-every-minute:/);
      handle = await startWorkers({
        redisUrl: env.redisUrl,
        knex: env.knex,
        prefix,
        logger: silent(),
        clock,
        queues: ['invoice-overdue', 'ticket-sla'],
      });

      const inv = await firstInv;
      expect(inv.returnvalue.tenants[String(t.tenant.id)]).to.equal(1);
      const sla = await firstSla;
      // due dates: `undated` and seedBasics' ticket (inserted without them); breached: `late`
      expect(sla.returnvalue.tenants[String(t.tenant.id)]).to.deep.equal({ due_dates_set: 2, breached: 1 });

      expect((await env.knex('invoices').where({ id: overdue.id }).first()).status).to.equal('overdue');
      expect((await env.knex('invoices').where({ id: notDue.id }).first()).status).to.equal('unpaid');
      expect((await env.knex('invoices').where({ id: dueToday.id }).first()).status).to.equal('unpaid');
      expect((await env.knex('tickets').where({ id: late.id }).first()).sla_breached).to.equal(true);
      const dated = await env.knex('tickets').where({ id: undated.id }).first();
      expect(dated.response_due_at).to.be.instanceOf(Date);
      expect(dated.resolution_due_at).to.be.instanceOf(Date);
      expect(dated.sla_breached).to.equal(false);

      const snapshot = async () =>
        JSON.stringify({
          invoices: await env.knex('invoices').where({ tenant_id: t.tenant.id }).orderBy('id'),
          tickets: await env.knex('tickets').where({ tenant_id: t.tenant.id }).orderBy('id'),
        });
      const before = await snapshot();
      const invId = await invoiceOverdue.enqueue(queues, { tenant_id: t.tenant.id });
      const slaId = await ticketSla.enqueue(queues, { tenant_id: t.tenant.id });
      const again = await Promise.all([
        (await queues.get(invoiceOverdue.QUEUE).getJob(invId))!.waitUntilFinished(invEvents, 20_000),
        (await queues.get(ticketSla.QUEUE).getJob(slaId))!.waitUntilFinished(slaEvents, 20_000),
      ]);
      expect(again[0]).to.include({ changed: 0 });
      expect(again[1]).to.include({ changed: 0, due_dates_set: 0, breached: 0 });
      expect(await snapshot()).to.equal(before);
    } finally {
      await handle?.close();
      await Promise.all([invEvents.close(), slaEvents.close(), queues.close()]);
    }
  });
});
