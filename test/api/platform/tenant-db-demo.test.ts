import { expect } from 'chai';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { platformAdminToken } from './support.js';
import { seedDemoProvisioning, demoTenantDbOf } from '../../../db/seeds/demo-provisioning.js';
import { demoProvisioningTarget } from '../../../bin/dev-provisioning.js';
import { openSectionSecret } from '../../../jobs/provisioning/credentials.js';
import { closeTenantPools } from '../../../db/tenant-pools.js';
import { leaveTenantsShared } from '../../helpers/shared-mode.js';

/**
 * Issue 14 item 9: the demo's tenant_db credential (the embedded PostgreSQL's superuser; here the
 * test server's) and the demo guard on tenant database runs and rollbacks.
 */
describe('tenant databases: demo credential and demo guard', function () {
  leaveTenantsShared();
  this.timeout(60_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  let demo: TenantFixture;

  before(async () => {
    app = await startTestApp();
    ops = await platformAdminToken();
    await env.knex('provisioning_credentials').del();
    demo = await makeTenant({ demo: true });
  });
  after(() => closeTenantPools());

  it('demoProvisioningTarget: the tenant_db credential only for the embedded server (no DATABASE_URL)', () => {
    const url = 'postgres://postgres:p%40ss@127.0.0.1:54329/isp';
    expect(demoProvisioningTarget(3003, url, {}).tenantDb).to.deep.equal({
      host: '127.0.0.1',
      port: 54329,
      adminUser: 'postgres',
      adminPassword: 'p@ss',
    });
    expect(demoProvisioningTarget(3003, url, { DATABASE_URL: url }).tenantDb).to.equal(null);
    expect(demoProvisioningTarget(3003, null, {}).tenantDb).to.equal(null);
  });

  it('the seed saves tenant_db sealed, fake false, untested, once; the pilot preview reaches the server', async () => {
    const target = { ...demoProvisioningTarget(3003), tenantDb: demoTenantDbOf(env.adminDatabaseUrl) };
    const now = new Date();
    expect(await seedDemoProvisioning(env.knex, TEST_WEB_APP_KEY, target, now)).to.deep.equal([
      'cloudflare',
      'mail_panel',
      'tenant_db',
    ]);
    expect(await seedDemoProvisioning(env.knex, TEST_WEB_APP_KEY, target, now)).to.deep.equal([]);
    const row = await env.knex('provisioning_credentials').where({ section: 'tenant_db' }).first();
    const u = new URL(env.adminDatabaseUrl);
    expect(row).to.include({ fake: false, last_test: null });
    expect(row.settings).to.deep.equal({ host: u.hostname, port: Number(u.port), admin_user: u.username });
    expect(openSectionSecret(TEST_WEB_APP_KEY, 'tenant_db', row.secret_enc)).to.equal(decodeURIComponent(u.password));
    const other = await makeTenant();
    const p = await app.request('POST', `/api/platform/tenants/${other.tenant.slug}/provisioning/pilot-db/preview`, {
      token: ops.token,
      body: {},
    });
    expect(p.status, p.text).to.equal(200);
    expect(p.body.data.conflicts).to.include({ checked: true, database_exists: false, role_exists: false });
  });

  it('demo-mode tenant: every run and rollback 403 demo_guard_blocked, no run; previews and reports allowed', async () => {
    const steps: [string, object][] = [
      ['pilot-db/run', { confirm_phrase: 'RUN DB PILOT' }],
      ['pilot-db/rollback', { confirm_phrase: 'ROLLBACK DB PILOT' }],
      ['tenant-schema/run', { confirm_phrase: 'RUN TENANT SCHEMA' }],
      ['data-copy/dry-run', {}],
      ['data-copy/run', { confirm_phrase: 'COPY TENANT DATA PILOT' }],
      ['data-copy/rollback', { confirm_phrase: 'ROLLBACK TENANT DATA PILOT' }],
    ];
    const base = `/api/platform/tenants/${demo.tenant.slug}/provisioning`;
    for (const [path, body] of steps) {
      const r = await app.request('POST', `${base}/${path}`, { token: ops.token, body });
      expect(r.status, `${path}: ${r.text}`).to.equal(403);
      expect(r.body.code, path).to.equal('demo_guard_blocked');
      expect(r.body.message, path).to.contain('provisioning.run');
    }
    expect(await env.knex('tenant_db_runs').where({ tenant_id: demo.tenant.id })).to.deep.equal([]);
    expect((await app.queues.get('tenant-db').getJobs(['waiting', 'delayed', 'active'])).length).to.equal(0);
    const preview = await app.request('POST', `${base}/pilot-db/preview`, { token: ops.token, body: {} });
    expect(preview.status, preview.text).to.equal(200);
    const gate = await app.request('GET', `${base}/tenant-db/cutover-gate`, { token: ops.token });
    expect(gate.status, gate.text).to.equal(200);
    expect(gate.body.data.passed).to.equal(false);
  });
});
