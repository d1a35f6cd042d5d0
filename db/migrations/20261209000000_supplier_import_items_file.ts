import type { Knex } from 'knex';

/**
 * Issue 16 benchmark: an import's selected rows (50,000 items are about 5 MB of JSON) go to the
 * storage driver as one file, `items_key` naming it, like a preview's rows (20261208400000):
 * storing them as jsonb in the run row took about 0.4 s of a 3 s import, reading them back in the
 * job as long again. `items` stays, nullable, for imports started before this migration (kept 24
 * hours); a run has one or the other.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('supplier_imports', (t) => {
    t.text('items_key');
    t.jsonb('items').nullable().alter();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('supplier_imports').whereNull('items').delete();
  await knex.schema.alterTable('supplier_imports', (t) => {
    t.dropColumn('items_key');
    t.jsonb('items').notNullable().alter();
  });
}
