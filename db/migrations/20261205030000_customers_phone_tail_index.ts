import type { Knex } from 'knex';

/**
 * Issue 11 (chat inbound): the customer of a WhatsApp number is found by the last 8 digits of the
 * phone (api/wabot/inbound.ts customerByPhone). An expression index on those digits per tenant
 * turns the scan of every customer's phone into an index lookup.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX customers_tenant_phone_tail ON customers (tenant_id, right(regexp_replace(phone, '[^0-9]', '', 'g'), 8))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS customers_tenant_phone_tail');
}
