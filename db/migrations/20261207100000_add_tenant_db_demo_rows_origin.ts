import type { Knex } from 'knex';

/**
 * Issue 15 items 6 and 7: where a `tenant_db_demo_rows` row came from. `origin` is `demo_seed`
 * (item 7: a DEMO- row written into the tenant database only) or `dual_write` (item 6: a DEMO- row
 * written into both databases); `shared_hash` and `tenant_hash` are the md5 of the row's text on
 * each side after the dual write (same columns as the copy's checksum), null for demo seed rows;
 * `run_id` is the run that wrote it. The gate's `dual_write_rolled_back` looks for `dual_write` rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenant_db_demo_rows', (t) => {
    t.string('origin', 20).notNullable().defaultTo('demo_seed');
    t.string('shared_hash', 32).nullable();
    t.string('tenant_hash', 32).nullable();
    t.integer('run_id').nullable().references('id').inTable('tenant_db_runs').onDelete('SET NULL');
  });
  await knex.raw(
    "ALTER TABLE tenant_db_demo_rows ADD CONSTRAINT tenant_db_demo_rows_origin_check CHECK (origin IN ('demo_seed', 'dual_write'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE tenant_db_demo_rows DROP CONSTRAINT IF EXISTS tenant_db_demo_rows_origin_check');
  await knex.schema.alterTable('tenant_db_demo_rows', (t) => {
    t.dropColumn('run_id');
    t.dropColumn('tenant_hash');
    t.dropColumn('shared_hash');
    t.dropColumn('origin');
  });
}
