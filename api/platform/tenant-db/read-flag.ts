import type { Knex } from 'knex';
import { InvalidTransition } from '../../errors.js';
import { recordPlatformAudit } from '../audit.js';
import { resolvePlatformTenant } from '../tenant-param.js';
import type { PlatformActor } from '../tenants-service.js';
import { readTenantDb } from './state.js';

/**
 * use_tenant_db_read (issue 14 item 7, decision): reads of the tenant's users may come from its own
 * database. On after a successful data copy, off after either rollback; operators set it with
 * `npm run cli -- tenant-db:read-flag --tenant <slug> --on|--off` (audited
 * `platform.tenant_db_read_flag`). On needs copied data (status data_copied or production).
 */
export async function setTenantDbReadFlag(
  knex: Knex,
  ref: string,
  on: boolean,
  actor: PlatformActor = { userId: null },
): Promise<{ tenant: string; status: string; use_tenant_db_read: boolean }> {
  return knex.transaction(async (trx) => {
    const tenant = await resolvePlatformTenant(trx, ref, { forUpdate: true });
    const row = await readTenantDb(trx, tenant.id, { forUpdate: true });
    if (on && row.status !== 'data_copied' && row.status !== 'production')
      throw new InvalidTransition(row.status, 'switch use_tenant_db_read on', ['data_copied', 'production']);
    if (row.use_tenant_db_read !== on) {
      await trx('tenant_databases')
        .where({ tenant_id: tenant.id })
        .update({ use_tenant_db_read: on, updated_at: trx.fn.now() });
      await recordPlatformAudit(trx, {
        userId: actor.userId,
        action: 'platform.tenant_db_read_flag',
        subject: { type: 'tenant', id: tenant.id },
        before: { use_tenant_db_read: row.use_tenant_db_read },
        after: { use_tenant_db_read: on },
        ip: actor.ip ?? null,
      });
    }
    return { tenant: tenant.slug, status: row.status, use_tenant_db_read: on };
  });
}
