import type { Knex } from 'knex';

/**
 * Issue 9: the admin e-mail client and the one inbox/outbox of every channel (DESIGN.md §10
 * "communications").
 * - `external_email_accounts`: one per tenant (unique tenant_id); passwords sealed with APP_KEY
 *   (db/credentials.ts `email_accounts`), never returned; the sync state (status, last error) and the
 *   IMAP cursor (UIDVALIDITY + last UID) live on the row.
 * - `communication_messages`: inbox and outbox of e-mail, WhatsApp and Messenger. An imported
 *   e-mail is unique per (tenant, channel, account_ref, external_key) and, inbound, per Message-ID;
 *   a deleted row stays as a tombstone (deleted_at, bodies dropped) so no sync imports it again.
 * - `communication_attachments`: metadata; the bytes live in the storage driver under storage_key
 *   (null: over the size limit, metadata only, or dropped with a deleted message).
 * - `email_seen_uidls`: the POP3 cursor (UIDLs seen per account).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('external_email_accounts', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().unique().references('id').inTable('tenants').onDelete('CASCADE');
    t.string('email', 190).notNullable();
    t.text('incoming_protocol').notNullable();
    t.string('incoming_host', 255).notNullable();
    t.integer('incoming_port').notNullable();
    t.text('incoming_encryption').notNullable();
    t.string('incoming_username', 190).notNullable();
    t.text('incoming_password_enc').nullable();
    t.string('outgoing_host', 255).notNullable();
    t.integer('outgoing_port').notNullable();
    t.text('outgoing_encryption').notNullable();
    t.string('outgoing_username', 190).notNullable();
    t.text('outgoing_password_enc').nullable();
    t.boolean('leave_on_server').notNullable().defaultTo(true);
    t.text('sync_status').notNullable().defaultTo('never');
    t.timestamp('last_synced_at', { useTz: true }).nullable();
    t.text('last_error').nullable();
    t.bigInteger('imap_uidvalidity').nullable();
    t.bigInteger('imap_last_uid').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    `ALTER TABLE external_email_accounts
       ADD CONSTRAINT external_email_accounts_protocol_check CHECK (incoming_protocol IN ('imap', 'pop3')),
       ADD CONSTRAINT external_email_accounts_enc_check
         CHECK (incoming_encryption IN ('none', 'ssl', 'starttls') AND outgoing_encryption IN ('none', 'ssl', 'starttls')),
       ADD CONSTRAINT external_email_accounts_port_check
         CHECK (incoming_port BETWEEN 1 AND 65535 AND outgoing_port BETWEEN 1 AND 65535),
       ADD CONSTRAINT external_email_accounts_sync_check
         CHECK (sync_status IN ('never', 'queued', 'running', 'ok', 'failed', 'auth_failed'))`,
  );

  await knex.schema.createTable('communication_messages', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.text('channel').notNullable();
    t.text('direction').notNullable();
    t.text('status').notNullable();
    // who made the row: imap, pop3 (sync), admin (a reply), bot, notice
    t.text('source').notNullable();
    // the channel account: for e-mail the account's address (lower case)
    t.string('account_ref', 190).nullable();
    t.integer('customer_id').nullable().references('id').inTable('customers').onDelete('SET NULL');
    t.integer('user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    // the other party: the sender of an inbound, the recipient of an outbound message
    t.string('counterpart', 320).nullable();
    t.boolean('is_group').notNullable().defaultTo(false);
    t.string('from_address', 320).nullable();
    t.text('from_name').nullable();
    t.text('to_addresses').nullable();
    t.text('cc_addresses').nullable();
    t.text('reply_to_address').nullable();
    t.text('subject').nullable();
    t.text('snippet').nullable();
    t.text('body_text').nullable();
    t.text('body_html').nullable();
    t.string('message_id', 998).nullable();
    t.text('in_reply_to').nullable();
    t.text('references').nullable();
    t.bigInteger('reply_to_id').nullable().references('id').inTable('communication_messages').onDelete('SET NULL');
    t.string('external_key', 300).nullable();
    t.text('error_code').nullable();
    t.text('error_message').nullable();
    // when the message happened: an inbound one's server arrival time, an outbound one's creation
    t.timestamp('occurred_at', { useTz: true }).notNullable();
    t.timestamp('received_at', { useTz: true }).nullable();
    t.timestamp('queued_at', { useTz: true }).nullable();
    t.timestamp('send_started_at', { useTz: true }).nullable();
    t.timestamp('sent_at', { useTz: true }).nullable();
    t.timestamp('delivered_at', { useTz: true }).nullable();
    t.timestamp('read_at', { useTz: true }).nullable();
    t.timestamp('failed_at', { useTz: true }).nullable();
    t.timestamp('deleted_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'occurred_at', 'id'], 'communication_messages_time');
    t.index(['tenant_id', 'customer_id'], 'communication_messages_customer');
    t.index(['tenant_id', 'reply_to_id'], 'communication_messages_reply');
  });
  await knex.raw(
    `ALTER TABLE communication_messages
       ADD CONSTRAINT communication_messages_channel_check CHECK (channel IN ('email', 'whatsapp', 'messenger')),
       ADD CONSTRAINT communication_messages_direction_check CHECK (direction IN ('in', 'out')),
       ADD CONSTRAINT communication_messages_status_check
         CHECK (status IN ('received', 'queued', 'pending', 'sent', 'delivered', 'read', 'failed'))`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX communication_messages_external_key
       ON communication_messages (tenant_id, channel, account_ref, external_key) WHERE external_key IS NOT NULL`,
  );
  await knex.raw(
    `CREATE UNIQUE INDEX communication_messages_inbound_message_id
       ON communication_messages (tenant_id, channel, account_ref, message_id)
       WHERE message_id IS NOT NULL AND direction = 'in'`,
  );

  await knex.schema.createTable('communication_attachments', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.bigInteger('message_id').notNullable().references('id').inTable('communication_messages').onDelete('CASCADE');
    t.text('filename').nullable();
    // the type detected from the content (magic bytes); declared_type as the message said
    t.text('content_type').notNullable();
    t.text('declared_type').nullable();
    t.bigInteger('size_bytes').notNullable();
    t.text('content_id').nullable();
    t.text('sha256').nullable();
    t.text('storage_key').nullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'message_id', 'id'], 'communication_attachments_message');
  });

  await knex.schema.createTable('email_seen_uidls', (t) => {
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('account_id').notNullable().references('id').inTable('external_email_accounts').onDelete('CASCADE');
    t.string('uidl', 300).notNullable();
    t.timestamp('seen_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['account_id', 'uidl']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('email_seen_uidls');
  await knex.schema.dropTable('communication_attachments');
  await knex.schema.dropTable('communication_messages');
  await knex.schema.dropTable('external_email_accounts');
}
