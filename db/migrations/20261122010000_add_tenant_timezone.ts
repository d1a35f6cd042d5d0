import type { Knex } from 'knex';

/**
 * tenants.timezone (DESIGN.md §10 "time zone"): the tenant's IANA time zone, default Asia/Jakarta.
 * "Today", billing days and "not in the future" are computed in it (lib/clock.ts todayIn); the
 * invoice-overdue job compares due dates with the tenant's today.
 *
 * The check accepts exactly the zone names PostgreSQL's tz database lists in pg_timezone_names
 * (case as listed: 'Asia/Jakarta', not 'asia/jakarta'), so neither an abbreviation ('WIB') nor a
 * POSIX offset string ('XYZ-7', '+07') gets in. A refused value is a check violation (23514,
 * constraint tenants_timezone_iana), which the API maps to 422. The lookup costs a few ms and runs
 * only when a tenants row is written.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION is_iana_time_zone(tz text) RETURNS boolean LANGUAGE sql STABLE STRICT AS $$
      SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = tz)
    $$`);
  await knex.raw(`
    ALTER TABLE tenants ADD COLUMN timezone text NOT NULL DEFAULT 'Asia/Jakarta'
      CONSTRAINT tenants_timezone_iana CHECK (is_iana_time_zone(timezone))`);
}

/** Drops the column, its check and the function. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE tenants DROP COLUMN IF EXISTS timezone');
  await knex.raw('DROP FUNCTION IF EXISTS is_iana_time_zone(text)');
}
