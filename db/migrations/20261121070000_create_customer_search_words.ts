import type { Knex } from 'knex';

/**
 * The per-tenant dictionary of customer search words (issue 2 benchmark: "the search within 2x of
 * the plain list"). customer_search_words(tenant_id, word, n) holds every lexeme of the tenant's
 * customers.search_vector with the number of customers carrying it. The customers search expands a
 * prefix term ('budi' -> 'budi', 'budiman', ...) into the exact lexemes through this table (a
 * btree range scan, `word` in the C collation) and matches those exactly in the GIN index, which
 * PostgreSQL does several times faster than a `'budi':*` prefix match. Rows are kept by
 * statement-level triggers with transition tables, like customer_status_counts; rows whose n
 * falls to 0 stay (readers filter n > 0) so that concurrent writers never race on deletes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE customer_search_words (
      tenant_id integer NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      word text COLLATE "C" NOT NULL,
      n bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, word)
    )`);
  const words = (rows: string) => `SELECT tenant_id, unnest(tsvector_to_array(search_vector)) AS word FROM ${rows}`;
  await knex.raw(`
    CREATE FUNCTION customer_search_words_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO customer_search_words (tenant_id, word, n)
        SELECT tenant_id, word, count(*) FROM (${words('new_rows')}) w GROUP BY tenant_id, word ORDER BY tenant_id, word
        ON CONFLICT (tenant_id, word) DO UPDATE SET n = customer_search_words.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION customer_search_words_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO customer_search_words (tenant_id, word, n)
        SELECT tenant_id, word, sum(delta) FROM (
          SELECT tenant_id, word, 1 AS delta FROM (${words('new_rows')}) a
          UNION ALL
          SELECT tenant_id, word, -1 AS delta FROM (${words('old_rows')}) b
        ) d GROUP BY tenant_id, word HAVING sum(delta) <> 0 ORDER BY tenant_id, word
        ON CONFLICT (tenant_id, word) DO UPDATE SET n = customer_search_words.n + EXCLUDED.n;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION customer_search_words_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM customer_search_words k
        JOIN (SELECT DISTINCT tenant_id, word FROM (${words('old_rows')}) w) d USING (tenant_id, word)
        ORDER BY k.tenant_id, k.word FOR UPDATE OF k;
      UPDATE customer_search_words k SET n = k.n - d.cnt
        FROM (SELECT tenant_id, word, count(*) AS cnt FROM (${words('old_rows')}) w GROUP BY tenant_id, word) d
        WHERE k.tenant_id = d.tenant_id AND k.word = d.word;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE FUNCTION customer_search_words_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM customer_search_words;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER customers_search_words_ins AFTER INSERT ON customers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_search_words_on_insert()`);
  await knex.raw(`CREATE TRIGGER customers_search_words_upd AFTER UPDATE ON customers
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_search_words_on_update()`);
  await knex.raw(`CREATE TRIGGER customers_search_words_del AFTER DELETE ON customers
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION customer_search_words_on_delete()`);
  await knex.raw(`CREATE TRIGGER customers_search_words_trunc AFTER TRUNCATE ON customers
    FOR EACH STATEMENT EXECUTE FUNCTION customer_search_words_on_truncate()`);
  // backfill under a lock so no customer row slips between the scan and the triggers
  await knex.raw('LOCK TABLE customers IN SHARE MODE');
  await knex.raw(`INSERT INTO customer_search_words (tenant_id, word, n)
    SELECT tenant_id, word, count(*) FROM (${words('customers')}) w GROUP BY tenant_id, word`);
}

/** Drops the dictionary and its triggers. */
export async function down(knex: Knex): Promise<void> {
  for (const t of ['ins', 'upd', 'del', 'trunc'])
    await knex.raw(`DROP TRIGGER IF EXISTS customers_search_words_${t} ON customers`);
  for (const f of ['insert', 'update', 'delete', 'truncate'])
    await knex.raw(`DROP FUNCTION IF EXISTS customer_search_words_on_${f}()`);
  await knex.schema.dropTableIfExists('customer_search_words');
}
