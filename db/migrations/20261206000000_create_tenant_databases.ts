import type { Knex } from 'knex';

/**
 * Issue 14 items 1-2: a tenant's own database (`tenant_databases`, one row per tenant; the role
 * password sealed AES-256-GCM under APP_KEY) and its runs (`tenant_db_runs`: at most one unfinished
 * run per tenant, a partial unique index).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenant_databases', (t) => {
    t.integer('tenant_id').primary().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('status', 20).notNullable().defaultTo('none');
    t.string('database_name', 63).nullable();
    t.string('role_name', 63).nullable();
    t.string('server_host', 255).nullable();
    t.integer('server_port').nullable();
    t.string('subdomain', 63).nullable();
    t.string('domain', 255).nullable();
    t.string('db_user_host', 64).nullable();
    t.text('role_password_enc').nullable();
    t.bigInteger('role_oid').nullable();
    t.bigInteger('database_oid').nullable();
    t.boolean('use_tenant_db_read').notNullable().defaultTo(false);
    t.timestamp('schema_run_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    "ALTER TABLE tenant_databases ADD CONSTRAINT tenant_databases_status_check CHECK (status IN ('none', 'pilot_created', 'schema_migrated', 'data_copied', 'production'))",
  );
  await knex.schema.createTable('tenant_db_runs', (t) => {
    t.increments('id').primary();
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('kind', 30).notNullable();
    t.string('status', 20).notNullable().defaultTo('queued');
    t.jsonb('progress').nullable();
    t.integer('requested_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.jsonb('result').nullable();
    t.text('error').nullable();
    t.jsonb('checkpoint').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.index(['tenant_id', 'id']);
  });
  await knex.raw(
    "CREATE UNIQUE INDEX tenant_db_runs_one_unfinished ON tenant_db_runs (tenant_id) WHERE status IN ('queued', 'running')",
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('tenant_db_runs');
  await knex.schema.dropTableIfExists('tenant_databases');
}
