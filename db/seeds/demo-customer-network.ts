import type { Knex } from 'knex';
import { TenantScope } from '../tenant-scope.js';

/**
 * Demo customers on the network (issue 8 item 2): the seeded suspended customers get their
 * suspend_reason (overdue when one of their invoices is overdue, else manual), and a few PPPoE
 * customers are put on the tenant's first NAS with a PPPoE username, as if the customer-network job
 * had pushed them: network state synced, and their sessions in the fake driver's table
 * (network_fake_sessions): `onNas` active ones with their package's profile and one suspended one
 * isolated with the NAS's isolation profile. No PPPoE passwords: the seed has no APP_KEY (set one
 * through PUT /api/customers/{id}). Deterministic: the first customers by id.
 */

/**
 * Seeds the network state of a demo tenant's customers (see the file comment).
 * @param opts.onNas how many active PPPoE customers to put on the NAS (plus one suspended, isolated)
 * @param opts.now the moment of the "push"
 * @returns the customers put on the NAS
 */
export async function seedDemoCustomerNetwork(
  trx: Knex.Transaction,
  tenantId: number,
  opts: { now: Date; onNas: number },
): Promise<number> {
  const s = new TenantScope(trx, tenantId);
  await s
    .table('customers', 'c')
    .where('c.status', 'suspended')
    .whereNull('c.suspend_reason')
    .update({
      suspend_reason: trx.raw(
        `CASE WHEN EXISTS (SELECT 1 FROM invoices i WHERE i.tenant_id = c.tenant_id AND i.customer_id = c.id
           AND i.status = 'overdue') THEN 'overdue' ELSE 'manual' END`,
      ),
      status_changed_at: trx.raw('c.updated_at'),
    });
  const nas = await s.table('nas').orderBy('id').first('id', 'isolation_profile');
  if (!nas) return 0;
  type Picked = { id: number; code: string; name: string; package: string | null };
  const pick = (status: string, n: number): Promise<Picked[]> =>
    s
      .table('customers', 'c')
      .leftJoin('packages as p', (j) => {
        j.on('p.id', 'c.package_id').andOn('p.tenant_id', 'c.tenant_id');
      })
      .where({ 'c.status': status, 'c.service_type': 'pppoe' })
      .orderBy('c.id')
      .limit(n)
      .select('c.id', 'c.code', 'c.name', 'p.name as package');
  const chosen = [
    ...(await pick('active', opts.onNas)).map((c) => ({ ...c, state: 'active' as const })),
    ...(await pick('suspended', 1)).map((c) => ({ ...c, state: 'isolated' as const })),
  ];
  for (const c of chosen) {
    const username = `${String(c.name).split(' ')[0].toLowerCase()}.${String(c.code).replace(/\D/g, '')}`;
    const [{ v }] = (await trx.raw(`SELECT nextval('customer_network_version_seq') AS v`)).rows;
    await s.table('customers').where({ id: c.id }).update({
      nas_id: nas.id,
      pppoe_username: username,
      network_version: v,
      network_sync_status: 'synced',
      network_state: c.state,
      network_requested_at: opts.now,
      network_synced_at: opts.now,
      network_nas_id: nas.id,
      network_username: username,
    });
    await s.insert(
      'network_fake_sessions',
      {
        nas_id: nas.id,
        username,
        state: c.state,
        profile: c.state === 'isolated' ? nas.isolation_profile : (c.package ?? null),
        service_type: 'pppoe',
        mac_address: null,
        password_sha256: null,
        version: v,
        updated_at: opts.now,
      },
      trx,
    );
  }
  return chosen.length;
}
