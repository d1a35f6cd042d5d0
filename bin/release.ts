import { loadConfig, ConfigError } from '../lib/config.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { migrateTenantDatabases } from '../db/tenant-routing.js';
import { closeTenantPools } from '../db/tenant-pools.js';

/**
 * The `release` process type (Procfile, DESIGN.md §1): runs the pending knex migrations against
 * DATABASE_URL, then in every tenant database with a schema (issue 15 item 4, as each tenant's
 * role), and exits (0 on success, 1 with a message otherwise, also when a tenant database failed:
 * the others are still migrated). It never seeds.
 */
async function main(): Promise<number> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL is required');
  const knex = createKnex(config.databaseUrl, { min: 0, max: 2 });
  try {
    const applied = await migrateLatest(knex);
    console.log(JSON.stringify({ msg: 'migrations applied', count: applied.length, migrations: applied }));
    const tenants = await migrateTenantDatabases(knex, config.appKey);
    for (const t of tenants) {
      if (t.error) console.error(JSON.stringify({ msg: 'tenant database migration failed', ...t }));
      else console.log(JSON.stringify({ msg: 'tenant database migrated', ...t, count: t.applied?.length ?? 0 }));
    }
    return tenants.some((t) => t.error) ? 1 : 0;
  } finally {
    await closeTenantPools();
    await knex.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`release failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
