import type { Knex } from 'knex';

/**
 * Issue 13 items 2-5 (platform half of tenant provisioning):
 * - tenants.primary_domain: the tenant's own domain (optional, unique ignoring case);
 * - platform_audit_log: audit entries of platform admins (tenant-less, so not audit_log);
 * - provisioning_settings: the one row of switches (`enabled`, `backup_ready`) and the backup check;
 * - provisioning_credentials: one row per section (tenant_db, cloudflare, mail_panel, storage):
 *   non-secret settings in `settings`, the secrets sealed with APP_KEY (AES-256-GCM) in `secret_enc`,
 *   `changed_at` of the last change and `last_test` {ok, at, message} of the last check (reset by a change).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('tenants', (t) => {
    t.string('primary_domain', 253).nullable();
  });
  await knex.raw('CREATE UNIQUE INDEX tenants_primary_domain_unique ON tenants (lower(primary_domain))');

  await knex.schema.createTable('platform_audit_log', (t) => {
    t.bigIncrements('id');
    t.integer('user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('action', 100).notNullable();
    t.string('subject_type', 60).nullable();
    t.bigInteger('subject_id').nullable();
    t.jsonb('before').nullable();
    t.jsonb('after').nullable();
    t.string('ip', 45).nullable();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['at', 'id'], 'platform_audit_log_at');
  });

  await knex.schema.createTable('provisioning_settings', (t) => {
    t.integer('id').primary();
    t.boolean('enabled').notNullable().defaultTo(false);
    t.boolean('backup_ready').notNullable().defaultTo(false);
    t.jsonb('backup_last_test').nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('ALTER TABLE provisioning_settings ADD CONSTRAINT provisioning_settings_one CHECK (id = 1)');

  await knex.schema.createTable('provisioning_credentials', (t) => {
    t.string('section', 20).primary();
    t.jsonb('settings').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
    t.text('secret_enc').nullable();
    t.boolean('fake').notNullable().defaultTo(false);
    t.timestamp('changed_at', { useTz: true }).notNullable();
    t.jsonb('last_test').nullable();
  });
  await knex.raw(
    `ALTER TABLE provisioning_credentials ADD CONSTRAINT provisioning_credentials_section
       CHECK (section IN ('tenant_db', 'cloudflare', 'mail_panel', 'storage'))`,
  );
}

/** Drops the tables and the column. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('provisioning_credentials');
  await knex.schema.dropTableIfExists('provisioning_settings');
  await knex.schema.dropTableIfExists('platform_audit_log');
  await knex.raw('DROP INDEX IF EXISTS tenants_primary_domain_unique');
  await knex.schema.alterTable('tenants', (t) => {
    t.dropColumn('primary_domain');
  });
}
