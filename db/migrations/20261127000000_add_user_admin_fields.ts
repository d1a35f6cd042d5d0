import type { Knex } from 'knex';

/**
 * Users and roles of the admin API (issue 8 item 1):
 * - users.is_active (default true): an inactive user cannot log in and its sessions are revoked;
 *   users.phone (E.164, checked by the API); users.home_base_id, nullable and without a foreign key
 *   for now: home_bases comes with issue 8 item 3, whose migration adds the key (docs/decisions.md).
 * - users (tenant_id, created_at, id): the list order of GET /api/users.
 * - A custom role (tenant_id set) may not take a built-in role's name in any case ("super admin"):
 *   permission checks and the reopen rule look at role names, so a look-alike must not exist.
 * - Custom role names are unique per tenant case-insensitively ("Billing" and "billing" are one).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.boolean('is_active').notNullable().defaultTo(true);
    t.string('phone', 20).nullable();
    t.integer('home_base_id').nullable();
  });
  await knex.raw(`CREATE INDEX users_tenant_recent ON users (tenant_id, created_at DESC, id DESC)`);
  await knex.raw(
    `ALTER TABLE roles ADD CONSTRAINT roles_custom_not_builtin
       CHECK (tenant_id IS NULL OR lower(name) NOT IN ('super admin', 'administrator', 'technician', 'staff'))`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX roles_tenant_lower_name_unique ON roles (tenant_id, lower(name)) WHERE tenant_id IS NOT NULL`,
  );
}

/** Reverts up(). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS roles_tenant_lower_name_unique');
  await knex.raw('ALTER TABLE roles DROP CONSTRAINT IF EXISTS roles_custom_not_builtin');
  await knex.raw('DROP INDEX IF EXISTS users_tenant_recent');
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('home_base_id');
    t.dropColumn('phone');
    t.dropColumn('is_active');
  });
}
