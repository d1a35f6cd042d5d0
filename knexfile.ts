import { knexConfig } from './db/knex.js';
import { databaseUrlSetting } from './lib/config.js';

/** knex CLI configuration: DATABASE_URL must be set (bin/dev.ts prints it for the embedded default). */
const url = databaseUrlSetting();
if (!url) throw new Error('DATABASE_URL is required for the knex CLI');
export default knexConfig(url);
