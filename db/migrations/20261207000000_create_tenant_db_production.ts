import type { Knex } from 'knex';

/**
 * Issue 15 (shared ground of its parts): `tenants.db_mode`, where a tenant's rows live
 * (`shared_db`, or `tenant_db` after cutover; the master tenant is shown as `shared_db_master`
 * and never moves), and `tenant_db_approvals`, the production approvals recorded against an
 * evidence fingerprint (item 2), used by one cutover (item 3) and rolled back by item 5.
 * An approval is `approved` until used, superseded by a newer one or rolled back; it expires
 * (computed, not stored) when its maintenance window has ended.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.string('db_mode', 20).notNullable().defaultTo('shared_db');
  });
  await knex.raw(
    "ALTER TABLE tenants ADD CONSTRAINT tenants_db_mode_check CHECK (db_mode IN ('shared_db', 'tenant_db'))",
  );
  await knex.schema.createTable('tenant_db_approvals', (t) => {
    t.increments('id').primary();
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.specificType('fingerprint', 'char(64)').notNullable();
    t.string('approver', 190).notNullable();
    t.string('rollback_owner', 190).notNullable();
    t.string('monitoring_owner', 190).notNullable();
    t.text('reason').notNullable();
    t.timestamp('window_start', { useTz: true }).notNullable();
    t.timestamp('window_end', { useTz: true }).notNullable();
    t.string('status', 20).notNullable().defaultTo('approved');
    t.integer('approved_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.integer('cutover_run_id').nullable().references('id').inTable('tenant_db_runs').onDelete('SET NULL');
    t.integer('rollback_run_id').nullable().references('id').inTable('tenant_db_runs').onDelete('SET NULL');
    t.timestamp('used_at', { useTz: true }).nullable();
    t.timestamp('superseded_at', { useTz: true }).nullable();
    t.timestamp('rolled_back_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'id']);
  });
  await knex.raw(
    "ALTER TABLE tenant_db_approvals ADD CONSTRAINT tenant_db_approvals_status_check CHECK (status IN ('approved', 'used', 'superseded', 'rolled_back'))",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('tenant_db_approvals');
  await knex.raw('ALTER TABLE tenants DROP CONSTRAINT IF EXISTS tenants_db_mode_check');
  await knex.schema.alterTable('tenants', (t) => {
    t.dropColumn('db_mode');
  });
}
