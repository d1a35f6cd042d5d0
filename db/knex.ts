import knexPkg from 'knex';
import type { Knex } from 'knex';
import pg from 'pg';
import { Model } from 'objection';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const { knex: createKnexInstance } = knexPkg;

// numeric -> JS number (money is numeric(14,2): exact in a double for the amounts we handle);
// int8 -> number (ids and counters stay well under 2^53).
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => (v === null ? null : Number(v)));
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => (v === null ? null : Number(v)));
// date -> 'YYYY-MM-DD' string, never a JS Date shifted by the time zone.
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

/** Absolute path of db/migrations (knex reads the .ts migrations from here). */
export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Knex configuration for a database URL (used by knexfile.ts, the processes and the tests).
 * @param url postgres:// connection string
 * @param pool pool bounds (default 2..10)
 */
export function knexConfig(url: string, pool: { min: number; max: number } = { min: 0, max: 10 }): Knex.Config {
  return {
    client: 'pg',
    connection: url,
    pool,
    migrations: { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'], extension: 'ts', tableName: 'knex_migrations' },
  };
}

/**
 * Creates the process's one knex instance and binds Objection's Model to it.
 * Opens no connection until the first query.
 */
export function createKnex(url: string, pool?: { min: number; max: number }): Knex {
  const k = createKnexInstance(knexConfig(url, pool));
  Model.knex(k);
  return k;
}

/** Runs all pending migrations; returns the names applied. */
export async function migrateLatest(k: Knex): Promise<string[]> {
  const [, applied] = await k.migrate.latest();
  return applied as string[];
}

/** knex's Knex type, re-exported for modules that take the process's instance. */
export type { Knex };
