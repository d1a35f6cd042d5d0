import type { Knex } from 'knex';

/**
 * Issue 11 items 3, 4 and 6 (document 2 "Chat bot", "Events"):
 * - `wabot_account_states`: per tenant and account id (also the implicit account `default` of a
 *   configuration without accounts) the last device status (sync-device-status) and the last
 *   webhook registration result (webhook_auto_register). A row of an account that was removed is
 *   simply not shown; it is reused if an account with that id comes back.
 * - `wabot_groups`: the chat groups that receive event notices (name, kind, the sending account,
 *   the provider's group id, the events ticked, enabled).
 * - `wabot_group_notices`: one row per (event, group) that got a notice, with its outbox row: the
 *   primary key is the guard against a second notice for a redelivered event.
 * - `communication_messages_chat_sync`: the sync-status scan (outbound chat rows with a message
 *   id in pending or sent, oldest first).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('wabot_account_states', (t) => {
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('account_id', 80).notNullable();
    t.text('device_status').nullable();
    t.text('device_detail').nullable();
    t.timestamp('device_checked_at', { useTz: true }).nullable();
    t.text('webhook_status').nullable();
    t.text('webhook_error').nullable();
    t.timestamp('webhook_at', { useTz: true }).nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['tenant_id', 'account_id']);
  });
  await knex.raw(
    `ALTER TABLE wabot_account_states
       ADD CONSTRAINT wabot_account_states_device_check
         CHECK (device_status IS NULL OR device_status IN ('connected', 'disconnected', 'unknown', 'error')),
       ADD CONSTRAINT wabot_account_states_webhook_check
         CHECK (webhook_status IS NULL OR webhook_status IN ('pending', 'registered', 'unsupported', 'failed'))`,
  );

  await knex.schema.createTable('wabot_groups', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 120).notNullable();
    t.text('kind').notNullable();
    t.string('account_id', 80).notNullable();
    t.string('group_id', 200).notNullable();
    t.jsonb('events').notNullable().defaultTo('[]');
    t.boolean('enabled').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at', 'id'], 'wabot_groups_list');
  });
  await knex.raw(
    `ALTER TABLE wabot_groups
       ADD CONSTRAINT wabot_groups_kind_check CHECK (kind IN ('network_operations', 'technicians', 'other')),
       ADD CONSTRAINT wabot_groups_events_check CHECK (jsonb_typeof(events) = 'array')`,
  );

  await knex.schema.createTable('wabot_group_notices', (t) => {
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.bigInteger('event_id').notNullable();
    t.integer('group_id').notNullable().references('id').inTable('wabot_groups').onDelete('CASCADE');
    t.bigInteger('communication_id').nullable().references('id').inTable('communication_messages').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['event_id', 'group_id']);
  });

  await knex.raw(
    `CREATE INDEX communication_messages_chat_sync
       ON communication_messages (tenant_id, occurred_at, id)
       WHERE direction = 'out' AND message_id IS NOT NULL AND status IN ('pending', 'sent')
         AND channel IN ('whatsapp', 'messenger')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS communication_messages_chat_sync');
  await knex.schema.dropTable('wabot_group_notices');
  await knex.schema.dropTable('wabot_groups');
  await knex.schema.dropTable('wabot_account_states');
}
