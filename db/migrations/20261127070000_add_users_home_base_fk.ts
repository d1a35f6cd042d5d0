import type { Knex } from 'knex';

/**
 * Issue 8 item 1 + item 3: users.home_base_id (added by 20261127000000 without a key, because
 * home_bases did not exist yet) now references home_bases, ON DELETE SET NULL: a technician whose
 * base is removed keeps the account. Ids that point nowhere (none can: the API refused every id
 * before home_bases existed) are cleared first so the key can be added.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `UPDATE users u SET home_base_id = NULL
      WHERE home_base_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM home_bases h WHERE h.id = u.home_base_id)`,
  );
  await knex.schema.alterTable('users', (t) => {
    t.foreign('home_base_id', 'users_home_base_id_foreign').references('home_bases.id').onDelete('SET NULL');
    t.index(['home_base_id'], 'users_home_base_id_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropIndex(['home_base_id'], 'users_home_base_id_index');
    t.dropForeign(['home_base_id'], 'users_home_base_id_foreign');
  });
}
