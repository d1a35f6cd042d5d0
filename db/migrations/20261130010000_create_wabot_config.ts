import type { Knex } from 'knex';

/**
 * Issue 10 item 2: the chat-bot configuration (document 2 "Chat-bot configuration").
 * - `wabot_settings`: one row per tenant (unique tenant_id): the top-level provider, its sealed
 *   token and secret key (wa_token, wa_secret_key; db/wabot-secrets.ts), wa_number, the settings'
 *   switches and limits, and the sealed per-tenant 256-bit secret of the inbound webhook URL.
 * - `wabot_accounts`: the sending accounts (settings.accounts), at most 20 per tenant (checked by
 *   the API), unique by (tenant_id, account_id), ordered by `position`. Their token and secret key
 *   are sealed; a null limit means "the settings' limit".
 * Bounds are CHECK constraints as well, so a row written around the API still holds the spec's ranges.
 */
export async function up(knex: Knex): Promise<void> {
  const providers = `('wablas', 'fonnte', 'ruangwa', 'waha', 'messenger', 'watzap', 'starsender')`;
  await knex.schema.createTable('wabot_settings', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().unique().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('provider').notNullable();
    t.text('wa_token_enc').nullable();
    t.text('wa_secret_key_enc').nullable();
    t.string('wa_number', 200).nullable();
    t.boolean('enabled').notNullable().defaultTo(false);
    t.boolean('auto_reply').notNullable().defaultTo(false);
    t.string('base_url', 2048).nullable();
    t.boolean('ignore_groups').notNullable().defaultTo(true);
    t.boolean('webhook_auto_register').notNullable().defaultTo(false);
    t.boolean('reply_unknown_customers').notNullable().defaultTo(false);
    t.integer('max_messages_per_minute').notNullable().defaultTo(3);
    t.integer('message_delay_seconds').notNullable().defaultTo(10);
    t.text('routing_strategy').notNullable().defaultTo('auto');
    t.text('webhook_secret_enc').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE wabot_settings
       ADD CONSTRAINT wabot_settings_provider_check CHECK (provider IN ${providers}),
       ADD CONSTRAINT wabot_settings_limits_check
         CHECK (max_messages_per_minute BETWEEN 0 AND 1000 AND message_delay_seconds BETWEEN 0 AND 3600),
       ADD CONSTRAINT wabot_settings_routing_check CHECK (routing_strategy IN ('auto'))`,
  );

  await knex.schema.createTable('wabot_accounts', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('account_id', 80).notNullable();
    t.integer('position').notNullable();
    t.text('provider').notNullable();
    t.string('label', 190).notNullable().defaultTo('');
    t.text('token_enc').nullable();
    t.text('secret_key_enc').nullable();
    t.string('number', 200).nullable();
    t.string('base_url', 2048).nullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.integer('weight').notNullable().defaultTo(1);
    t.integer('max_messages_per_minute').nullable();
    t.integer('message_delay_seconds').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'account_id']);
    t.index(['tenant_id', 'position'], 'wabot_accounts_tenant_position');
  });
  await knex.raw(
    `ALTER TABLE wabot_accounts
       ADD CONSTRAINT wabot_accounts_provider_check CHECK (provider IN ${providers}),
       ADD CONSTRAINT wabot_accounts_id_check CHECK (account_id ~ '^[A-Za-z0-9_-]{1,80}$'),
       ADD CONSTRAINT wabot_accounts_weight_check CHECK (weight BETWEEN 1 AND 100),
       ADD CONSTRAINT wabot_accounts_limits_check
         CHECK ((max_messages_per_minute IS NULL OR max_messages_per_minute BETWEEN 0 AND 1000)
            AND (message_delay_seconds IS NULL OR message_delay_seconds BETWEEN 0 AND 3600))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('wabot_accounts');
  await knex.schema.dropTable('wabot_settings');
}
