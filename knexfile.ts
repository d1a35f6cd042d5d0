import { knexConfig } from './db/knex.js';

/** knex CLI configuration: DATABASE_URL must be set (bin/dev.ts prints it for the embedded default). */
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL is required for the knex CLI');
export default knexConfig(url);
