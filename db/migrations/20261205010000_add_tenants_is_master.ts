import type { Knex } from 'knex';

/**
 * Issues 13 and 14: `tenants.is_master`, the platform's own (master) tenant. At most one tenant is the
 * master (a partial unique index). The master's mailbox lives at its own domain (issue 13 item 6), its
 * database is always the shared one (issue 14 `shared_db_master`).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.boolean('is_master').notNullable().defaultTo(false);
  });
  await knex.raw('CREATE UNIQUE INDEX tenants_one_master ON tenants ((true)) WHERE is_master');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS tenants_one_master');
  await knex.schema.alterTable('tenants', (t) => {
    t.dropColumn('is_master');
  });
}
