import { registerSubscriber, type OutboxEvent, type SubscriberContext } from '../../api/events/service.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { DEFAULT_TIME_ZONE } from '../../lib/clock.js';
import { jobClock, jobDeps } from '../deps.js';
import { enqueueChatMessage } from './enqueue.js';
import { incidentNoticeText } from './group-notice-texts.js';

/**
 * The chat groups' event notices (issue 11 item 4; document 2 "Events": "chat groups of network
 * operations or technicians that have ticked this event in bot settings"): a subscriber of
 * `ticket_incident_created`, run by the event-dispatch job in its transaction (docs/events.md).
 * For each enabled group of the tenant whose `events` holds the event it writes one notice through
 * enqueueChatMessage on the group's account (recipient kind `group`, source `notice`), which the
 * wabot-send job sends (bot disabled: `bot_disabled`; account gone: `account_unavailable`; demo
 * tenant: `demo_guard_blocked`). A `wabot_group_notices` row (primary key event id, group id) is
 * written first in the same transaction: a redelivered event finds it and sends nothing twice; a
 * rolled-back publisher never published the event, so nothing is sent.
 */

/** The subscriber id (event_deliveries.subscriber). */
export const GROUP_NOTICES_SUBSCRIBER = 'wabot.group-notices';

/** The notices written for one event (outbox row ids), and the groups skipped as already notified. */
export interface GroupNoticeOutcome {
  queued: number[];
  already: number;
}

/**
 * Handles one `ticket_incident_created` event (see the file comment).
 * @throws the database's errors; Error when the process has no Redis or queues (the event is retried)
 */
export async function handleGroupNotices(
  ev: OutboxEvent<'ticket_incident_created'>,
  ctx: SubscriberContext,
): Promise<GroupNoticeOutcome> {
  const scope = new TenantScope(ctx.trx, ev.tenant_id);
  const groups: { id: number; account_id: string; group_id: string }[] = await scope
    .table('wabot_groups')
    .where({ enabled: true })
    .whereRaw('events @> ?::jsonb', [JSON.stringify([ev.name])])
    .orderBy('id')
    .select('id', 'account_id', 'group_id');
  const out: GroupNoticeOutcome = { queued: [], already: 0 };
  if (!groups.length) return out;
  const deps = jobDeps();
  // the shared tenants row (a cut-over tenant's database keeps only the cutover's copy; issue 15)
  const tenant = await deps.knex('tenants').where({ id: ev.tenant_id }).first('timezone');
  const text = incidentNoticeText(ev.payload ?? {}, tenant?.timezone ?? DEFAULT_TIME_ZONE);
  if (!deps.redis || !deps.queues) throw new Error('wabot group notices: the worker has no Redis or queues (JobDeps)');
  for (const g of groups) {
    const claimed = await ctx
      .trx('wabot_group_notices')
      .insert({ tenant_id: ev.tenant_id, event_id: ev.id, group_id: g.id })
      .onConflict(['event_id', 'group_id'])
      .ignore()
      .returning('group_id');
    if (!claimed.length) {
      out.already += 1;
      continue;
    }
    const row = await enqueueChatMessage(
      ctx.trx,
      { tenantId: ev.tenant_id, to: g.group_id, kind: 'group', text, source: 'notice', accountId: g.account_id },
      {
        redis: deps.redis,
        queues: deps.queues,
        config: deps.chatConfig ?? null,
        clock: jobClock(),
        keyPrefix: deps.chatSend?.keyPrefix,
      },
    );
    await ctx
      .trx('wabot_group_notices')
      .where({ event_id: ev.id, group_id: g.id })
      .update({ communication_id: row.id });
    out.queued.push(row.id);
  }
  return out;
}

let refs = 0;
let unregister: (() => void) | null = null;

/**
 * Registers the group-notice subscriber in this process while someone uses it (startWorkers does,
 * for its lifetime; tests around their dispatch runs). Reference-counted like the auto-reply's.
 * @returns the release function (idempotent)
 */
export function useGroupNoticeSubscriber(): () => void {
  if (refs++ === 0) {
    unregister = registerSubscriber(GROUP_NOTICES_SUBSCRIBER, {
      events: ['ticket_incident_created'],
      async handle(ev, ctx) {
        const out = await handleGroupNotices(ev, ctx);
        await ctx.log(`group notices: ${out.queued.length} queued, ${out.already} already sent`);
      },
    });
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--refs === 0) {
      unregister?.();
      unregister = null;
    }
  };
}
