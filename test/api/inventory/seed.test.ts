import { expect } from 'chai';
import { makeTenant, makeUser } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { seedDemo } from '../../../db/seeds/demo.js';
import { seedDemoInventory } from '../../../db/seeds/demo-inventory.js';
import { assertLedgerBalanced } from './support.js';

/** Issue 16 item 7: the demo inventory (locations, serial ONTs, suppliers, a request per state), idempotent. */
describe('demo inventory seed', () => {
  it('seeds locations, serial ONTs, suppliers with buy prices, a count, one request per state, the home-base mapping; a second run does nothing', async () => {
    const t = await makeTenant();
    const tech = await makeUser(t.tenant.id, 'technician');
    await seedDemo(env.knex, { tenant: t.tenant.slug });
    const q = (table: string) => env.knex(table).where({ tenant_id: t.tenant.id });
    const types = (await q('inventory_locations').pluck('type')).sort();
    expect(types).to.deep.equal(['pop', 'technician', 'warehouse']);
    expect((await q('inventory_locations').where({ type: 'technician' }).first()).holder_user_id).to.equal(tech.id);
    expect(await q('suppliers').count('* as n')).to.deep.equal([{ n: 2 }]);
    expect(Number((await q('supplier_items').count('* as n'))[0].n)).to.equal(6);
    const serials = await q('inventory_serials').select('status');
    expect(serials.length).to.equal(18);
    expect(serials.filter((s) => s.status === 'issued')).to.have.length(1);
    const states = (await q('inventory_requests').orderBy('id').pluck('status')) as string[];
    expect([...states].sort()).to.deep.equal([
      'approved',
      'cancelled',
      'completed',
      'deferred',
      'draft',
      'pending',
      'processing',
      'rejected',
    ]);
    expect(await q('inventory_counts').count('* as n')).to.deep.equal([{ n: 1 }]);
    expect(Number((await q('home_base_inventory_locations').count('* as n'))[0].n)).to.equal(2);
    expect(await assertLedgerBalanced(t.tenant.id)).to.be.greaterThan(5);
    const before = await q('inventory_mutations').count('* as n');
    expect(
      await env.knex.transaction((trx) =>
        seedDemoInventory(trx, t.tenant.id, { technicianId: null, serialPrefix: 'X' }),
      ),
    ).to.equal('exists');
    expect(await q('inventory_mutations').count('* as n')).to.deep.equal(before);
  });
});
