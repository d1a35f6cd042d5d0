import type { Knex } from 'knex';

/**
 * Invoices and billing (issue 8 item 4).
 * - invoices gain `type` (subscription, manual, sales), `description`, `void_reason`, `voided_at` and
 *   `billing_run_id` (the run that created a subscription invoice). Existing rows: subscription when
 *   they have a period, manual otherwise. A row inserted without a type is manual: only the billing
 *   cycle writes subscription invoices, and it names the type.
 * - One subscription invoice per customer and period start, voided ones included: the partial unique
 *   index `invoices_subscription_period_unique` (tenant_id, customer_id, period_start) WHERE type =
 *   'subscription' is the real guard of the billing cycle (ON CONFLICT DO NOTHING infers it).
 * - `billing_runs`: one row per billing run (manual or the daily scheduled one), its as_of day,
 *   status and counts.
 * - `billing_anchor_date(month_index, anchor_day)`: the day `anchor_day` of a month, clamped to the
 *   month's last day (31 -> 28/29 Feb, 30 Apr). An inlinable SQL function, so the billing statement
 *   computes periods for thousands of customers in one pass (api/invoices/billing.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE FUNCTION billing_anchor_date(month_index integer, anchor_day integer) RETURNS date
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT make_date($1 / 12, $1 % 12 + 1, least($2,
        extract(day FROM make_date($1 / 12, $1 % 12 + 1, 1) + interval '1 month' - interval '1 day')::integer))
    $$`);
  await knex.raw(`COMMENT ON FUNCTION billing_anchor_date(integer, integer) IS
    'Day anchor_day of the month month_index (year * 12 + month - 1), clamped to the last day of that month'`);

  await knex.schema.createTable('billing_runs', (t) => {
    t.increments('id');
    t.integer('tenant_id').notNullable().references('id').inTable('tenants').onDelete('CASCADE');
    t.date('as_of').notNullable();
    t.text('trigger').notNullable(); // manual | schedule
    t.text('status').notNullable().defaultTo('queued');
    t.text('job_id').nullable();
    t.integer('requested_by').nullable().references('id').inTable('users').onDelete('SET NULL');
    t.integer('created').notNullable().defaultTo(0);
    t.integer('existing').notNullable().defaultTo(0);
    t.integer('skipped').notNullable().defaultTo(0);
    t.text('error').nullable();
    t.timestamp('started_at', { useTz: true }).nullable();
    t.timestamp('finished_at', { useTz: true }).nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['tenant_id', 'job_id'], { indexName: 'billing_runs_tenant_job_unique' });
    t.index(['tenant_id', 'created_at', 'id'], 'billing_runs_tenant_recent');
  });
  await knex.raw(
    `ALTER TABLE billing_runs
       ADD CONSTRAINT billing_runs_status_check CHECK (status IN ('queued', 'running', 'completed', 'failed')),
       ADD CONSTRAINT billing_runs_trigger_check CHECK (trigger IN ('manual', 'schedule'))`,
  );

  await knex.schema.alterTable('invoices', (t) => {
    t.text('type').notNullable().defaultTo('manual');
    t.text('description').nullable();
    t.text('void_reason').nullable();
    t.timestamp('voided_at', { useTz: true }).nullable();
    t.integer('billing_run_id').nullable().references('id').inTable('billing_runs').onDelete('SET NULL');
  });
  await knex.raw(`UPDATE invoices SET type = 'subscription' WHERE period_start IS NOT NULL`);
  // rows that would break the unique key (a period billed twice before this migration) stay, as manual
  await knex.raw(`UPDATE invoices SET type = 'manual' WHERE id IN (
    SELECT id FROM (
      SELECT id, row_number() OVER (PARTITION BY tenant_id, customer_id, period_start ORDER BY id) AS n
      FROM invoices WHERE type = 'subscription') d
    WHERE d.n > 1)`);
  await knex.raw(
    `ALTER TABLE invoices ADD CONSTRAINT invoices_type_check CHECK (type IN ('subscription', 'manual', 'sales'))`,
  );
  await knex.raw(`CREATE UNIQUE INDEX invoices_subscription_period_unique
    ON invoices (tenant_id, customer_id, period_start) WHERE type = 'subscription'`);
  await knex.raw(`CREATE INDEX invoices_billing_run ON invoices (billing_run_id) WHERE billing_run_id IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS invoices_billing_run');
  await knex.raw('DROP INDEX IF EXISTS invoices_subscription_period_unique');
  await knex.raw('ALTER TABLE invoices DROP CONSTRAINT IF EXISTS invoices_type_check');
  await knex.schema.alterTable('invoices', (t) => {
    t.dropColumn('billing_run_id');
    t.dropColumn('voided_at');
    t.dropColumn('void_reason');
    t.dropColumn('description');
    t.dropColumn('type');
  });
  await knex.schema.dropTable('billing_runs');
  await knex.raw('DROP FUNCTION IF EXISTS billing_anchor_date(integer, integer)');
}
