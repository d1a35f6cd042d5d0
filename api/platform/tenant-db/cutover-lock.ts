import type { Knex } from 'knex';
import { CUTOVER_LOCK_CLASS } from '../../../db/tenant-routing.js';

/**
 * The cutover lock (issue 15 item 3 b): a TenantScope write transaction takes
 * `pg_advisory_xact_lock_shared(15015, tenant)` (db/tenant-routing.ts writeGate) in the database it
 * writes to; the cutover and the production rollback hold the same key exclusively in BOTH
 * databases, each in a transaction of its own, so writes on either side wait (5 s, then 503) and
 * in-flight writes finish before the locked pass starts. A killed worker's lock dies with its
 * session (transaction-scoped).
 */

/** Both databases' lock transactions of one tenant. */
export interface ExclusiveLock {
  shared: Knex.Transaction;
  tenant: Knex.Transaction;
  /** Commits both (the tenant database first: the shared db_mode is what requests route by). */
  commit(): Promise<void>;
  /** Rolls both back (a failure before the switch: nothing switched). */
  rollback(): Promise<void>;
}

async function lockOne(k: Knex, tenantId: number): Promise<Knex.Transaction> {
  const trx = await k.transaction();
  trx.executionPromise.catch(() => {}); // a rollback is an outcome here, not an unhandled rejection
  try {
    await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [CUTOVER_LOCK_CLASS, tenantId]);
    return trx;
  } catch (err) {
    await trx.rollback().catch(() => {});
    throw err;
  }
}

/**
 * Takes the tenant's cutover lock exclusively in the shared and the tenant database (waits for
 * running writes; new writes wait behind it).
 * @param knex the shared database
 * @param tk the tenant database
 */
export async function lockExclusive(knex: Knex, tk: Knex, tenantId: number): Promise<ExclusiveLock> {
  const shared = await lockOne(knex, tenantId);
  let tenant: Knex.Transaction;
  try {
    tenant = await lockOne(tk, tenantId);
  } catch (err) {
    await shared.rollback().catch(() => {});
    throw err;
  }
  return {
    shared,
    tenant,
    async commit() {
      await tenant.commit();
      await shared.commit();
    },
    async rollback() {
      await tenant.rollback().catch(() => {});
      await shared.rollback().catch(() => {});
    },
  };
}
