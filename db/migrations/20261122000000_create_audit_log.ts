import type { Knex } from 'knex';

/**
 * audit_log (DESIGN.md §10 "audit"): one row per money, provisioning, permission and file action:
 * tenant, user, action, subject, a before/after summary, ip and time. Rows are never updated; the
 * list reads them newest first per tenant (index on tenant_id, at desc, id desc).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.integer('user_id').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.text('action').notNullable();
    t.text('subject_type').nullable();
    t.bigInteger('subject_id').nullable();
    t.jsonb('before').nullable();
    t.jsonb('after').nullable();
    t.specificType('ip', 'inet').nullable();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['tenant_id', 'at', 'id'], 'audit_log_tenant_at');
    t.index(['tenant_id', 'action'], 'audit_log_tenant_action');
    t.index(['tenant_id', 'subject_type', 'subject_id'], 'audit_log_tenant_subject');
  });
  await knex.raw(
    `ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_format CHECK (action ~ '^[a-z0-9_]+(\\.[a-z0-9_-]+)+$')`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_log');
}
