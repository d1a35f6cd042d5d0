import type { Knex } from 'knex';

/**
 * Network gear and home bases (issue 8 item 3):
 * - home_bases: a technicians' base (POP, office, warehouse) with its address and position
 *   (latitude -90..90, longitude -180..180, degrees WGS 84);
 * - nas: the routers customers connect through (PPPoE, DHCP, hotspot); `nas_key` is unique per
 *   tenant (case-insensitive), the row id is the `router_id` other modules refer to; credentials
 *   are write-only, sealed with APP_KEY (lib/crypto.ts) in `credentials_enc`;
 * - olts: + home_base_id (nullable FK, SET NULL), driver (the OltAdapter, 'fake' for now),
 *   credentials_enc, is_active, last_polled_at (the last poll that got an answer or found the OLT
 *   unreachable) and last_poll_error (a fixed text, never a secret);
 * - status values of olts and onus checked by the database (DESIGN.md §6).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('home_bases', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 190).notNullable();
    t.text('address').notNullable();
    t.double('latitude').notNullable();
    t.double('longitude').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at', 'id'], 'home_bases_tenant_recent');
  });
  await knex.raw(
    `ALTER TABLE home_bases
       ADD CONSTRAINT home_bases_latitude_check CHECK (latitude BETWEEN -90 AND 90),
       ADD CONSTRAINT home_bases_longitude_check CHECK (longitude BETWEEN -180 AND 180)`,
  );

  await knex.schema.createTable('nas', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('name', 190).notNullable();
    t.string('nas_key', 64).notNullable();
    t.string('driver', 40).notNullable().defaultTo('fake');
    t.string('host', 253).notNullable();
    t.integer('port').notNullable().defaultTo(8728);
    t.text('credentials_enc').nullable();
    t.string('isolation_profile', 64).nullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'created_at', 'id'], 'nas_tenant_recent');
  });
  await knex.raw(`CREATE UNIQUE INDEX nas_tenant_key ON nas (tenant_id, lower(nas_key))`);
  await knex.raw(`ALTER TABLE nas ADD CONSTRAINT nas_port_check CHECK (port BETWEEN 1 AND 65535)`);

  await knex.schema.alterTable('olts', (t) => {
    t.integer('home_base_id').nullable().references('id').inTable('home_bases').onDelete('SET NULL');
    t.string('driver', 40).notNullable().defaultTo('fake');
    t.text('credentials_enc').nullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('last_polled_at', { useTz: true }).nullable();
    t.string('last_poll_error', 190).nullable();
    t.index(['tenant_id', 'home_base_id'], 'olts_tenant_home_base');
  });
  await knex.raw(`CREATE INDEX olts_tenant_recent ON olts (tenant_id, created_at DESC, id DESC)`);
  await knex.raw(`CREATE INDEX olts_active ON olts (id) WHERE is_active`);
  await knex.raw(`ALTER TABLE olts ADD CONSTRAINT olts_status_check CHECK (status IN ('online', 'offline'))`);
  await knex.raw(
    `ALTER TABLE onus ADD CONSTRAINT onus_status_check CHECK (status IN ('online', 'offline', 'los', 'power_fail'))`,
  );
  await knex.raw(`CREATE INDEX onus_tenant_recent ON onus (tenant_id, created_at DESC, id DESC)`);
  await knex.raw(`CREATE INDEX packages_tenant_recent ON packages (tenant_id, created_at DESC, id DESC)`);
}

/** Reverts up(). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS packages_tenant_recent`);
  await knex.raw(`DROP INDEX IF EXISTS onus_tenant_recent`);
  await knex.raw(`ALTER TABLE onus DROP CONSTRAINT IF EXISTS onus_status_check`);
  await knex.raw(`ALTER TABLE olts DROP CONSTRAINT IF EXISTS olts_status_check`);
  await knex.raw(`DROP INDEX IF EXISTS olts_active`);
  await knex.raw(`DROP INDEX IF EXISTS olts_tenant_recent`);
  await knex.schema.alterTable('olts', (t) => {
    t.dropIndex(['tenant_id', 'home_base_id'], 'olts_tenant_home_base');
    t.dropColumn('last_poll_error');
    t.dropColumn('last_polled_at');
    t.dropColumn('is_active');
    t.dropColumn('credentials_enc');
    t.dropColumn('driver');
    t.dropColumn('home_base_id');
  });
  await knex.schema.dropTable('nas');
  await knex.schema.dropTable('home_bases');
}
