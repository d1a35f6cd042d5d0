import type { Knex } from 'knex';

/**
 * Tables of the Mailbox API (issue 3, document 3). Same PostgreSQL as the main service, its own
 * tables. Mailbox passwords are stored NOWHERE: not here, not in Redis, not in job data. The only
 * secret-bearing columns are panel_password_enc (AES-256-GCM under APP_KEY) and
 * mail_sealed_secrets.ciphertext (the initial password of a mailbox being created, deleted by the
 * worker as soon as it has used it, and expiring after 15 minutes regardless).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mail_domains', (t) => {
    t.increments('id');
    t.string('name', 253).notNullable().unique(); // lowercase
    t.string('imap_host', 253).notNullable();
    t.integer('imap_port').notNullable().defaultTo(993);
    t.string('imap_security', 10).notNullable().defaultTo('ssl'); // ssl, starttls, none
    t.string('smtp_host', 253).notNullable();
    t.integer('smtp_port').notNullable().defaultTo(465);
    t.string('smtp_security', 10).notNullable().defaultTo('ssl'); // ssl, starttls, none
    t.string('panel_type', 20).nullable(); // cpanel, directadmin, hestia; null = no panel
    t.string('panel_host', 253).nullable();
    t.integer('panel_port').nullable();
    t.string('panel_user', 190).nullable();
    t.text('panel_password_enc').nullable(); // sealed with lib/crypto.ts, aad 'mail_domains.panel_password'
    t.string('panel_ssh_key_path', 500).nullable();
    t.boolean('panel_ssl').notNullable().defaultTo(true);
    t.timestamps(true, true);
  });
  await knex.raw(
    `ALTER TABLE mail_domains ADD CONSTRAINT mail_domains_security_check CHECK (imap_security IN ('ssl','starttls','none') AND smtp_security IN ('ssl','starttls','none'))`,
  );
  await knex.raw(
    `ALTER TABLE mail_domains ADD CONSTRAINT mail_domains_panel_check CHECK (panel_type IS NULL OR panel_type IN ('cpanel','directadmin','hestia'))`,
  );

  await knex.schema.createTable('mail_mailboxes', (t) => {
    t.increments('id');
    t.integer('domain_id').notNullable().references('mail_domains.id').onDelete('CASCADE');
    t.string('email', 320).notNullable().unique(); // lowercase local@domain
    t.string('local_part', 64).notNullable();
    t.string('display_name', 190).nullable();
    t.timestamps(true, true);
    t.index(['domain_id']);
  });

  await knex.schema.createTable('mail_operators', (t) => {
    t.increments('id');
    t.string('email', 190).notNullable();
    t.string('name', 190).notNullable();
    t.string('password_hash', 255).notNullable();
    t.timestamps(true, true);
  });
  await knex.raw(`CREATE UNIQUE INDEX mail_operators_email_unique ON mail_operators (lower(email))`);

  await knex.schema.createTable('mail_operator_sessions', (t) => {
    t.bigIncrements('id');
    t.integer('operator_id').notNullable().references('mail_operators.id').onDelete('CASCADE');
    t.binary('token_hash').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });

  await knex.schema.createTable('mail_api_keys', (t) => {
    t.bigIncrements('id');
    t.string('name', 190).notNullable();
    t.binary('token_hash').notNullable();
    t.jsonb('scopes').notNullable(); // subset of emails:read, emails:reply, emails:send, mailboxes:create
    t.integer('domain_id').notNullable().references('mail_domains.id').onDelete('CASCADE');
    t.integer('created_by').nullable().references('mail_operators.id').onDelete('SET NULL');
    t.timestamp('last_used_at', { useTz: true }).nullable();
    t.timestamp('expires_at', { useTz: true }).nullable();
    t.timestamp('revoked_at', { useTz: true }).nullable();
    t.timestamps(true, true);
    t.index(['domain_id']);
  });

  await knex.schema.createTable('mail_api_key_mailboxes', (t) => {
    t.bigInteger('key_id').notNullable().references('mail_api_keys.id').onDelete('CASCADE');
    t.integer('mailbox_id').notNullable().references('mail_mailboxes.id').onDelete('CASCADE');
    t.primary(['key_id', 'mailbox_id']);
  });

  await knex.schema.createTable('mail_mailbox_requests', (t) => {
    t.bigIncrements('id');
    t.integer('domain_id').notNullable().references('mail_domains.id').onDelete('CASCADE');
    t.bigInteger('key_id').nullable().references('mail_api_keys.id').onDelete('SET NULL');
    t.string('local_part', 64).notNullable();
    t.string('real_name', 190).nullable();
    t.string('quota', 20).nullable();
    t.string('status', 20).notNullable().defaultTo('pending'); // pending, created, failed
    t.string('error', 500).nullable(); // safe message, never a password
    t.integer('mailbox_id').nullable().references('mail_mailboxes.id').onDelete('SET NULL');
    t.timestamps(true, true);
  });

  await knex.schema.createTable('mail_sealed_secrets', (t) => {
    t.uuid('id').primary();
    t.string('purpose', 40).notNullable();
    t.text('ciphertext').notNullable(); // lib/crypto.ts seal(APP_KEY, secret, aad = purpose + ':' + id)
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['expires_at']);
  });
}

/** Reverts up(): drops the mail tables. */
export async function down(knex: Knex): Promise<void> {
  for (const t of [
    'mail_sealed_secrets',
    'mail_mailbox_requests',
    'mail_api_key_mailboxes',
    'mail_api_keys',
    'mail_operator_sessions',
    'mail_operators',
    'mail_mailboxes',
    'mail_domains',
  ]) {
    await knex.schema.dropTableIfExists(t);
  }
}
