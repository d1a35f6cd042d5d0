import type { Knex } from 'knex';

/**
 * Issue 12 items 2, 5 (document 2 "Mobile app build configuration", "Mobile app build" state rows):
 * - `apk_app_configs`: one build configuration per tenant and app type (portal, netadmin, partner,
 *   absensi), every spec field plus `enabled`.
 * - `apk_builds`: one row per requested build: status (queued, running, successful, failed,
 *   cancelled), progress 0-100, the configuration snapshot it builds, the error, the last log lines,
 *   the stored APK (key, size, SHA-256) and log, and the run that owns it (`run_id`: a processor
 *   run whose id no longer matches writes nothing, so an orphaned run cannot overwrite a newer one).
 *   `file_deleted_at` is set by the retention job (item 9) when it deletes the stored APK; the row stays.
 *   A partial unique index allows one queued-or-running build per tenant (the real guard behind the
 *   API's 422 `build`, and what makes the queue fair between tenants).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('apk_app_configs', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('app_type').notNullable();
    t.string('app_name', 50).notNullable();
    t.string('package_id', 150).notNullable();
    t.string('version_name', 50).notNullable();
    t.integer('version_code').notNullable();
    t.string('base_url', 2048).notNullable();
    t.string('api_url', 2048).nullable();
    t.text('environment').notNullable();
    t.string('theme_color', 7).notNullable();
    t.text('orientation').notNullable();
    t.text('signing_mode').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'app_type']);
  });
  await knex.raw(
    `ALTER TABLE apk_app_configs
       ADD CONSTRAINT apk_app_configs_app_type_check CHECK (app_type IN ('portal', 'netadmin', 'partner', 'absensi')),
       ADD CONSTRAINT apk_app_configs_environment_check CHECK (environment IN ('sandbox', 'production')),
       ADD CONSTRAINT apk_app_configs_orientation_check CHECK (orientation IN ('portrait', 'landscape', 'default')),
       ADD CONSTRAINT apk_app_configs_signing_check CHECK (signing_mode IN ('debug', 'release')),
       ADD CONSTRAINT apk_app_configs_version_check CHECK (version_code BETWEEN 1 AND 2100000000),
       ADD CONSTRAINT apk_app_configs_color_check CHECK (theme_color ~ '^#[0-9A-Fa-f]{6}$')`,
  );

  await knex.schema.createTable('apk_builds', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('app_type').notNullable();
    t.text('build_type').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.text('toolchain').notNullable();
    t.smallint('progress').notNullable().defaultTo(0);
    t.jsonb('config').notNullable();
    t.string('version_name', 50).notNullable();
    t.integer('version_code').notNullable();
    t.text('error').nullable();
    t.text('log_tail').nullable();
    t.text('log_key').nullable();
    t.text('file_key').nullable();
    t.string('file_name', 255).nullable();
    t.bigInteger('size_bytes').nullable();
    t.string('sha256', 64).nullable();
    t.integer('task_count').nullable();
    t.uuid('run_id').nullable();
    t.smallint('runs').notNullable().defaultTo(0);
    t.integer('requested_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('cancel_requested_at', { useTz: true }).nullable();
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.timestamp('file_deleted_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at', 'id']);
    t.index(['tenant_id', 'app_type', 'status']);
  });
  await knex.raw(
    `ALTER TABLE apk_builds
       ADD CONSTRAINT apk_builds_app_type_check CHECK (app_type IN ('portal', 'netadmin', 'partner', 'absensi')),
       ADD CONSTRAINT apk_builds_build_type_check CHECK (build_type IN ('debug', 'release')),
       ADD CONSTRAINT apk_builds_status_check CHECK (status IN ('queued', 'running', 'successful', 'failed', 'cancelled')),
       ADD CONSTRAINT apk_builds_toolchain_check CHECK (toolchain IN ('real', 'stub')),
       ADD CONSTRAINT apk_builds_progress_check CHECK (progress BETWEEN 0 AND 100)`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX apk_builds_one_active_per_tenant ON apk_builds (tenant_id) WHERE status IN ('queued', 'running')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('apk_builds');
  await knex.schema.dropTableIfExists('apk_app_configs');
}
