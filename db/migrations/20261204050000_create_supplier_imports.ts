import type { Knex } from 'knex';

/**
 * Supplier price-list import runs (issue 16 item 6): the state of a `parse` job (a preview) and of
 * an `apply` job (an import), polled by the API and kept 24 hours (`expires_at`; expired rows are
 * removed when the tenant starts another run and are no longer shown).
 * - `supplier_import_previews`: the uploaded file (`file_key` in the storage driver until the parse
 *   finished), then `counts` and `rows` (jsonb, at most 50,000 rows), or `error` (the reason the
 *   file was refused: 422 errors.file).
 * - `supplier_imports`: the selected rows to apply (`items`, jsonb), then `result`
 *   ({created, updated, skipped}) or `error`.
 * status: queued -> running -> completed | failed.
 */
export async function up(knex: Knex): Promise<void> {
  for (const table of ['supplier_import_previews', 'supplier_imports']) {
    await knex.schema.createTable(table, (t) => {
      t.increments('id');
      t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
      t.integer('supplier_id').notNullable().references('id').inTable('suppliers').onDelete('CASCADE');
      t.text('status').notNullable().defaultTo('queued');
      if (table === 'supplier_import_previews') {
        t.text('file_key').nullable();
        t.string('file_name', 255).nullable();
        t.bigInteger('file_size').notNullable().defaultTo(0);
        t.jsonb('counts').nullable();
        t.jsonb('rows').nullable();
      } else {
        t.jsonb('items').notNullable();
        t.jsonb('result').nullable();
      }
      t.text('error').nullable();
      t.integer('created_by').nullable().references('id').inTable('users').onDelete('SET NULL');
      t.timestamp('created_at', { useTz: true }).notNullable();
      t.timestamp('finished_at', { useTz: true }).nullable();
      t.timestamp('expires_at', { useTz: true }).notNullable();
      t.index(['tenant_id', 'expires_at'], `${table}_tenant_expires`);
    });
    await knex.raw(
      `ALTER TABLE ${table} ADD CONSTRAINT ${table}_status_check CHECK (status IN ('queued', 'running', 'completed', 'failed'))`,
    );
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('supplier_imports');
  await knex.schema.dropTable('supplier_import_previews');
}
