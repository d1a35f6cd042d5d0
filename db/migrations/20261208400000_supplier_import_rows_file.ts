import type { Knex } from 'knex';

/**
 * Issue 16 benchmark: a finished preview's rows (50,000 rows are about 13 MB of JSON) go to the
 * storage driver as one file, `rows_key` naming it, instead of the `rows` column: writing them to
 * PostgreSQL took 0.5 s and reading them back for the answer another 0.5 s, a file 10-30 ms each.
 * `rows` stays for previews finished before this migration (kept 24 hours).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('supplier_import_previews', (t) => {
    t.text('rows_key');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('supplier_import_previews', (t) => {
    t.dropColumn('rows_key');
  });
}
