import { loadConfig, ConfigError } from '../lib/config.js';
import { createKnex, migrateLatest } from '../db/knex.js';

/**
 * The `release` process type (Procfile, DESIGN.md §1): runs the pending knex migrations against
 * DATABASE_URL and exits (0 on success, 1 with a message otherwise). It never seeds.
 */
async function main(): Promise<number> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL is required');
  const knex = createKnex(config.databaseUrl, { min: 0, max: 2 });
  try {
    const applied = await migrateLatest(knex);
    console.log(JSON.stringify({ msg: 'migrations applied', count: applied.length, migrations: applied }));
    return 0;
  } finally {
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
