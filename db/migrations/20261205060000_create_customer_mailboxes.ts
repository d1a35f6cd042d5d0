import type { Knex } from 'knex';

/**
 * Issue 13 item 9: customer e-mail accounts (POST /api/customers/{id}/email-account). One per
 * customer; the address unique (ignoring case); status pending (the customer-mailbox job has not
 * finished), created (made by us), existed (already at the panel), failed; the generated initial
 * password sealed with APP_KEY until it was shown once (or 15 minutes passed).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('customer_mailboxes', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('customer_id').notNullable().references('id').inTable('customers').onDelete('CASCADE');
    t.string('address', 320).notNullable();
    t.integer('quota_mb').notNullable();
    t.string('status', 20).notNullable().defaultTo('pending');
    t.text('password_enc').nullable();
    t.text('error').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['customer_id'], { indexName: 'customer_mailboxes_customer' });
    t.index(['tenant_id', 'id'], 'customer_mailboxes_tenant');
  });
  await knex.raw(
    `ALTER TABLE customer_mailboxes ADD CONSTRAINT customer_mailboxes_status
       CHECK (status IN ('pending', 'created', 'existed', 'failed'))`,
  );
  await knex.raw('CREATE UNIQUE INDEX customer_mailboxes_address ON customer_mailboxes (lower(address))');
}

/** Drops the table. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('customer_mailboxes');
}
