import type { Knex } from 'knex';
import type { Check } from './report-base.js';

/**
 * The cutover gate's `dual_write_rolled_back` check (issue 15 items 3 and 6; decision in
 * docs/decisions.md "Issue 15"): ok when no dual-write row of the tenant is recorded in
 * `tenant_db_demo_rows` and the tenant's latest succeeded dual-write run (run or rollback) is a
 * rollback, or there never was one (nothing to roll back).
 * @param knex the shared database
 */
export async function dualWriteRolledBack(knex: Knex | Knex.Transaction, tenantId: number): Promise<Check> {
  const [{ n }] = (await knex('tenant_db_demo_rows')
    .where({ tenant_id: tenantId, origin: 'dual_write' })
    .count('* as n')) as { n: string }[];
  const last = (await knex('tenant_db_runs')
    .where({ tenant_id: tenantId, status: 'succeeded' })
    .whereIn('kind', ['dual_write_run', 'dual_write_rollback'])
    .orderBy('id', 'desc')
    .first('id', 'kind')) as { id: number; kind: string } | undefined;
  const rows = Number(n);
  const name = 'dual_write_rolled_back';
  if (rows > 0) return { name, ok: false, detail: `${rows} dual-write rows remain: roll the dual write back` };
  if (last?.kind === 'dual_write_run')
    return { name, ok: false, detail: `dual write run ${last.id} is not rolled back` };
  return {
    name,
    ok: true,
    detail: last ? `dual write rolled back by run ${last.id}` : 'no dual write was run: nothing to roll back',
  };
}
