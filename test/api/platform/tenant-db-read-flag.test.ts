import { expect } from 'chai';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { COMMANDS } from '../../../bin/cli.js';

/** Issue 14 item 7: `npm run cli -- tenant-db:read-flag --tenant <slug> --on|--off` (the command table). */
describe('tenant databases: use_tenant_db_read', () => {
  let a: TenantFixture;
  const flag = (on: boolean) =>
    COMMANDS['tenant-db:read-flag'].run(
      env.knex,
      { tenant: a.tenant.slug, on: on || undefined, off: !on || undefined },
      {},
    );
  const audits = () =>
    env
      .knex('platform_audit_log')
      .where({ action: 'platform.tenant_db_read_flag', subject_id: a.tenant.id })
      .orderBy('id');

  before(async () => {
    a = await makeTenant();
  });

  it('--on needs copied data: 422 INVALID_TRANSITION before, nothing changed', async () => {
    let err: { status?: number; code?: string } = {};
    await flag(true).catch((e) => (err = e));
    expect(err).to.include({ status: 422, code: 'INVALID_TRANSITION' });
    expect(await audits()).to.have.length(0);
  });

  it('--on and --off after a copy, each change audited; --on and --off together is a usage error', async () => {
    await env.knex('tenant_databases').insert({ tenant_id: a.tenant.id, status: 'data_copied' });
    expect(await flag(true)).to.deep.equal({
      tenant_db: { tenant: a.tenant.slug, status: 'data_copied', use_tenant_db_read: true },
    });
    expect(await flag(true)).to.deep.include({
      tenant_db: { tenant: a.tenant.slug, status: 'data_copied', use_tenant_db_read: true },
    });
    expect((await flag(false)).tenant_db).to.include({ use_tenant_db_read: false });
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    expect(row.use_tenant_db_read).to.equal(false);
    expect((await audits()).map((x) => [x.user_id, x.before, x.after])).to.deep.equal([
      [null, { use_tenant_db_read: false }, { use_tenant_db_read: true }],
      [null, { use_tenant_db_read: true }, { use_tenant_db_read: false }],
    ]);
    const check = COMMANDS['tenant-db:read-flag'].check!;
    expect(check({ tenant: 'x', on: true, off: true })).to.contain('exactly one');
    expect(check({ tenant: 'x' })).to.contain('exactly one');
  });
});
