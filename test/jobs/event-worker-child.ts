/**
 * A real worker process for test/jobs/event-dispatch-kill.test.ts (not a spec file): runs the
 * `event-dispatch` queue through workers/main.ts startWorkers with two test subscribers that write
 * their effect into test_event_effects through ctx.trx, scanning one tenant every 300 ms.
 *
 * Environment: DATABASE_URL, REDIS_URL, QUEUE_PREFIX, TENANT_ID, WORKER_TAG (stored with each
 * effect), BLOCK_AT (optional: the BLOCK_AT-th run of subscriber test.kill-b prints
 * "BLOCKED <event id>" after writing its effect and then never returns, so the test can SIGKILL
 * the process in the middle of an event, with uncommitted effects). Prints "READY" once started.
 */
import { createKnex } from '../../db/knex.js';
import { createLogger } from '../../lib/logger.js';
import { startWorkers } from '../../workers/main.js';
import * as eventDispatch from '../../jobs/event-dispatch.js';
import { MAX_SUBSCRIBER_TIMEOUT_MS, registerSubscriber } from '../../api/events/service.js';
import { recordEffect } from '../helpers/events.js';

const need = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

const knex = createKnex(need('DATABASE_URL'), { min: 0, max: 4 });
const tenantId = Number(need('TENANT_ID'));
const tag = need('WORKER_TAG');
const blockAt = Number(process.env.BLOCK_AT ?? 0);

registerSubscriber('test.kill-a', {
  events: '*',
  handle: (ev, ctx) => recordEffect(ctx.trx, ev, 'test.kill-a', ctx.idempotencyKey, tag),
});
let runsOfB = 0;
registerSubscriber('test.kill-b', {
  events: '*',
  timeoutMs: MAX_SUBSCRIBER_TIMEOUT_MS,
  handle: async (ev, ctx) => {
    await recordEffect(ctx.trx, ev, 'test.kill-b', ctx.idempotencyKey, tag);
    runsOfB += 1;
    if (runsOfB === blockAt) {
      process.stdout.write(`BLOCKED ${ev.id}\n`);
      await new Promise<never>(() => {
        /* until SIGKILL */
      });
    }
  },
});

const handle = await startWorkers({
  redisUrl: need('REDIS_URL'),
  knex,
  prefix: need('QUEUE_PREFIX'),
  logger: createLogger('warn'),
  queues: ['event-dispatch'],
  registry: {
    'event-dispatch': {
      processor: eventDispatch.process,
      concurrency: 1,
      scheduler: {
        id: 'event-dispatch-test',
        repeat: { every: 300 },
        template: { name: eventDispatch.QUEUE, data: { tenant_id: tenantId }, opts: { attempts: 1 } },
      },
    },
  },
});
process.stdout.write('READY\n');
process.once('SIGTERM', () => {
  handle
    .close()
    .then(() => knex.destroy())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
});
