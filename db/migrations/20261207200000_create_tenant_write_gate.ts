import type { Knex } from 'knex';

/**
 * Issue 15 items 3 and 4 (cutover): `tenant_write_gate(tenant, wait_ms)`, the one statement a
 * TenantScope write transaction runs first (db/tenant-routing.ts): it takes
 * `pg_advisory_xact_lock_shared(15015, tenant)` waiting at most `wait_ms` (lock_timeout, restored
 * afterwards; SQLSTATE 55P03 past it) and answers the tenant's `tenants.db_mode` read under that
 * lock. The cutover and its rollback hold the same key exclusively. Created in the shared database
 * and, by the schema run and bin/release.ts, in every tenant database.
 *
 * `tenant_db_id_blocks`: the id blocks of 1,000,000 a cut-over tenant's sequences were given from
 * the shared sequences (item 3 e), one row per table and block, the newest the one in use.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION tenant_write_gate(p_tenant integer, p_wait_ms integer) RETURNS text
    LANGUAGE plpgsql AS $$
    DECLARE
      prev text := current_setting('lock_timeout');
      mode text;
    BEGIN
      PERFORM set_config('lock_timeout', p_wait_ms::text, true);
      PERFORM pg_advisory_xact_lock_shared(15015, p_tenant);
      PERFORM set_config('lock_timeout', prev, true);
      SELECT t.db_mode INTO mode FROM tenants t WHERE t.id = p_tenant;
      RETURN mode;
    END $$`);
  await knex.schema.createTable('tenant_db_id_blocks', (t) => {
    t.bigIncrements('id').primary();
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('table_name', 63).notNullable();
    t.bigInteger('block_start').notNullable();
    t.bigInteger('block_end').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'table_name', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('tenant_db_id_blocks');
  await knex.raw('DROP FUNCTION IF EXISTS tenant_write_gate(integer, integer)');
}
