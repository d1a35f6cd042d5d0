import type { Knex } from 'knex';

/**
 * The transactional outbox of domain events (DESIGN.md §10 "events", document 2 "## Events"):
 * - event_outbox: one row per published event, written by publishEvent in the publisher's own
 *   transaction (api/events/service.ts), so an event exists exactly when the change that caused it
 *   committed. dispatched_at is set once every subscriber has it; attempts, last_error and
 *   available_at (the earliest next attempt: per-event exponential backoff) record failures.
 *   A partial index holds only the undispatched rows, so the dispatcher's scan stays small however
 *   long the history grows.
 * - event_deliveries: one row per (event, subscriber) delivered, inserted in the same transaction
 *   as the subscriber's database effect. Its primary key is the real guard against delivering an
 *   event twice to one subscriber (DESIGN.md §3).
 * Both are removed with their tenant (ON DELETE CASCADE); deliveries go with their event.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE event_outbox (
      id bigserial PRIMARY KEY,
      tenant_id integer NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL CHECK (name ~ '^[a-z][a-z0-9_]{0,99}$'),
      payload jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(payload) = 'object'),
      created_at timestamptz NOT NULL DEFAULT now(),
      dispatched_at timestamptz NULL,
      attempts integer NOT NULL DEFAULT 0,
      last_error text NULL,
      available_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw(`CREATE INDEX event_outbox_pending_idx ON event_outbox (id) WHERE dispatched_at IS NULL`);
  await knex.raw(`CREATE INDEX event_outbox_dispatched_at_idx ON event_outbox (dispatched_at)
    WHERE dispatched_at IS NOT NULL`);
  await knex.raw(`CREATE INDEX event_outbox_tenant_idx ON event_outbox (tenant_id, id)`);
  await knex.raw(`
    CREATE TABLE event_deliveries (
      event_id bigint NOT NULL REFERENCES event_outbox(id) ON DELETE CASCADE,
      subscriber text NOT NULL,
      delivered_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (event_id, subscriber)
    )`);
}

/** Drops the outbox and its deliveries. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('event_deliveries');
  await knex.schema.dropTableIfExists('event_outbox');
}
