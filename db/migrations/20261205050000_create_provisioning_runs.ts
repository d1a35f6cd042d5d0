import type { Knex } from 'knex';

/**
 * Issue 13 items 6-9 (the runs half of tenant provisioning):
 * - tenant_subscriber_domains: a tenant's subscriber domain and its state (pending, active, failed,
 *   replaced, removed); at most one active per tenant; a domain (ignoring case) belongs to one
 *   tenant while not removed or failed; `dns_record_ids` are the records we created (DNS-managed);
 * - provisioning_drafts: saved requests (POST .../draft), run later by `draft_id`;
 * - provisioning_runs: one confirmed run (who, phrase, request, plan, status, each step's result and
 *   error); at most one open run (queued, running) per tenant;
 * - provisioning_mailboxes: mailboxes the runs created at the panel (address unique), the initial
 *   password sealed until shown once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('provisioning_runs', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('kind', 20).notNullable();
    t.string('status', 20).notNullable().defaultTo('queued');
    t.string('phrase', 60).notNullable();
    t.jsonb('request').notNullable();
    t.jsonb('plan').notNullable();
    t.jsonb('steps').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
    t.integer('resumes').notNullable().defaultTo(0);
    t.integer('created_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.text('error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.index(['tenant_id', 'id'], 'provisioning_runs_tenant');
  });
  await knex.raw(
    `ALTER TABLE provisioning_runs ADD CONSTRAINT provisioning_runs_kind CHECK (kind IN ('provision', 'change', 'cleanup'))`,
  );
  await knex.raw(
    `ALTER TABLE provisioning_runs ADD CONSTRAINT provisioning_runs_status
       CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed'))`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX provisioning_runs_one_open ON provisioning_runs (tenant_id) WHERE status IN ('queued', 'running')`,
  );

  await knex.schema.createTable('tenant_subscriber_domains', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('domain', 253).notNullable();
    t.string('status', 20).notNullable().defaultTo('pending');
    t.string('record_type', 10).notNullable();
    t.string('dns_target', 253).notNullable();
    t.boolean('proxied').notNullable().defaultTo(true);
    t.jsonb('dns_record_ids').notNullable().defaultTo(knex.raw(`'[]'::jsonb`));
    t.timestamp('verified_at', { useTz: true }).nullable();
    t.bigInteger('replaced_by_id').nullable().references('id').inTable('tenant_subscriber_domains');
    t.bigInteger('run_id').nullable().references('id').inTable('provisioning_runs').onDelete('SET NULL');
    t.text('error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE tenant_subscriber_domains ADD CONSTRAINT tenant_subscriber_domains_status
       CHECK (status IN ('pending', 'active', 'failed', 'replaced', 'removed'))`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX tenant_subscriber_domains_one_active ON tenant_subscriber_domains (tenant_id) WHERE status = 'active'`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX tenant_subscriber_domains_domain ON tenant_subscriber_domains (lower(domain))
       WHERE status NOT IN ('removed', 'failed')`,
  );

  await knex.schema.createTable('provisioning_drafts', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.jsonb('request').notNullable();
    t.integer('created_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'id'], 'provisioning_drafts_tenant');
  });

  await knex.schema.createTable('provisioning_mailboxes', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('address', 320).notNullable();
    t.integer('quota_mb').notNullable();
    t.boolean('created').notNullable();
    t.text('password_enc').nullable();
    t.bigInteger('run_id').nullable().references('id').inTable('provisioning_runs').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE UNIQUE INDEX provisioning_mailboxes_address ON provisioning_mailboxes (lower(address))');
}

/** Drops the tables. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('provisioning_mailboxes');
  await knex.schema.dropTableIfExists('provisioning_drafts');
  await knex.schema.dropTableIfExists('tenant_subscriber_domains');
  await knex.schema.dropTableIfExists('provisioning_runs');
}
