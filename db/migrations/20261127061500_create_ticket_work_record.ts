import type { Knex } from 'knex';

/**
 * The append-only work record of a ticket (issue 8 item 6): comments and notes, attachments
 * (metadata; the bytes live in the storage driver under `storage_key`) and field check-ins. Rows are
 * only ever inserted (the API has no update or delete for them); a ticket's detail reads them in
 * time order (index tenant_id, ticket_id, created_at, id).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ticket_comments', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('ticket_id').notNullable().references('id').inTable('tickets').onDelete('CASCADE');
    t.integer('user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.text('kind').notNullable();
    t.text('body').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'ticket_id', 'created_at', 'id'], 'ticket_comments_ticket_time');
  });
  await knex.raw(
    `ALTER TABLE ticket_comments ADD CONSTRAINT ticket_comments_kind_check CHECK (kind IN ('comment', 'note')),
     ADD CONSTRAINT ticket_comments_body_check CHECK (length(btrim(body)) > 0)`,
  );

  await knex.schema.createTable('ticket_attachments', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('ticket_id').notNullable().references('id').inTable('tickets').onDelete('CASCADE');
    t.integer('user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.text('file_name').notNullable();
    t.text('mime_type').notNullable();
    t.integer('size_bytes').notNullable();
    t.text('sha256').notNullable();
    t.text('storage_key').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'ticket_id', 'created_at', 'id'], 'ticket_attachments_ticket_time');
  });
  await knex.raw(`ALTER TABLE ticket_attachments ADD CONSTRAINT ticket_attachments_size_check CHECK (size_bytes >= 0)`);

  await knex.schema.createTable('ticket_check_ins', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('ticket_id').notNullable().references('id').inTable('tickets').onDelete('CASCADE');
    t.integer('user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.double('latitude').notNullable();
    t.double('longitude').notNullable();
    // GPS accuracy radius in metres
    t.double('accuracy').notNullable();
    t.text('note').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'ticket_id', 'created_at', 'id'], 'ticket_check_ins_ticket_time');
  });
  await knex.raw(
    `ALTER TABLE ticket_check_ins ADD CONSTRAINT ticket_check_ins_position_check
       CHECK (latitude BETWEEN -90 AND 90 AND longitude BETWEEN -180 AND 180 AND accuracy >= 0)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ticket_check_ins');
  await knex.schema.dropTable('ticket_attachments');
  await knex.schema.dropTable('ticket_comments');
}
