import type { Knex } from 'knex';

/**
 * The inventory catalogue (issue 16 item 1), the contract of the two halves of the issue built in
 * parallel: the ledger and requests (items 2-5, 7) and the supplier import (item 6). Both read and
 * write these tables; neither changes their shape without the other.
 * - `inventory_items`: the master items. Fields of admin-api.md "Supplier import item" (name 150,
 *   sku 80, category 100, unit 20, notes 500, sell_price >= 0) plus item_type (goods, material,
 *   device), tracking (`quantity` or `serial`), min_stock, is_active (used records are deactivated
 *   instead of deleted). sku unique per tenant, case-insensitively, when present (the import
 *   matches on lower(sku), else on lower(name)).
 * - `inventory_locations`: warehouse, pop or technician (held by a user: holder_user_id).
 * - `suppliers`: name, contact, phone (E.164 when given), email, address, is_active.
 * - `supplier_items`: the buy price of an item at a supplier (`cost_price`, the import's name),
 *   one row per (supplier, item), upserted by the import; `updated_at` says when it was last set.
 * Quantities are numeric(14,2) (cable in metres with decimals); money numeric(14,2) (lib/money.ts).
 */
export async function up(knex: Knex): Promise<void> {
  const timestamps = (t: Knex.CreateTableBuilder) => {
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  };
  await knex.schema.createTable('inventory_items', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 150).notNullable();
    t.string('sku', 80).nullable();
    t.string('category', 100).nullable();
    t.string('unit', 20).notNullable().defaultTo('pcs');
    t.string('notes', 500).nullable();
    t.text('item_type').notNullable().defaultTo('goods');
    t.text('tracking').notNullable().defaultTo('quantity');
    t.decimal('sell_price', 14, 2).notNullable().defaultTo(0);
    t.decimal('min_stock', 14, 2).notNullable().defaultTo(0);
    t.boolean('is_active').notNullable().defaultTo(true);
    timestamps(t);
    t.index(['tenant_id', 'id'], 'inventory_items_tenant_id');
  });
  await knex.raw(`ALTER TABLE inventory_items
    ADD CONSTRAINT inventory_items_type_check CHECK (item_type IN ('goods', 'material', 'device')),
    ADD CONSTRAINT inventory_items_tracking_check CHECK (tracking IN ('quantity', 'serial')),
    ADD CONSTRAINT inventory_items_prices_check CHECK (sell_price >= 0 AND min_stock >= 0)`);
  await knex.raw(
    `CREATE UNIQUE INDEX inventory_items_tenant_sku_unique ON inventory_items (tenant_id, lower(sku)) WHERE sku IS NOT NULL`,
  );
  await knex.raw(`CREATE INDEX inventory_items_tenant_name ON inventory_items (tenant_id, lower(name))`);

  await knex.schema.createTable('inventory_locations', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 150).notNullable();
    t.text('type').notNullable();
    t.integer('holder_user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('address', 500).nullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    timestamps(t);
    t.index(['tenant_id', 'type'], 'inventory_locations_tenant_type');
  });
  await knex.raw(`ALTER TABLE inventory_locations
    ADD CONSTRAINT inventory_locations_type_check CHECK (type IN ('warehouse', 'pop', 'technician')),
    ADD CONSTRAINT inventory_locations_holder_check CHECK ((type = 'technician') = (holder_user_id IS NOT NULL))`);

  await knex.schema.createTable('suppliers', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 150).notNullable();
    t.string('contact', 150).nullable();
    t.string('phone', 20).nullable();
    t.string('email', 254).nullable();
    t.string('address', 500).nullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    timestamps(t);
    t.index(['tenant_id', 'id'], 'suppliers_tenant_id');
  });

  await knex.schema.createTable('supplier_items', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('supplier_id').notNullable().references('id').inTable('suppliers').onDelete('CASCADE');
    t.integer('item_id').notNullable().references('id').inTable('inventory_items').onDelete('CASCADE');
    t.decimal('cost_price', 14, 2).notNullable().defaultTo(0);
    timestamps(t);
    t.unique(['tenant_id', 'supplier_id', 'item_id'], { indexName: 'supplier_items_unique' });
    t.index(['tenant_id', 'item_id'], 'supplier_items_item');
  });
  await knex.raw(`ALTER TABLE supplier_items ADD CONSTRAINT supplier_items_cost_check CHECK (cost_price >= 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('supplier_items');
  await knex.schema.dropTable('suppliers');
  await knex.schema.dropTable('inventory_locations');
  await knex.schema.dropTable('inventory_items');
}
