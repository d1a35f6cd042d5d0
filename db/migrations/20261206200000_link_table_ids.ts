import type { Knex } from 'knex';

/**
 * Issue 14 (finishing): the link tables `user_roles` and `role_permissions` get a surrogate `id`
 * (serial primary key) so the tenant-db data copy can move them like every other table (batches by
 * id, `ON CONFLICT (id) DO UPDATE`, checkpoint, count and checksum in id order). Their pair stays
 * unique (`user_roles_user_role_unique`, `role_permissions_role_permission_unique`): inserts,
 * `ON CONFLICT (role_id, permission_id)` and the joins of the app are unchanged.
 */
const TABLES = [
  { table: 'user_roles', pair: ['user_id', 'role_id'], unique: 'user_roles_user_role_unique' },
  { table: 'role_permissions', pair: ['role_id', 'permission_id'], unique: 'role_permissions_role_permission_unique' },
];

export async function up(knex: Knex): Promise<void> {
  for (const { table, pair, unique } of TABLES) {
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_pkey`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${unique} UNIQUE (${pair.join(', ')})`);
    await knex.raw(`ALTER TABLE ${table} ADD COLUMN id serial`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (id)`);
  }
}

/** Reverts up(): the pair is the primary key again. */
export async function down(knex: Knex): Promise<void> {
  for (const { table, pair, unique } of TABLES) {
    await knex.raw(`ALTER TABLE ${table} DROP COLUMN id`);
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${unique}`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_pkey PRIMARY KEY (${pair.join(', ')})`);
  }
}
