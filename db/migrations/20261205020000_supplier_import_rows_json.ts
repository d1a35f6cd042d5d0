import type { Knex } from 'knex';

/**
 * Issue 16 benchmark: the preview rows and the import items are stored as `json` (text, checked for
 * syntax) instead of `jsonb`. They are written once and read whole, never queried inside; converting
 * 50,000 rows (13 MB) to jsonb took 2-4 s of the preview, `json` 0.5 s.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE supplier_import_previews ALTER COLUMN rows TYPE json USING rows::json');
  await knex.raw('ALTER TABLE supplier_imports ALTER COLUMN items TYPE json USING items::json');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE supplier_import_previews ALTER COLUMN rows TYPE jsonb USING rows::jsonb');
  await knex.raw('ALTER TABLE supplier_imports ALTER COLUMN items TYPE jsonb USING items::jsonb');
}
