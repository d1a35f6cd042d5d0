import type { Knex } from 'knex';

/**
 * Issue 14 item 8: `tenant_db_demo_rows`, the rows written only into a tenant's pilot database by
 * the demo flow (issue 13 fills it). The reconciliation report counts a tenant-only row whose key
 * starts with `DEMO-` and that is recorded here as `accepted_pilot_extra`; any other tenant-only row
 * is blocking.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenant_db_demo_rows', (t) => {
    t.increments('id').primary();
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('table_name', 63).notNullable();
    t.bigInteger('row_id').notNullable();
    t.string('demo_key', 100).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'table_name', 'row_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('tenant_db_demo_rows');
}
