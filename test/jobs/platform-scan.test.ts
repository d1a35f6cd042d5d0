import { expect } from 'chai';
import { scanRunId, scanScheduler } from '../../jobs/platform-scan.js';
import * as invoiceOverdue from '../../jobs/invoice-overdue.js';
import * as ticketSla from '../../jobs/ticket-sla.js';
import * as eventDispatch from '../../jobs/event-dispatch.js';

describe('jobs/platform-scan.ts: the scans’ scheduler and manual-run ids', () => {
  it('a scheduler template carries the scan’s attempts, backoff and retention and nothing undefined', () => {
    const s = scanScheduler(
      'ticket-sla',
      'x-every-minute',
      { every: 60_000 },
      {
        attempts: 4,
        backoff: { type: 'fixed', delay: 10 },
        removeOnComplete: { count: 5 },
        removeOnFail: { age: 60 },
      },
    );
    expect(s).to.deep.equal({
      id: 'x-every-minute',
      repeat: { every: 60_000 },
      template: {
        name: 'ticket-sla',
        data: {},
        opts: {
          attempts: 4,
          backoff: { type: 'fixed', delay: 10 },
          removeOnComplete: { count: 5 },
          removeOnFail: { age: 60 },
        },
      },
    });
    expect(scanScheduler('ticket-sla', 'y', { every: 1 }, { attempts: 1 }).template.opts).to.deep.equal({
      attempts: 1,
    });
  });

  it('each scan’s scheduler uses its own defaults (attempts 3, 2, 1)', () => {
    for (const [mod, attempts] of [
      [invoiceOverdue, 3],
      [ticketSla, 2],
      [eventDispatch, 1],
    ] as const) {
      expect(mod.scheduler.template.name).to.equal(mod.QUEUE);
      expect(mod.scheduler.template.opts).to.include({ attempts });
      expect(mod.scheduler.template.opts!.removeOnFail).to.deep.equal(mod.defaultOptions.removeOnFail);
    }
  });

  it('a manual run id is one per tenant (or all) per UTC minute', () => {
    const at = new Date(Date.UTC(2031, 4, 6, 7, 8, 59));
    expect(scanRunId('invoice-overdue', {}, at)).to.equal('invoice-overdue-all-203105060708');
    expect(scanRunId('invoice-overdue', { tenant_id: 12 }, at)).to.equal('invoice-overdue-t12-203105060708');
    expect(scanRunId('invoice-overdue', { tenant_id: null }, at)).to.equal('invoice-overdue-all-203105060708');
    expect(scanRunId('x', {}, new Date(at.getTime() + 1000))).to.not.equal(scanRunId('x', {}, at));
    expect(invoiceOverdue.jobId({ tenant_id: 3 }, at)).to.equal(scanRunId(invoiceOverdue.QUEUE, { tenant_id: 3 }, at));
  });
});
