import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { env } from './env.js';
import { publishEvent, type EventName, type EventPayloads } from '../../api/events/service.js';

/**
 * Helpers of the event outbox tests: a bare tenant, committed events, and a side-effect table
 * (test_event_effects) that subscribers write through ctx.trx. It has no unique key on purpose: a
 * second delivery of an (event, subscriber) would show up as a second row.
 */

/**
 * Creates a tenant row (no users: publishing events needs none); returns its id.
 * @param knex the database (default the run's shared one; a file may work in a fresh one)
 */
export async function bareTenant(knex: Knex = env.knex): Promise<number> {
  const slug = `ev-${randomBytes(4).toString('hex')}`;
  const [row] = await knex('tenants')
    .insert({ slug, name: `Events ${slug}` })
    .returning('id');
  return row.id;
}

/** Publishes `n` events of one name in one committed transaction; returns their ids in order. */
export async function publishMany<N extends EventName>(
  tenantId: number,
  name: N,
  payload: (i: number) => EventPayloads[N],
  n: number,
  knex: Knex = env.knex,
): Promise<number[]> {
  return knex.transaction(async (trx) => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push((await publishEvent(trx, tenantId, name, payload(i))).id);
    return ids;
  });
}

/** Creates test_event_effects once (idempotent). */
export async function ensureEffectsTable(knex: Knex = env.knex): Promise<void> {
  await knex.raw(`CREATE TABLE IF NOT EXISTS test_event_effects (
    id bigserial PRIMARY KEY, tenant_id integer NOT NULL, event_id bigint NOT NULL, subscriber text NOT NULL,
    idem_key text NOT NULL, worker text NOT NULL DEFAULT 'in-process', at timestamptz NOT NULL DEFAULT now())`);
}

/** Writes one effect row in the subscriber's savepoint. */
export async function recordEffect(
  trx: Knex.Transaction,
  ev: { id: number; tenant_id: number },
  subscriber: string,
  key: string,
  worker = 'in-process',
): Promise<void> {
  const row = { tenant_id: ev.tenant_id, event_id: ev.id, subscriber, idem_key: key, worker };
  await trx('test_event_effects').insert(row);
}

/** Effect rows of a tenant: "event_id/subscriber" -> number of rows. */
export async function effectCounts(tenantId: number, knex: Knex = env.knex): Promise<Map<string, number>> {
  const rows: { event_id: number; subscriber: string; n: number }[] = await knex('test_event_effects')
    .where({ tenant_id: tenantId })
    .groupBy('event_id', 'subscriber')
    .select('event_id', 'subscriber', knex.raw('count(*)::int AS n'));
  return new Map(rows.map((r) => [`${r.event_id}/${r.subscriber}`, r.n]));
}

/**
 * Polls `check` until it returns a truthy value or `timeoutMs` passes (generous bounds: the test
 * machine is shared and loaded).
 * @throws Error naming `what` on timeout
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T>,
  timeoutMs = 90_000,
  everyMs = 100,
): Promise<NonNullable<T>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
