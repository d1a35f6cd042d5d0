import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { makeTenant } from '../../helpers/fixtures.js';
import { seedDemo } from '../../../db/seeds/demo.js';

/** Issue 8 item 2, demo seed: PPPoE customers on the first NAS, one suspended and isolated, synced. */
describe('demo seed: customers on the network', function () {
  this.timeout(60_000);

  it('puts 4 active PPPoE customers and 1 suspended one on the first NAS, as pushed; suspend reasons set', async () => {
    const f = await makeTenant();
    await seedDemo(env.knex, { tenant: f.tenant.slug });
    const nas = await f.scope.table('nas').orderBy('id').first('id', 'isolation_profile');
    const onNas = await f.scope.table('customers').where({ nas_id: nas.id }).orderBy('id');
    expect(onNas.map((c: { status: string }) => c.status)).to.have.members([
      'active',
      'active',
      'active',
      'active',
      'suspended',
    ]);
    for (const c of onNas) {
      expect(c).to.include({ network_sync_status: 'synced', network_nas_id: nas.id, service_type: 'pppoe' });
      expect(c.pppoe_username).to.match(/^[a-z]+\.\d{6}$/);
      expect(c.network_state).to.equal(c.status === 'suspended' ? 'isolated' : 'active');
      const session = await f.scope.table('network_fake_sessions').where({ username: c.pppoe_username }).first();
      expect(session).to.include({ nas_id: nas.id, state: c.network_state });
      if (c.status === 'suspended') expect(session.profile).to.equal(nas.isolation_profile);
    }
    const suspended = await f.scope.table('customers').where({ status: 'suspended' });
    expect(suspended.length).to.be.greaterThan(0);
    for (const c of suspended) expect(['overdue', 'manual']).to.include(c.suspend_reason);
    expect(
      await f.scope.table('customers').whereNot({ status: 'suspended' }).whereNotNull('suspend_reason'),
    ).to.deep.equal([]);
  });
});
