import type { Knex } from 'knex';

/**
 * Issue 12 item 8: the keystores the Android app builder signs with, one table for both kinds.
 * - `kind = 'release'`: the keystore of one app type of a tenant (uploaded or generated), at most one
 *   per (tenant_id, app_type) (partial unique index).
 * - `kind = 'debug'`: the tenant's debug key, generated once by keytool on the first debug build, at
 *   most one per tenant; app_type is null.
 * The keystore file and its passwords are sealed together in `secret_enc` (AES-256-GCM under
 * APP_KEY, db/apk-keystore-secrets.ts); the other columns are the metadata the API shows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('apk_keystores', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('kind').notNullable();
    t.text('app_type').nullable();
    t.text('store_type').notNullable();
    t.string('key_alias', 64).notNullable();
    t.text('sha256_fingerprint').notNullable();
    t.timestamp('valid_until', { useTz: true }).notNullable();
    t.text('source').notNullable();
    t.text('secret_enc').notNullable();
    t.integer('created_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE apk_keystores
       ADD CONSTRAINT apk_keystores_kind_check CHECK (
         (kind = 'release' AND app_type IN ('portal', 'netadmin', 'partner', 'absensi'))
         OR (kind = 'debug' AND app_type IS NULL)),
       ADD CONSTRAINT apk_keystores_store_type_check CHECK (store_type IN ('JKS', 'PKCS12')),
       ADD CONSTRAINT apk_keystores_source_check CHECK (source IN ('uploaded', 'generated')),
       ADD CONSTRAINT apk_keystores_fingerprint_check CHECK (sha256_fingerprint ~ '^([0-9A-F]{2}:){31}[0-9A-F]{2}$')`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX apk_keystores_release_unique ON apk_keystores (tenant_id, app_type) WHERE kind = 'release'`,
  );
  await knex.raw(`CREATE UNIQUE INDEX apk_keystores_debug_unique ON apk_keystores (tenant_id) WHERE kind = 'debug'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('apk_keystores');
}
