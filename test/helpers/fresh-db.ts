import knexPkg from 'knex';
import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { knexConfig, migrateLatest } from '../../db/knex.js';
import { env, registerCleanup } from './env.js';

/**
 * A fresh, migrated database on the test server (the demo platform is only seeded into a database
 * without tenants), dropped after the run. Not bound to Objection's Model: the other tests keep theirs.
 * @returns the knex instance (pool 0..4) and the database's URL (for child processes)
 */
export async function freshDatabase(): Promise<{ knex: Knex; url: string }> {
  const name = `fresh_${randomBytes(4).toString('hex')}`;
  const admin = knexPkg.knex(knexConfig(env.adminDatabaseUrl, { min: 0, max: 1 }));
  await admin.raw(`CREATE DATABASE "${name}"`);
  const url = env.adminDatabaseUrl.replace(/\/[^/]+$/, `/${name}`);
  const k = knexPkg.knex(knexConfig(url, { min: 0, max: 4 }));
  registerCleanup(async () => {
    await k.destroy();
    await admin.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.destroy();
  });
  await migrateLatest(k);
  return { knex: k, url };
}
