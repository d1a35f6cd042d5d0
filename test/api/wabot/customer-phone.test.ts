import { expect } from 'chai';
import { customerByPhone } from '../../../api/wabot/inbound.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';

/** Issue 11: the customer of an inbound chat number, found through the phone-tail index. */
describe('customerByPhone: the customer of a WhatsApp number', () => {
  let f: TenantFixture;
  before(async () => {
    f = await makeTenant();
    const add = (code: string, phone: string) => f.scope.insert('customers', { code, name: code, phone, address: 'x' });
    await add('CUST-000001', '0812-3456-7801');
    await add('CUST-000002', '+62 813 1111 2222');
    await add('CUST-000003', '081311112222'); // the same number as CUST-000002: ambiguous
  });

  it('matches a formatted phone by its digits; an ambiguous or unknown number gives null', async () => {
    const one = await f.scope.table('customers').where({ code: 'CUST-000001' }).first('id');
    expect(await customerByPhone(f.scope, '6281234567801', '62')).to.equal(one.id);
    expect(await customerByPhone(f.scope, '6281311112222', '62')).to.equal(null);
    expect(await customerByPhone(f.scope, '6289999999999', '62')).to.equal(null);
  });

  it('looks the tail up through the index customers_tenant_phone_tail', async () => {
    const plan = await env.knex.transaction(async (trx) => {
      await trx.raw('SET LOCAL enable_seqscan = off');
      const r = await trx.raw(
        `EXPLAIN SELECT id FROM customers WHERE tenant_id = ? AND right(regexp_replace(phone, '[^0-9]', '', 'g'), 8) = ?`,
        [f.tenant.id, '34567801'],
      );
      return r.rows.map((x: { 'QUERY PLAN': string }) => x['QUERY PLAN']).join('\n');
    });
    expect(plan).to.include('customers_tenant_phone_tail');
  });
});
