import type { Knex } from 'knex';

/**
 * Core data model (issue 2, DESIGN.md §5–§6): tenants, identity (users, roles, permissions,
 * auth tokens), and the tenant-scoped records of document 1 (packages, customers, invoices,
 * tickets, OLTs, ONUs) with the indexes their list filters need.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('tenants', (t) => {
    t.increments('id');
    t.string('slug', 63).notNullable().unique();
    t.string('name', 190).notNullable();
    t.boolean('demo_mode').notNullable().defaultTo(false);
    t.jsonb('modules').notNullable().defaultTo(knex.raw(`'[]'::jsonb`));
    t.jsonb('settings').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
    t.timestamps(true, true);
  });

  await knex.schema.createTable('tenant_counters', (t) => {
    t.integer('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('name', 40).notNullable();
    t.bigInteger('value').notNullable().defaultTo(0);
    t.primary(['tenant_id', 'name']);
  });

  await knex.schema.createTable('permissions', (t) => {
    t.increments('id');
    t.string('name', 100).notNullable().unique();
  });

  await knex.schema.createTable('roles', (t) => {
    t.increments('id');
    t.integer('tenant_id').nullable().references('tenants.id').onDelete('CASCADE');
    t.string('name', 100).notNullable();
    t.timestamps(true, true);
  });
  await knex.raw(`CREATE UNIQUE INDEX roles_tenant_name_unique ON roles (coalesce(tenant_id, 0), name)`);

  await knex.schema.createTable('role_permissions', (t) => {
    t.integer('role_id').notNullable().references('roles.id').onDelete('CASCADE');
    t.integer('permission_id').notNullable().references('permissions.id').onDelete('CASCADE');
    t.primary(['role_id', 'permission_id']);
  });

  await knex.schema.createTable('users', (t) => {
    t.increments('id');
    t.integer('tenant_id').nullable().references('tenants.id').onDelete('CASCADE');
    t.string('name', 190).notNullable();
    t.string('email', 190).notNullable();
    t.string('password_hash', 255).notNullable();
    t.boolean('is_platform_admin').notNullable().defaultTo(false);
    t.timestamps(true, true);
    t.index(['tenant_id']);
  });
  await knex.raw(`CREATE UNIQUE INDEX users_email_unique ON users (lower(email))`);

  await knex.schema.createTable('user_roles', (t) => {
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.integer('role_id').notNullable().references('roles.id').onDelete('CASCADE');
    t.primary(['user_id', 'role_id']);
  });

  await knex.schema.createTable('auth_tokens', (t) => {
    t.bigIncrements('id');
    t.string('type', 20).notNullable(); // login, integration, pilot, board
    t.integer('tenant_id').nullable().references('tenants.id').onDelete('CASCADE');
    t.integer('user_id').nullable().references('users.id').onDelete('SET NULL');
    t.string('name', 190).notNullable();
    t.binary('token_hash').notNullable();
    t.string('access', 20).nullable(); // read, read_write (integration tokens)
    t.jsonb('abilities').notNullable().defaultTo(knex.raw(`'[]'::jsonb`));
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.string('ip', 64).nullable();
    t.string('user_agent', 255).nullable();
    t.timestamps(true, true);
    t.index(['tenant_id', 'type']);
    t.index(['user_id', 'type']);
  });

  await knex.schema.createTable('packages', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('name', 190).notNullable();
    t.text('description').nullable();
    t.decimal('price', 14, 2).notNullable().defaultTo(0);
    t.integer('speed_down_kbps').notNullable().defaultTo(0);
    t.integer('speed_up_kbps').notNullable().defaultTo(0);
    t.string('service_type', 20).notNullable().defaultTo('pppoe');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.boolean('is_partner_package').notNullable().defaultTo(false);
    t.timestamps(true, true);
    t.index(['tenant_id', 'is_active']);
  });

  await knex.schema.createTable('customers', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('code', 40).notNullable();
    t.string('name', 190).notNullable();
    t.string('email', 190).nullable();
    t.string('phone', 40).notNullable();
    t.text('address').notNullable();
    t.double('latitude').nullable();
    t.double('longitude').nullable();
    t.integer('package_id').nullable().references('packages.id').onDelete('SET NULL');
    t.string('status', 20).notNullable().defaultTo('active');
    t.string('service_type', 20).notNullable().defaultTo('pppoe');
    t.string('billing_cycle', 20).notNullable().defaultTo('prepaid');
    t.smallint('billing_day').nullable();
    t.string('customer_tier', 20).notNullable().defaultTo('regular');
    t.string('mac_address', 17).nullable();
    t.timestamps(true, true);
    t.unique(['tenant_id', 'code']);
  });
  await knex.raw(
    `ALTER TABLE customers ADD CONSTRAINT customers_status_check CHECK (status IN ('active','suspended','terminated'))`,
  );
  await knex.raw(`ALTER TABLE customers ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', coalesce(name,'') || ' ' || code || ' ' || phone || ' ' || coalesce(email,'') || ' ' || regexp_replace(coalesce(email,''), '[@._+-]', ' ', 'g'))
  ) STORED`);
  await knex.raw(`CREATE INDEX customers_tenant_recent ON customers (tenant_id, created_at DESC, id DESC)`);
  await knex.raw(
    `CREATE INDEX customers_tenant_status_recent ON customers (tenant_id, status, created_at DESC, id DESC)`,
  );
  await knex.raw(`CREATE INDEX customers_tenant_updated ON customers (tenant_id, updated_at)`);
  await knex.raw(`CREATE INDEX customers_search ON customers USING gin (search_vector)`);

  await knex.schema.createTable('olts', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('name', 190).notNullable();
    t.string('vendor', 60).nullable();
    t.string('model', 60).nullable();
    t.string('ip_address', 45).nullable();
    t.string('location', 190).nullable();
    t.string('status', 20).notNullable().defaultTo('online');
    t.integer('pon_ports').notNullable().defaultTo(16);
    t.timestamps(true, true);
    t.index(['tenant_id', 'status']);
  });

  await knex.schema.createTable('onus', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.integer('olt_id').nullable().references('olts.id').onDelete('SET NULL');
    t.integer('customer_id').nullable().references('customers.id').onDelete('SET NULL');
    t.string('serial_number', 32).notNullable();
    t.string('pon_port', 20).nullable();
    t.decimal('rx_power', 6, 2).nullable();
    t.decimal('tx_power', 6, 2).nullable();
    t.decimal('bandwidth_pct', 5, 2).nullable();
    t.string('status', 20).notNullable().defaultTo('offline');
    t.bigInteger('uptime').nullable(); // seconds
    t.timestamp('last_seen', { useTz: true }).nullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamps(true, true);
    t.unique(['tenant_id', 'serial_number']);
    t.index(['tenant_id', 'customer_id']);
    t.index(['tenant_id', 'olt_id']);
    t.index(['tenant_id', 'status']);
  });

  await knex.schema.createTable('invoices', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('invoice_number', 40).notNullable();
    t.integer('customer_id').notNullable().references('customers.id').onDelete('CASCADE');
    t.integer('package_id').nullable().references('packages.id').onDelete('SET NULL');
    t.decimal('amount', 14, 2).notNullable();
    t.string('status', 20).notNullable().defaultTo('unpaid');
    t.date('due_date').notNullable();
    t.timestamp('paid_at', { useTz: true }).nullable();
    t.date('period_start').nullable();
    t.date('period_end').nullable();
    t.timestamps(true, true);
    t.unique(['tenant_id', 'invoice_number']);
    t.index(['tenant_id', 'customer_id']);
    t.index(['tenant_id', 'updated_at']);
  });
  await knex.raw(
    `ALTER TABLE invoices ADD CONSTRAINT invoices_status_check CHECK (status IN ('unpaid','paid','overdue','cancelled'))`,
  );
  await knex.raw(
    `CREATE INDEX invoices_tenant_status_recent ON invoices (tenant_id, status, created_at DESC, id DESC)`,
  );
  await knex.raw(`CREATE INDEX invoices_overdue_scan ON invoices (due_date) WHERE status = 'unpaid'`);

  await knex.schema.createTable('tickets', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('ticket_number', 40).notNullable();
    t.string('source', 20).notNullable().defaultTo('admin');
    t.string('external_id', 190).nullable();
    t.integer('customer_id').nullable().references('customers.id').onDelete('SET NULL');
    t.integer('onu_id').nullable().references('onus.id').onDelete('SET NULL');
    t.integer('assigned_to').nullable().references('users.id').onDelete('SET NULL');
    t.string('type', 190).notNullable();
    t.string('priority', 10).notNullable().defaultTo('medium');
    t.string('status', 20).notNullable().defaultTo('open');
    t.text('description').nullable();
    t.text('location_text').nullable();
    t.string('contact_name', 190).nullable();
    t.string('contact_phone', 40).nullable();
    t.boolean('sla_breached').notNullable().defaultTo(false);
    t.timestamp('response_due_at', { useTz: true }).nullable();
    t.timestamp('resolution_due_at', { useTz: true }).nullable();
    t.timestamp('responded_at', { useTz: true }).nullable();
    t.timestamp('resolved_at', { useTz: true }).nullable();
    t.timestamp('closed_at', { useTz: true }).nullable();
    t.timestamps(true, true);
    t.unique(['tenant_id', 'ticket_number']);
    t.index(['tenant_id', 'customer_id']);
    t.index(['tenant_id', 'status', 'priority']);
  });
  await knex.raw(
    `ALTER TABLE tickets ADD CONSTRAINT tickets_status_check CHECK (status IN ('open','inprogress','resolved','closed'))`,
  );
  await knex.raw(
    `ALTER TABLE tickets ADD CONSTRAINT tickets_priority_check CHECK (priority IN ('high','medium','low'))`,
  );
  await knex.raw(`CREATE INDEX tickets_tenant_recent ON tickets (tenant_id, created_at DESC, id DESC)`);
  await knex.raw(
    `CREATE INDEX tickets_sla_scan ON tickets (resolution_due_at) WHERE status IN ('open','inprogress') AND sla_breached = false`,
  );

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('tenants.id').onDelete('CASCADE');
    t.string('scope', 190).notNullable(); // method + path
    t.string('key', 255).notNullable();
    t.string('request_hash', 64).notNullable();
    t.integer('response_status').nullable();
    t.jsonb('response_body').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'scope', 'key']);
    t.index(['created_at']);
  });
}

/** Reverts up(): drops the core tables. */
export async function down(knex: Knex): Promise<void> {
  for (const t of [
    'idempotency_keys',
    'tickets',
    'invoices',
    'onus',
    'olts',
    'customers',
    'packages',
    'auth_tokens',
    'user_roles',
    'users',
    'role_permissions',
    'roles',
    'permissions',
    'tenant_counters',
    'tenants',
  ]) {
    await knex.schema.dropTableIfExists(t);
  }
}
