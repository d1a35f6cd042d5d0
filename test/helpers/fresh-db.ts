import knexPkg from 'knex';
import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { knexConfig, migrateLatest } from '../../db/knex.js';
import { env, registerCleanup } from './env.js';

/**
 * A fresh, migrated database on the test server (the demo platform is only seeded into a database
 * without tenants), dropped after the run. Not bound to Objection's Model: the other tests keep theirs.
 * A copy of {@link migratedTemplate}.
 * @returns the knex instance (pool 0..4) and the database's URL (for child processes)
 */
export async function freshDatabase(): Promise<{ knex: Knex; url: string }> {
  const name = `fresh_${randomBytes(4).toString('hex')}`;
  const admin = knexPkg.knex(knexConfig(env.adminDatabaseUrl, { min: 0, max: 1 }));
  await admin.raw(`CREATE DATABASE "${name}" TEMPLATE "${await migratedTemplate()}"`);
  const url = env.adminDatabaseUrl.replace(/\/[^/]+$/, `/${name}`);
  const k = knexPkg.knex(knexConfig(url, { min: 0, max: 4 }));
  registerCleanup(async () => {
    await k.destroy();
    await admin.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.destroy();
  });
  return { knex: k, url };
}

let template: Promise<string> | null = null;

/**
 * A database migrated once per test process, the template of every fresh one: CREATE DATABASE
 * ... TEMPLATE copies it in a fraction of a second where migrating each fresh database from
 * scratch took seconds. Nothing stays connected to it (PostgreSQL copies only an idle template).
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `fresh_tpl_${randomBytes(4).toString('hex')}`;
    const admin = knexPkg.knex(knexConfig(env.adminDatabaseUrl, { min: 0, max: 1 }));
    await admin.raw(`CREATE DATABASE "${name}"`);
    registerCleanup(async () => {
      await admin.raw(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.destroy();
    });
    const k = knexPkg.knex(knexConfig(env.adminDatabaseUrl.replace(/\/[^/]+$/, `/${name}`), { min: 0, max: 1 }));
    try {
      await migrateLatest(k);
    } finally {
      await k.destroy();
    }
    return name;
  })();
  return template;
}
