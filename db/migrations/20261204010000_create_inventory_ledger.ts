import type { Knex } from 'knex';

/**
 * The inventory ledger (issue 16 item 2, 3): stock per (item, location), the append-only mutation
 * ledger, serial numbers, stock-in purchases and stock counts.
 * - `inventory_stock`: quantity numeric(14,2) >= 0 per (tenant, item, location); a change locks its
 *   rows in (item_id, location_id) order and decrements `WHERE quantity >= n` (api/inventory/ledger.ts).
 * - `inventory_mutations`: one row per change of one stock row, `quantity` signed (in > 0, out < 0),
 *   so sum(quantity) per (item, location) = inventory_stock.quantity; `balance_after` the stock
 *   after it. A trigger refuses UPDATE and DELETE (a tenant's deletion cascades through).
 * - `inventory_serials`: serial numbers of `serial` items, unique per tenant (case-insensitively):
 *   in_stock (at location_id), issued, written_off.
 * - `inventory_purchases`: a stock-in's purchase (amount = quantity x unit_cost, exact), recorded
 *   with finance_status `pending` for the finance issue to book (expense or supplier payable).
 * - `inventory_counts` + `inventory_count_lines`: a stock count of one location and its adjustments.
 */
export async function up(knex: Knex): Promise<void> {
  const tenant = (t: Knex.CreateTableBuilder) =>
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
  const timestamps = (t: Knex.CreateTableBuilder) => {
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  };
  const item = (t: Knex.CreateTableBuilder) =>
    t.integer('item_id').notNullable().references('id').inTable('inventory_items').onDelete('CASCADE');
  const location = (t: Knex.CreateTableBuilder, name = 'location_id') =>
    t.integer(name).references('id').inTable('inventory_locations').onDelete('CASCADE');
  const user = (t: Knex.CreateTableBuilder, name: string) =>
    t.integer(name).nullable().references('id').inTable('users').onDelete('SET NULL');

  await knex.schema.createTable('inventory_stock', (t) => {
    t.increments('id');
    tenant(t);
    item(t);
    location(t).notNullable();
    t.decimal('quantity', 14, 2).notNullable().defaultTo(0);
    timestamps(t);
    t.unique(['tenant_id', 'item_id', 'location_id'], { indexName: 'inventory_stock_unique' });
    t.index(['tenant_id', 'location_id'], 'inventory_stock_location');
  });
  await knex.raw(`ALTER TABLE inventory_stock ADD CONSTRAINT inventory_stock_quantity_check CHECK (quantity >= 0)`);

  await knex.schema.createTable('inventory_serials', (t) => {
    t.increments('id');
    tenant(t);
    item(t);
    t.string('serial_number', 100).notNullable();
    t.text('status').notNullable().defaultTo('in_stock');
    location(t).nullable();
    timestamps(t);
    t.index(['tenant_id', 'item_id', 'location_id', 'status'], 'inventory_serials_item_location');
  });
  await knex.raw(`ALTER TABLE inventory_serials
    ADD CONSTRAINT inventory_serials_status_check CHECK (status IN ('in_stock', 'issued', 'written_off')),
    ADD CONSTRAINT inventory_serials_location_check CHECK ((status = 'in_stock') = (location_id IS NOT NULL))`);
  await knex.raw(
    `CREATE UNIQUE INDEX inventory_serials_tenant_serial_unique ON inventory_serials (tenant_id, upper(serial_number))`,
  );

  await knex.schema.createTable('inventory_mutations', (t) => {
    t.bigIncrements('id');
    tenant(t);
    item(t);
    location(t).notNullable();
    t.text('type').notNullable();
    t.text('direction').notNullable();
    t.decimal('quantity', 14, 2).notNullable();
    t.decimal('balance_after', 14, 2).notNullable();
    t.jsonb('serials').notNullable().defaultTo('[]');
    t.decimal('unit_cost', 14, 2).nullable();
    t.text('reference_type').nullable();
    t.integer('reference_id').nullable();
    t.string('note', 500).nullable();
    user(t, 'created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at', 'id'], 'inventory_mutations_tenant_created');
    t.index(['tenant_id', 'item_id', 'location_id'], 'inventory_mutations_item_location');
  });
  await knex.raw(`ALTER TABLE inventory_mutations
    ADD CONSTRAINT inventory_mutations_type_check
      CHECK (type IN ('stock_in', 'stock_out', 'transfer', 'return', 'adjustment')),
    ADD CONSTRAINT inventory_mutations_direction_check
      CHECK ((direction = 'in' AND quantity > 0) OR (direction = 'out' AND quantity < 0)),
    ADD CONSTRAINT inventory_mutations_balance_check CHECK (balance_after >= 0)`);
  // append-only: UPDATE and DELETE are refused, except the rows of a tenant being deleted (cascade)
  await knex.raw(`CREATE FUNCTION inventory_mutations_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND NOT EXISTS (SELECT 1 FROM tenants WHERE id = OLD.tenant_id) THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'inventory_mutations is append-only: % refused', TG_OP USING ERRCODE = 'raise_exception';
    END $$`);
  await knex.raw(`CREATE TRIGGER inventory_mutations_append_only BEFORE UPDATE OR DELETE ON inventory_mutations
    FOR EACH ROW EXECUTE FUNCTION inventory_mutations_append_only()`);

  await knex.schema.createTable('inventory_purchases', (t) => {
    t.increments('id');
    tenant(t);
    item(t);
    location(t).notNullable();
    t.integer('supplier_id').nullable().references('id').inTable('suppliers').onDelete('SET NULL');
    t.decimal('quantity', 14, 2).notNullable();
    t.decimal('unit_cost', 14, 2).notNullable();
    t.decimal('amount', 14, 2).notNullable();
    t.boolean('finance_paid').notNullable().defaultTo(false);
    t.integer('finance_account_id').nullable();
    t.text('finance_status').notNullable().defaultTo('pending');
    t.bigInteger('mutation_id').notNullable().references('id').inTable('inventory_mutations');
    user(t, 'created_by');
    timestamps(t);
    t.index(['tenant_id', 'created_at', 'id'], 'inventory_purchases_tenant_created');
  });
  await knex.raw(`ALTER TABLE inventory_purchases
    ADD CONSTRAINT inventory_purchases_amounts_check CHECK (quantity > 0 AND unit_cost >= 0 AND amount >= 0),
    ADD CONSTRAINT inventory_purchases_status_check CHECK (finance_status IN ('pending', 'booked')),
    ADD CONSTRAINT inventory_purchases_paid_check CHECK (NOT finance_paid OR finance_account_id IS NOT NULL)`);

  await knex.schema.createTable('inventory_counts', (t) => {
    t.increments('id');
    tenant(t);
    location(t).notNullable();
    t.string('reason', 500).notNullable();
    user(t, 'created_by');
    timestamps(t);
    t.index(['tenant_id', 'created_at', 'id'], 'inventory_counts_tenant_created');
  });
  await knex.schema.createTable('inventory_count_lines', (t) => {
    t.increments('id');
    tenant(t);
    t.integer('count_id').notNullable().references('id').inTable('inventory_counts').onDelete('CASCADE');
    item(t);
    t.decimal('expected_quantity', 14, 2).notNullable();
    t.decimal('counted_quantity', 14, 2).notNullable();
    t.decimal('difference', 14, 2).notNullable();
    t.jsonb('written_off_serials').notNullable().defaultTo('[]');
    t.bigInteger('mutation_id').nullable().references('id').inTable('inventory_mutations');
    t.unique(['count_id', 'item_id'], { indexName: 'inventory_count_lines_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('inventory_count_lines');
  await knex.schema.dropTable('inventory_counts');
  await knex.schema.dropTable('inventory_purchases');
  await knex.raw('DROP TRIGGER inventory_mutations_append_only ON inventory_mutations');
  await knex.schema.dropTable('inventory_mutations');
  await knex.raw('DROP FUNCTION inventory_mutations_append_only()');
  await knex.schema.dropTable('inventory_serials');
  await knex.schema.dropTable('inventory_stock');
}
