import type { Knex } from 'knex';

/**
 * Inventory requests (issue 16 item 4) and the home-base mapping (item 5).
 * - `inventory_requests`: IR-000001 per tenant (db/numbering.ts), type stock_out / transfer /
 *   return, the eight statuses of admin-api.md, the source and destination locations, an optional
 *   reference (sales_order, ticket, schedule), who asked and who decided.
 * - `inventory_request_items`: the items (one row per item, no duplicates); `serials` the serial
 *   numbers that moved when the request was processed.
 * - `inventory_request_history`: one row per change (created, edited, each transition).
 * - inventory_mutations.request_item_id with a unique (request_item_id, direction): a request item
 *   moves out (and, for a transfer or a return, in) at most once, whatever races.
 * - `home_base_inventory_locations`: the official mapping of a home base to its warehouse or POP
 *   locations (admin-api.md "home base mapping").
 */
export async function up(knex: Knex): Promise<void> {
  const tenant = (t: Knex.CreateTableBuilder) =>
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
  const user = (t: Knex.CreateTableBuilder, name: string) =>
    t.integer(name).nullable().references('id').inTable('users').onDelete('SET NULL');
  const at = (t: Knex.CreateTableBuilder, name: string) => t.timestamp(name, { useTz: true }).nullable();

  await knex.schema.createTable('inventory_requests', (t) => {
    t.increments('id');
    tenant(t);
    t.string('number', 20).notNullable();
    t.text('type').notNullable();
    t.text('status').notNullable();
    t.integer('source_location_id').notNullable().references('id').inTable('inventory_locations');
    t.integer('destination_location_id').nullable().references('id').inTable('inventory_locations');
    t.text('reference_type').nullable();
    t.integer('reference_id').nullable();
    t.string('note', 1000).nullable();
    t.string('reason', 1000).nullable();
    user(t, 'requested_by');
    user(t, 'decided_by');
    at(t, 'decided_at');
    user(t, 'processed_by');
    at(t, 'processed_at');
    at(t, 'completed_at');
    at(t, 'cancelled_at');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'number'], { indexName: 'inventory_requests_number_unique' });
    t.index(['tenant_id', 'created_at', 'id'], 'inventory_requests_tenant_created');
    t.index(['tenant_id', 'status'], 'inventory_requests_tenant_status');
    t.index(['tenant_id', 'requested_by'], 'inventory_requests_tenant_requester');
  });
  await knex.raw(`ALTER TABLE inventory_requests
    ADD CONSTRAINT inventory_requests_type_check CHECK (type IN ('stock_out', 'transfer', 'return')),
    ADD CONSTRAINT inventory_requests_status_check CHECK (status IN
      ('draft', 'pending', 'deferred', 'approved', 'rejected', 'processing', 'completed', 'cancelled')),
    ADD CONSTRAINT inventory_requests_reference_check CHECK (
      (reference_type IS NULL) = (reference_id IS NULL)
      AND (reference_type IS NULL OR reference_type IN ('sales_order', 'ticket', 'schedule'))),
    ADD CONSTRAINT inventory_requests_destination_check CHECK (
      (type = 'stock_out') = (destination_location_id IS NULL)
      AND destination_location_id IS DISTINCT FROM source_location_id)`);

  await knex.schema.createTable('inventory_request_items', (t) => {
    t.increments('id');
    tenant(t);
    t.integer('request_id').notNullable().references('id').inTable('inventory_requests').onDelete('CASCADE');
    t.integer('item_id').notNullable().references('id').inTable('inventory_items');
    t.decimal('quantity', 14, 2).notNullable();
    t.string('note', 500).nullable();
    t.jsonb('serials').notNullable().defaultTo('[]');
    t.unique(['request_id', 'item_id'], { indexName: 'inventory_request_items_unique' });
  });
  await knex.raw(
    `ALTER TABLE inventory_request_items ADD CONSTRAINT inventory_request_items_quantity_check CHECK (quantity > 0)`,
  );

  await knex.schema.createTable('inventory_request_history', (t) => {
    t.bigIncrements('id');
    tenant(t);
    t.integer('request_id').notNullable().references('id').inTable('inventory_requests').onDelete('CASCADE');
    t.text('action').notNullable();
    t.text('from_status').nullable();
    t.text('to_status').notNullable();
    t.string('reason', 1000).nullable();
    user(t, 'user_id');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['request_id', 'id'], 'inventory_request_history_request');
  });

  await knex.schema.alterTable('inventory_mutations', (t) => {
    t.integer('request_item_id').nullable().references('id').inTable('inventory_request_items');
  });
  await knex.raw(`CREATE UNIQUE INDEX inventory_mutations_request_item_unique
    ON inventory_mutations (request_item_id, direction) WHERE request_item_id IS NOT NULL`);

  await knex.schema.createTable('home_base_inventory_locations', (t) => {
    tenant(t);
    t.integer('home_base_id').notNullable().references('id').inTable('home_bases').onDelete('CASCADE');
    t.integer('location_id').notNullable().references('id').inTable('inventory_locations').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['home_base_id', 'location_id']);
    t.index(['tenant_id', 'location_id'], 'home_base_inventory_locations_location');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('home_base_inventory_locations');
  await knex.raw('DROP INDEX inventory_mutations_request_item_unique');
  await knex.raw('ALTER TABLE inventory_mutations DROP COLUMN request_item_id');
  await knex.schema.dropTable('inventory_request_history');
  await knex.schema.dropTable('inventory_request_items');
  await knex.schema.dropTable('inventory_requests');
}
