import { expect } from 'chai';
import { env } from '../../helpers/env.js';
import { TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { PASSWORD, type TenantFixture } from '../../helpers/fixtures.js';
import { customerBody } from '../customers/support.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import * as customerNetwork from '../../../jobs/customer-network.js';
import * as ticketSla from '../../../jobs/ticket-sla.js';
import * as wabotSend from '../../../jobs/wabot-send.js';
import { sendJobId } from '../../../jobs/wabot/send-queue.js';
import { fakeJob } from '../../jobs/fake-job.js';
import { registry } from '../../../workers/registry.js';
import { JOB_POOL_MAX } from '../../../db/tenant-pools.js';
import { tenantScopeOf } from '../../../db/tenant-routing.js';
import { createFakeNetworkAdapter, type NetworkAdapter } from '../../../jobs/adapters/network/index.js';

/** What the cutover test shares with these cases (read when they run, after the cutover). */
export interface CutOverTenant {
  app: () => TestApp;
  tenant: () => TenantFixture;
  /** A query in the tenant's database (as the superuser). */
  inTenantDb: (sql: string, values?: unknown[]) => Promise<Record<string, any>[]>;
}

/**
 * Issue 15 item 4 ("Jobs and services follow db_mode"): registered inside the cutover test after
 * the cutover (one setup for both): a job of each family on the cut-over tenant writes its database
 * and leaves the shared rows untouched; a role change after the cutover shows in its database.
 */
export function jobsFollowDbMode(t: CutOverTenant): void {
  const shared = async (table: string, tenantId: number, key = 'id') =>
    env.knex(table).where({ tenant_id: tenantId }).orderBy(key);
  const deps = () => configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, queues: t.app().queues });

  it('customer-network-push (fake driver) and ticket-sla write the cut-over tenant’s database only', async () => {
    const a = t.tenant();
    const app = t.app();
    deps();
    const customersBefore = await shared('customers', a.tenant.id);
    const ticketsBefore = await shared('tickets', a.tenant.id);
    const sessionsBefore = await shared('network_fake_sessions', a.tenant.id, 'nas_id');
    // a NAS the tenant added after its cutover: in its database only
    const [nas] = await t.inTenantDb(
      `INSERT INTO nas (tenant_id, name, nas_key, host, isolation_profile)
       VALUES ($1, 'NAS after cutover', $2, '10.20.0.9', 'isolir') RETURNING id`,
      [a.tenant.id, `nas-cut-${a.tenant.id}`],
    );
    const created = await app.request('POST', '/api/customers', {
      token: a.adminToken,
      body: { ...customerBody(), nas_id: nas.id },
    });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.data.id;
    const [row] = await t.inTenantDb('SELECT network_version, pppoe_username FROM customers WHERE id = $1', [id]);
    const push = fakeJob({ tenant_id: a.tenant.id, customer_id: id, version: Number(row.network_version) });
    // a fake Job with the members a push reads (data, log, updateProgress, attemptsMade, opts.attempts)
    const result = await customerNetwork.process({ ...push.job, attemptsMade: 0, opts: { attempts: 3 } } as never);
    expect(result).to.deep.include({ kind: 'push', outcome: 'synced', state: 'active' });
    const [pushed] = await t.inTenantDb('SELECT network_sync_status, network_nas_id FROM customers WHERE id = $1', [
      id,
    ]);
    expect(pushed).to.deep.equal({ network_sync_status: 'synced', network_nas_id: nas.id });
    const sessions = await t.inTenantDb('SELECT state FROM network_fake_sessions WHERE nas_id = $1', [nas.id]);
    expect(sessions).to.deep.equal([{ state: 'active' }]);

    // ticket-sla: an open ticket of the tenant's database without due dates gets them there
    const ticket = await app.request('POST', '/api/tickets', {
      token: a.adminToken,
      body: { type: 'SLA after cutover' },
    });
    expect(ticket.status, ticket.text).to.equal(201);
    await t.inTenantDb(
      "UPDATE tickets SET response_due_at = NULL, resolution_due_at = NULL, status = 'open' WHERE id = $1",
      [ticket.body.data.id],
    );
    const sla = fakeJob({ tenant_id: a.tenant.id });
    const r = await ticketSla.process(sla.job);
    expect(r.tenants[String(a.tenant.id)]?.due_dates_set).to.be.at.least(1);
    const [due] = await t.inTenantDb('SELECT response_due_at, resolution_due_at FROM tickets WHERE id = $1', [
      ticket.body.data.id,
    ]);
    expect(due.response_due_at).to.be.an.instanceOf(Date);
    expect(due.resolution_due_at).to.be.an.instanceOf(Date);
    expect(sla.logs.join('\n')).to.contain(`tenant ${a.tenant.id}'s database`);

    expect(await shared('customers', a.tenant.id)).to.deep.equal(customersBefore);
    expect(await shared('tickets', a.tenant.id)).to.deep.equal(ticketsBefore);
    expect(await shared('network_fake_sessions', a.tenant.id, 'nas_id')).to.deep.equal(sessionsBefore);
  });

  it('the worker’s concurrency of customer-network pushes of one cut-over tenant run at once without a pool timeout', async () => {
    const a = t.tenant();
    const app = t.app();
    const n = registry['customer-network']!.concurrency!;
    // the jobs holding two connections at once (docs/decisions.md) cannot deadlock on the job pool
    expect(JOB_POOL_MAX).to.be.at.least(n + registry['imap-sync']!.concurrency! + 1);
    const [nas] = await t.inTenantDb(
      `INSERT INTO nas (tenant_id, name, nas_key, host, isolation_profile)
       VALUES ($1, 'NAS for the pool', $2, '10.20.0.10', 'isolir') RETURNING id`,
      [a.tenant.id, `nas-pool-${a.tenant.id}`],
    );
    const ids: number[] = [];
    for (let i = 0; i < n; i += 1) {
      const r = await app.request('POST', '/api/customers', {
        token: a.adminToken,
        body: { ...customerBody(), nas_id: nas.id },
      });
      expect(r.status, r.text).to.equal(201);
      ids.push(r.body.data.id);
    }
    const versions = await t.inTenantDb('SELECT id, network_version FROM customers WHERE id = ANY($1::int[])', [ids]);
    // the fake driver on the tenant's job pool, entered only once every push holds its transaction
    const real = createFakeNetworkAdapter((await tenantScopeOf(env.knex, a.tenant.id, TEST_WEB_APP_KEY, 'job')).knex);
    let inside = 0;
    let allInside = () => {};
    const everyone = new Promise<void>((res) => (allInside = res));
    const gated: NetworkAdapter = {
      driver: 'fake',
      apply: async (target, session, opts) => {
        inside += 1;
        if (inside === n) allInside();
        // bounded: with too small a pool the others never get in (the test then fails below)
        await Promise.race([everyone, new Promise((res) => setTimeout(res, 20_000))]);
        return real.apply(target, session, opts);
      },
      remove: (target, username, opts) => real.remove(target, username, opts),
    };
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY, networkAdapters: { fake: gated } });
    try {
      const results = await Promise.all(
        versions.map((v) => {
          const push = fakeJob({ tenant_id: a.tenant.id, customer_id: v.id, version: Number(v.network_version) });
          // a fake Job with the members a push reads (data, log, updateProgress, attemptsMade, opts.attempts)
          return customerNetwork.process({ ...push.job, attemptsMade: 0, opts: { attempts: 3 } } as never);
        }),
      );
      expect(inside).to.equal(n);
      for (const r of results) expect(r).to.deep.include({ kind: 'push', outcome: 'synced', state: 'active' });
    } finally {
      deps();
    }
    const sessions = await t.inTenantDb('SELECT count(*)::int AS n FROM network_fake_sessions WHERE nas_id = $1', [
      nas.id,
    ]);
    expect(sessions).to.deep.equal([{ n }]);
  });

  it('the wabot-send sweep finds a stale chat message in the cut-over tenant’s database', async () => {
    const a = t.tenant();
    deps();
    const sharedBefore = await shared('communication_messages', a.tenant.id);
    const [msg] = await t.inTenantDb(
      `INSERT INTO communication_messages (tenant_id, channel, direction, status, source, counterpart, body_text,
         account_ref, queued_at, occurred_at)
       VALUES ($1, 'whatsapp', 'out', 'queued', 'admin', '6281234567890', 'after cutover', 'default',
         now() - interval '1 hour', now() - interval '1 hour') RETURNING id`,
      [a.tenant.id],
    );
    const queue = t.app().queues.get('wabot-send');
    try {
      const sweep = fakeJob({});
      // a fake Job named as the sweep: the sweep reads name, log and updateProgress only
      const r = await wabotSend.process({ ...sweep.job, name: 'wabot-send-sweep' } as never);
      expect(r).to.deep.include({ kind: 'sweep' });
      expect((r as { tenants: Record<string, number> }).tenants[String(a.tenant.id)]).to.equal(1);
      const job = await queue.getJob(sendJobId(Number(msg.id)));
      expect(job?.data).to.deep.include({ tenant_id: a.tenant.id });
    } finally {
      await queue.remove(sendJobId(Number(msg.id)));
    }
    expect(await shared('communication_messages', a.tenant.id)).to.deep.equal(sharedBefore);
  });

  it('a user’s role change after the cutover (a new custom role) shows in the tenant database', async () => {
    const a = t.tenant();
    const app = t.app();
    const role = await app.request('POST', '/api/roles', {
      token: a.adminToken,
      body: { name: `Cutover Role ${a.tenant.id}`, permissions: ['customers.view'] },
    });
    expect(role.status, role.text).to.equal(201);
    const roleId = role.body.data.id;
    expect((await env.knex('roles').where({ id: roleId }).first()).tenant_id).to.equal(a.tenant.id);
    expect(await t.inTenantDb('SELECT name FROM roles WHERE id = $1', [roleId])).to.deep.equal([
      { name: `Cutover Role ${a.tenant.id}` },
    ]);
    const made = await app.request('POST', '/api/users', {
      token: a.adminToken,
      body: {
        name: 'Role Change User',
        email: `role-${a.tenant.id}-${roleId}@example.test`,
        password: PASSWORD,
        roles: ['Super Admin'],
      },
    });
    expect(made.status, made.text).to.equal(201);
    const userId = made.body.data.id;
    const user = await app.request('PUT', `/api/users/${userId}`, {
      token: a.adminToken,
      body: { roles: [`Cutover Role ${a.tenant.id}`] },
    });
    expect(user.status, user.text).to.equal(200);
    const sharedRoles = (await env.knex('user_roles').where({ user_id: userId }).orderBy('role_id')).map((x) =>
      Number(x.role_id),
    );
    expect(sharedRoles).to.deep.equal([roleId]);
    const tenantRoles = await t.inTenantDb('SELECT role_id FROM user_roles WHERE user_id = $1 ORDER BY role_id', [
      userId,
    ]);
    expect(tenantRoles.map((x) => Number(x.role_id))).to.deep.equal([roleId]);
    const grants = await t.inTenantDb(
      `SELECT p.name FROM role_permissions rp JOIN permissions p ON p.id = rp.permission_id WHERE rp.role_id = $1`,
      [roleId],
    );
    expect(grants).to.deep.equal([{ name: 'customers.view' }]);
  });

  it('an integration token made after the cutover lives in the shared database and opens the external API', async () => {
    const a = t.tenant();
    const app = t.app();
    const res = await app.request('POST', '/api/integrations/api-tokens', {
      token: a.adminToken,
      body: { name: 'After cutover', access: 'read' },
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.token).to.match(/^ispi_/);
    // auth_tokens stays shared (a token is looked up before its tenant is known)
    const row = await env.knex('auth_tokens').where({ id: res.body.data.id, tenant_id: a.tenant.id }).first('name');
    expect(row).to.deep.equal({ name: 'After cutover' });
    expect(await t.inTenantDb('SELECT id FROM auth_tokens WHERE id = $1', [res.body.data.id])).to.deep.equal([]);
    const ext = await app.request('GET', '/api/external/v1/customers?per_page=1', { token: res.body.token });
    expect(ext.status, ext.text).to.equal(200);
  });
}
