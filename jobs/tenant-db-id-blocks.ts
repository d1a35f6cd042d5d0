import type { JobsOptions } from 'bullmq';
import type { Knex } from 'knex';
import { DEFAULT_JOB_OPTIONS, type JobLike, type JobSchedulerDef } from './queues.js';
import { jobDeps } from './deps.js';
import { scanScheduler } from './platform-scan.js';
import { tenantDbKnex } from '../db/tenant-routing.js';
import { refillIdBlocks, type IdBlock } from '../api/platform/tenant-db/id-blocks.js';

/**
 * Queue `tenant-db-id-blocks` (issue 15 item 3 e): every cut-over tenant's sequences whose id block
 * is 80 % used move to a new block of 1,000,000 reserved from the shared sequences
 * (api/platform/tenant-db/id-blocks.ts). Idempotent: a sequence below 80 % is left alone.
 */
export const QUEUE = 'tenant-db-id-blocks' as const;

/** Default options: a scan retried a few times. */
export const defaultOptions: JobsOptions = { ...DEFAULT_JOB_OPTIONS, attempts: 3 };

/** Every 10 minutes (UTC) and once when a worker starts: a block of 1,000,000 outlives that by far. */
export const scheduler: JobSchedulerDef = scanScheduler(
  QUEUE,
  'tenant-db-id-blocks-10min',
  { pattern: '*/10 * * * *', tz: 'UTC', immediately: true },
  defaultOptions,
);

/** The scan's result: new blocks per tenant id, and tenants whose database failed. */
export interface IdBlocksResult {
  blocks: Record<string, IdBlock[]>;
  failed: Record<string, string>;
}

/**
 * The scan of every cut-over tenant (tenants.db_mode = tenant_db).
 * @param knex the shared database
 */
export async function refillAll(
  knex: Knex,
  appKey: Buffer | undefined,
  job: JobLike<unknown>,
): Promise<IdBlocksResult> {
  const out: IdBlocksResult = { blocks: {}, failed: {} };
  const rows = (await knex('tenants as t')
    .join('tenant_databases as d', 'd.tenant_id', 't.id')
    .where('t.db_mode', 'tenant_db')
    .orderBy('t.id')
    .select('d.*')) as ({ tenant_id: number } & Parameters<typeof tenantDbKnex>[1])[];
  for (const row of rows) {
    try {
      if (!appKey) throw new Error('APP_KEY is needed to reach a tenant database');
      const blocks = await refillIdBlocks(knex, tenantDbKnex(row.tenant_id, row, appKey, 'job'), row.tenant_id);
      if (blocks.length) {
        out.blocks[String(row.tenant_id)] = blocks;
        await job.log(`tenant ${row.tenant_id}: new blocks for ${blocks.map((b) => b.table).join(', ')}`);
      }
    } catch (err) {
      out.failed[String(row.tenant_id)] = String((err as Error)?.message ?? err).slice(0, 300);
    }
  }
  return out;
}

/** BullMQ processor of `tenant-db-id-blocks`. */
export async function process(job: JobLike<unknown>): Promise<IdBlocksResult> {
  const { knex, appKey } = jobDeps();
  return refillAll(knex, appKey, job);
}
