import type { Knex } from 'knex';

/**
 * Exact per-tenant, per-status customer counts for the `total` of the external customers list
 * (document 1 list envelope; issue 2 benchmark: "total exact, without a full count on every
 * request").
 *
 * customer_status_counts(tenant_id, status, n) is maintained by statement-level AFTER triggers
 * on customers with transition tables, so a bulk INSERT of 100,000 rows costs one aggregate, not
 * 100,000 upserts:
 * - INSERT: +count per (tenant_id, status) of the new rows (upsert);
 * - UPDATE: net delta of old rows (-1) and new rows (+1) per (tenant_id, status); statements that
 *   change neither tenant_id nor status net to zero and write nothing;
 * - DELETE: -count per (tenant_id, status), UPDATE only (never inserts: a tenant being deleted by
 *   cascade must not get a counter row back);
 * - TRUNCATE: the counts are emptied.
 * Counter rows are locked in (tenant_id, status) order to keep concurrent writers free of
 * deadlocks. Readers: the plain list sums the tenant's rows, the status filter reads one row;
 * any other filter falls back to count(*). Existing customers are counted once here (backfill).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE customer_status_counts (
      tenant_id integer NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      status varchar(20) NOT NULL,
      n bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, status)
    )`);

  await knex.raw(`
    CREATE FUNCTION customer_status_counts_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO customer_status_counts (tenant_id, status, n)
        SELECT tenant_id, status, count(*) FROM new_rows GROUP BY tenant_id, status ORDER BY tenant_id, status
        ON CONFLICT (tenant_id, status) DO UPDATE SET n = customer_status_counts.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);

  await knex.raw(`
    CREATE FUNCTION customer_status_counts_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO customer_status_counts (tenant_id, status, n)
        SELECT tenant_id, status, sum(delta) FROM (
          SELECT tenant_id, status, 1 AS delta FROM new_rows
          UNION ALL
          SELECT tenant_id, status, -1 AS delta FROM old_rows
        ) d GROUP BY tenant_id, status HAVING sum(delta) <> 0 ORDER BY tenant_id, status
        ON CONFLICT (tenant_id, status) DO UPDATE SET n = customer_status_counts.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);

  await knex.raw(`
    CREATE FUNCTION customer_status_counts_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM customer_status_counts k
        JOIN (SELECT DISTINCT tenant_id, status FROM old_rows) d USING (tenant_id, status)
        ORDER BY k.tenant_id, k.status FOR UPDATE OF k;
      UPDATE customer_status_counts k SET n = k.n - d.cnt
        FROM (SELECT tenant_id, status, count(*) AS cnt FROM old_rows GROUP BY tenant_id, status) d
        WHERE k.tenant_id = d.tenant_id AND k.status = d.status;
      RETURN NULL;
    END $$`);

  await knex.raw(`
    CREATE FUNCTION customer_status_counts_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM customer_status_counts;
      RETURN NULL;
    END $$`);

  await knex.raw(`CREATE TRIGGER customers_status_counts_ins AFTER INSERT ON customers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_status_counts_on_insert()`);
  await knex.raw(`CREATE TRIGGER customers_status_counts_upd AFTER UPDATE ON customers
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_status_counts_on_update()`);
  await knex.raw(`CREATE TRIGGER customers_status_counts_del AFTER DELETE ON customers
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_status_counts_on_delete()`);
  await knex.raw(`CREATE TRIGGER customers_status_counts_trunc AFTER TRUNCATE ON customers
    FOR EACH STATEMENT EXECUTE FUNCTION customer_status_counts_on_truncate()`);

  // backfill, under a lock so no customer row slips between the count and the triggers
  await knex.raw('LOCK TABLE customers IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(`INSERT INTO customer_status_counts (tenant_id, status, n)
    SELECT tenant_id, status, count(*) FROM customers GROUP BY tenant_id, status`);
}

/** Reverts up(): drops the counter table and its triggers. */
export async function down(knex: Knex): Promise<void> {
  for (const t of ['ins', 'upd', 'del', 'trunc'])
    await knex.raw(`DROP TRIGGER IF EXISTS customers_status_counts_${t} ON customers`);
  for (const f of ['insert', 'update', 'delete', 'truncate'])
    await knex.raw(`DROP FUNCTION IF EXISTS customer_status_counts_on_${f}()`);
  await knex.raw('DROP TABLE IF EXISTS customer_status_counts');
}
