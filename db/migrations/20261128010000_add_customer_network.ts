import type { Knex } from 'knex';

/**
 * Customers on the network (issue 8 item 2).
 * - customers gain the admin fields: `nas_id` (the NAS the customer connects through, FK nas,
 *   SET NULL), `pppoe_username` (unique per tenant in any case: index on lower()),
 *   `pppoe_password_enc` (sealed with APP_KEY, db/credentials.ts; never sent to a client),
 *   `suspend_reason` (manual | overdue, set only while suspended), `status_reason` (the free text of
 *   the last status change) and `status_changed_at`;
 * - the network sync state of the customer-network job: `network_version` (from the sequence
 *   `customer_network_version_seq`, taken by every network-relevant change: a sequence is never
 *   rolled back, so a version of a rolled-back change is never handed out again and a job id
 *   `customer-network-<tenant>-<customer>-v<version>` is never reused), `network_sync_status`
 *   (none: nothing to push; pending; synced; failed), `network_state` (what the NAS holds after the
 *   last push: active, isolated, removed), `network_error` (a fixed, safe text), `network_requested_at`
 *   (when the pending version was asked for; the sweep re-requests those older than 5 minutes),
 *   `network_synced_at`, and `network_nas_id` / `network_username`, the session the last push left
 *   on a NAS (so that a move to another NAS or a new username removes the old session first);
 * - indexes for the admin list filters package_id and nas_id (newest first) and the sweep;
 * - the tables of the `fake` network driver (jobs/adapters/network/fake.ts): `network_fake_sessions`
 *   (what the fake NAS holds per username) and `network_fake_failures` (failures injected per NAS
 *   for tests and the demo: kind timeout, server_error, auth or unknown_profile, `remaining` calls
 *   to fail, null = every call).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE customer_network_version_seq AS bigint');
  await knex.schema.alterTable('customers', (t) => {
    t.integer('nas_id').nullable().references('id').inTable('nas').onDelete('SET NULL');
    t.string('pppoe_username', 64).nullable();
    t.text('pppoe_password_enc').nullable();
    t.string('suspend_reason', 20).nullable();
    t.string('status_reason', 500).nullable();
    t.timestamp('status_changed_at', { useTz: true }).nullable();
    t.bigInteger('network_version').notNullable().defaultTo(0);
    t.string('network_sync_status', 10).notNullable().defaultTo('none');
    t.string('network_state', 10).nullable();
    t.string('network_error', 190).nullable();
    t.timestamp('network_requested_at', { useTz: true }).nullable();
    t.timestamp('network_synced_at', { useTz: true }).nullable();
    t.integer('network_nas_id').nullable().references('id').inTable('nas').onDelete('SET NULL');
    t.string('network_username', 64).nullable();
  });
  await knex.raw(`ALTER TABLE customers
    ADD CONSTRAINT customers_suspend_reason_check CHECK (suspend_reason IN ('manual', 'overdue')),
    ADD CONSTRAINT customers_billing_day_check CHECK (billing_day BETWEEN 1 AND 28),
    ADD CONSTRAINT customers_network_sync_status_check
      CHECK (network_sync_status IN ('none', 'pending', 'synced', 'failed')),
    ADD CONSTRAINT customers_network_state_check CHECK (network_state IN ('active', 'isolated', 'removed'))`);
  await knex.raw(
    `CREATE UNIQUE INDEX customers_tenant_pppoe_username ON customers (tenant_id, lower(pppoe_username))
     WHERE pppoe_username IS NOT NULL`,
  );
  await knex.raw(
    `CREATE INDEX customers_tenant_package_recent ON customers (tenant_id, package_id, created_at DESC, id DESC)`,
  );
  await knex.raw(
    `CREATE INDEX customers_tenant_nas_recent ON customers (tenant_id, nas_id, created_at DESC, id DESC)
     WHERE nas_id IS NOT NULL`,
  );
  await knex.raw(
    `CREATE INDEX customers_network_pending ON customers (network_requested_at) WHERE network_sync_status = 'pending'`,
  );

  await knex.schema.createTable('network_fake_sessions', (t) => {
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('nas_id').notNullable().references('id').inTable('nas').onDelete('CASCADE');
    t.string('username', 64).notNullable();
    t.string('state', 10).notNullable();
    t.string('profile', 190).nullable();
    t.string('service_type', 20).notNullable();
    t.string('mac_address', 17).nullable();
    t.string('password_sha256', 64).nullable();
    t.bigInteger('version').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['nas_id', 'username']);
    t.index(['tenant_id', 'nas_id'], 'network_fake_sessions_tenant_nas');
  });
  await knex.raw(
    `ALTER TABLE network_fake_sessions ADD CONSTRAINT network_fake_sessions_state_check CHECK (state IN ('active', 'isolated'))`,
  );
  await knex.schema.createTable('network_fake_failures', (t) => {
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('nas_id').primary().references('id').inTable('nas').onDelete('CASCADE');
    t.string('kind', 20).notNullable();
    t.integer('remaining').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE network_fake_failures ADD CONSTRAINT network_fake_failures_kind_check
       CHECK (kind IN ('timeout', 'server_error', 'auth', 'unknown_profile'))`,
  );
}

/** Reverts up(). */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('network_fake_failures');
  await knex.schema.dropTableIfExists('network_fake_sessions');
  await knex.raw('DROP INDEX IF EXISTS customers_network_pending');
  await knex.raw('DROP INDEX IF EXISTS customers_tenant_nas_recent');
  await knex.raw('DROP INDEX IF EXISTS customers_tenant_package_recent');
  await knex.raw('DROP INDEX IF EXISTS customers_tenant_pppoe_username');
  await knex.raw(`ALTER TABLE customers
    DROP CONSTRAINT IF EXISTS customers_network_state_check,
    DROP CONSTRAINT IF EXISTS customers_network_sync_status_check,
    DROP CONSTRAINT IF EXISTS customers_billing_day_check,
    DROP CONSTRAINT IF EXISTS customers_suspend_reason_check`);
  await knex.schema.alterTable('customers', (t) => {
    for (const c of [
      'network_username',
      'network_nas_id',
      'network_synced_at',
      'network_requested_at',
      'network_error',
      'network_state',
      'network_sync_status',
      'network_version',
      'status_changed_at',
      'status_reason',
      'suspend_reason',
      'pppoe_password_enc',
      'pppoe_username',
      'nas_id',
    ])
      t.dropColumn(c);
  });
  await knex.raw('DROP SEQUENCE IF EXISTS customer_network_version_seq');
}
