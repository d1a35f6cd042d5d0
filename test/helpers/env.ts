import type { Knex } from 'knex';
import type { Redis } from 'ioredis';

/** Handles to the test run's real PostgreSQL and Redis (filled by setup.ts before any test). */
// Kept on globalThis: mocha may load setup.ts and the specs as separate module instances.
const g = globalThis as unknown as { __ispTestEnv?: object; __ispTestCleanups?: (() => unknown)[] };
export const env = (g.__ispTestEnv ??= {}) as {
  dir: string;
  databaseUrl: string;
  adminDatabaseUrl: string;
  redisUrl: string;
  knex: Knex;
  redis: Redis;
};

const cleanups = (g.__ispTestCleanups ??= []) as (() => Promise<unknown> | unknown)[];

/** Registers a teardown step; they run in reverse order after the whole run. */
export function registerCleanup(fn: () => Promise<unknown> | unknown): void {
  cleanups.push(fn);
}

export async function runCleanups(): Promise<void> {
  while (cleanups.length) {
    const fn = cleanups.pop()!;
    try {
      await fn();
    } catch (e) {
      console.error('cleanup failed:', e);
    }
  }
}
