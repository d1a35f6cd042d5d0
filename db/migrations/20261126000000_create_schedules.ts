import type { Knex } from 'knex';

/**
 * schedules (issue 8 item 5; document 2 "technician schedule"): a visit or job planned for a
 * technician at a moment, optionally for a customer or a ticket. Status scheduled -> in_progress ->
 * done, or -> cancelled. The list reads them by time ascending per tenant (index tenant_id,
 * scheduled_at, id) and per technician.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('schedules', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.timestamp('scheduled_at', { useTz: true }).notNullable();
    t.text('job_type').nullable();
    t.integer('technician_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.integer('customer_id').nullable().references('id').inTable('customers').onDelete('SET NULL');
    t.integer('ticket_id').nullable().references('id').inTable('tickets').onDelete('SET NULL');
    t.integer('duration_minutes').nullable();
    t.text('notes').nullable();
    t.text('status').notNullable().defaultTo('scheduled');
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.integer('created_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'scheduled_at', 'id'], 'schedules_tenant_time');
    t.index(['tenant_id', 'technician_id', 'scheduled_at'], 'schedules_tenant_technician');
  });
  await knex.raw(
    `ALTER TABLE schedules ADD CONSTRAINT schedules_status_check
       CHECK (status IN ('scheduled', 'in_progress', 'done', 'cancelled')),
     ADD CONSTRAINT schedules_duration_check CHECK (duration_minutes BETWEEN 1 AND 1440)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('schedules');
}
