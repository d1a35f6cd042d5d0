import { env } from './env.js';

/**
 * For a test file whose tenants are cut over to tenant databases (issue 15): call it first in the
 * file's top-level describe. After the file, the tenants it made that are still in `tenant_db` mode
 * go back to `shared_db` in the run's shared database, so that the next files of the shard, whose
 * cross-tenant scan jobs (event dispatch, invoice-overdue, ticket-sla, ...) run with job deps that
 * hold no APP_KEY, do not meet a tenant database they cannot open. Tenants that existed before the
 * file (the demo ones, other files') are left as they are.
 */
export function leaveTenantsShared(): void {
  let before = 0;
  // mocha's global hooks, registered in the caller's describe
  globalThis.before(async () => {
    const row = (await env.knex('tenants').max({ m: 'id' }).first()) as { m: number | null } | undefined;
    before = Number(row?.m ?? 0);
  });
  globalThis.after(async () => {
    await env.knex('tenants').where('id', '>', before).where({ db_mode: 'tenant_db' }).update({ db_mode: 'shared_db' });
  });
}
