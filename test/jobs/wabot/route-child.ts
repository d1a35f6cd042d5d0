/**
 * A process making routing picks for test/jobs/wabot/routing.test.ts (not a spec file).
 * Environment: REDIS_URL, TENANT_ID, PICKS, PREFIX, POOL (JSON [[id, weight], ...]).
 * Waits for "GO" on stdin so that the processes pick at the same time, then prints the picked ids
 * counted as JSON on one line and exits.
 */
import { Redis } from 'ioredis';
import { pickAccount } from '../../../jobs/wabot/routing.js';
import { memoryConfig } from '../../../bench/wabot/gateway.js';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};
const redis = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null });
const pool = JSON.parse(env('POOL')) as [string, number][];
const config = memoryConfig(
  Number(env('TENANT_ID')),
  pool.map(([id, weight]) => ({
    id,
    weight,
    provider: 'wablas',
    label: id,
    enabled: true,
    maxPerMinute: 0,
    delaySeconds: 0,
  })),
);
const picks = Number(env('PICKS'));
await redis.ping();
process.stdout.write('READY\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
const counts: Record<string, number> = {};
// 8 picks in flight at a time, as concurrent requests would
let left = picks;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (left > 0) {
      left -= 1;
      const a = await pickAccount(redis, config, { prefix: env('PREFIX') });
      counts[a!.id] = (counts[a!.id] ?? 0) + 1;
    }
  }),
);
process.stdout.write(`${JSON.stringify(counts)}\n`);
redis.disconnect();
process.exit(0);
