import { expect } from 'chai';
import pg from 'pg';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, PASSWORD, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { platformAdminToken } from './support.js';
import { runJob, saveTenantDbCredential } from './tenant-db-support.js';
import { customerBody } from '../customers/support.js';
import { configureCutover } from '../../../api/platform/tenant-db/cutover.js';
import { currentFingerprint } from '../../../api/platform/tenant-db/evidence.js';
import { closeTenantPools } from '../../../db/tenant-pools.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import { configureTenantRouting, CUTOVER_LOCK_CLASS, migrateTenantDatabases } from '../../../db/tenant-routing.js';
import * as idBlocks from '../../../jobs/tenant-db-id-blocks.js';
import { jobsFollowDbMode } from './tenant-db-cutover-jobs.js';
import { copiedTenant } from './tenant-db-evidence-support.js';
import { scansOnCutOverTenant } from './tenant-db-cutover-scans.js';
import { mailboxesOnCutOverTenants } from './tenant-db-cutover-mailboxes.js';
import { registry } from '../../../workers/registry.js';
import { leaveTenantsShared } from '../../helpers/shared-mode.js';

/**
 * Issue 15 items 3-5 on real PostgreSQL: after issue 14's pilot, schema and copy, changes in the
 * shared database, the cutover (with a write waiting on its lock), the cut-over tenant's API calls
 * and cron scan on its own database, the 5 s lock bound, the rollback plan and the rollback.
 */
describe('tenant databases: production cutover and rollback', function () {
  leaveTenantsShared();
  this.timeout(180_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  let a: TenantFixture;
  let b: TenantFixture;
  let basics: Awaited<ReturnType<typeof seedBasics>>;
  let tdb: pg.Client;
  let approvalId: number;
  /** The current evidence fingerprint of tenant a after the copy (approvals are recorded against it). */
  let FP = 'ab'.repeat(32);
  const base = (f: TenantFixture = a) => `/api/platform/tenants/${f.tenant.slug}/provisioning`;
  const call = (method: string, path: string, body?: object, f: TenantFixture = a) =>
    app.request(method, `${base(f)}/${path}`, { token: ops.token, body });
  const approve = async (tenantId: number, opts: { startMs?: number; endMs?: number } = {}) => {
    const now = Date.now();
    const [row] = await env
      .knex('tenant_db_approvals')
      .insert({
        tenant_id: tenantId,
        fingerprint: FP,
        approver: 'Ana Approver',
        rollback_owner: 'Rudi Rollback',
        monitoring_owner: 'Mona Monitor',
        reason: 'Cutover test of issue 15',
        window_start: new Date(now + (opts.startMs ?? -3600_000)),
        window_end: new Date(now + (opts.endMs ?? 2 * 3600_000)),
      })
      .returning('id');
    return Number(row.id);
  };
  const inTenantDb = async (sql: string, values: unknown[] = []) => (await tdb.query(sql, values)).rows;
  /** Tenant a after its cutover, for the cases registered from other files. */
  const cutOver = { app: () => app, tenant: () => a, inTenantDb, invoiceId: () => basics.invoiceId, other: () => b };

  before(async () => {
    app = await startTestApp();
    ops = await platformAdminToken();
    await env.knex('provisioning_credentials').del();
    await saveTenantDbCredential(app, ops.token);
    a = await makeTenant();
    b = await makeTenant();
    basics = await seedBasics(a);
    await seedBasics(a);
    await copiedTenant(app, ops.token, a.tenant.slug);
    // the evidence's gate: backups confirmed and the credentials enabled (issue 15 item 3)
    await env
      .knex('provisioning_settings')
      .insert({ id: 1, backup_ready: true, enabled: true })
      .onConflict('id')
      .merge();
    FP = await currentFingerprint({ knex: env.knex, appKey: TEST_WEB_APP_KEY }, a.tenant.id);
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    tdb = new pg.Client({ connectionString: env.adminDatabaseUrl.replace(/\/postgres$/, `/${row.database_name}`) });
    await tdb.connect();
  });
  after(async () => {
    configureCutover({});
    configureTenantRouting();
    await tdb?.end();
    await closeTenantPools();
  });

  it('refuses: wrong phrase, another tenant’s approval, wrong fingerprint, expired window, master tenant', async () => {
    approvalId = await approve(a.tenant.id);
    const body = { approval_id: approvalId, fingerprint: FP, confirm_phrase: 'CUTOVER TENANT DB PRODUCTION' };
    const phrase = await call('POST', 'tenant-db/cutover-production', { ...body, confirm_phrase: 'cutover' });
    expect(phrase.status).to.equal(422);
    expect(phrase.body.errors).to.have.property('confirm_phrase');
    const foreign = await call('POST', 'tenant-db/cutover-production', {
      ...body,
      approval_id: await approve(b.tenant.id),
    });
    expect(foreign.status, foreign.text).to.equal(404);
    const fp = await call('POST', 'tenant-db/cutover-production', { ...body, fingerprint: 'cd'.repeat(32) });
    expect(fp.status).to.equal(422);
    expect(fp.body.errors).to.have.property('fingerprint');
    // an approval of evidence that is no longer current
    const [stale] = await env
      .knex('tenant_db_approvals')
      .where({ id: approvalId })
      .select('approver', 'rollback_owner', 'monitoring_owner', 'reason', 'window_start', 'window_end', 'tenant_id');
    const [old] = await env
      .knex('tenant_db_approvals')
      .insert({ ...stale, fingerprint: 'ef'.repeat(32) })
      .returning('id');
    const changed = await call('POST', 'tenant-db/cutover-production', {
      ...body,
      approval_id: old.id,
      fingerprint: 'ef'.repeat(32),
    });
    expect(changed.status).to.equal(422);
    expect(changed.body.errors.fingerprint[0]).to.contain('evidence changed');
    await env.knex('tenant_db_approvals').where({ id: old.id }).update({ status: 'superseded' });
    // the gate failing now: backups not confirmed
    await env.knex('provisioning_settings').where({ id: 1 }).update({ backup_ready: false });
    try {
      const gate = await call('POST', 'tenant-db/cutover-production', body);
      expect(gate.status).to.equal(422);
      expect(gate.body.code).to.equal('INVALID_TRANSITION');
      expect(gate.body.message).to.contain('backup_ready');
    } finally {
      await env.knex('provisioning_settings').where({ id: 1 }).update({ backup_ready: true });
    }
    const expired = await approve(a.tenant.id, { startMs: -7200_000, endMs: -60_000 });
    const late = await call('POST', 'tenant-db/cutover-production', { ...body, approval_id: expired });
    expect(late.status).to.equal(422);
    expect(late.body.code).to.equal('INVALID_TRANSITION');
    expect(late.body.message).to.contain('expired');
    // at most one master: another file of the shard may have left one (restored afterwards)
    const master = (await env.knex('tenants').where({ is_master: true }).first('id')) as { id: number } | undefined;
    if (master) await env.knex('tenants').where({ id: master.id }).update({ is_master: false });
    await env.knex('tenants').where({ id: a.tenant.id }).update({ is_master: true });
    try {
      const master = await call('POST', 'tenant-db/cutover-production', body);
      expect(master.status).to.equal(422);
      expect(master.body.code).to.equal('INVALID_TRANSITION');
      expect(master.body.message).to.contain('shared_db_master');
    } finally {
      await env.knex('tenants').where({ id: a.tenant.id }).update({ is_master: false });
      if (master) await env.knex('tenants').where({ id: master.id }).update({ is_master: true });
    }
    expect(
      await env.knex('tenant_db_runs').where({ tenant_id: a.tenant.id, kind: 'cutover_production' }),
    ).to.have.length(0);
  });

  it('cutover: changes since the copy arrive, a write during the lock waits and lands in the tenant database', async () => {
    // changes in the shared database after the copy: a new customer, an updated invoice, a deleted ticket
    const created = await app.request('POST', '/api/customers', { token: a.adminToken, body: customerBody() });
    expect(created.status, created.text).to.equal(201);
    await env.knex('invoices').where({ id: basics.invoiceId }).update({ amount: 300000 });
    await env.knex('tickets').where({ id: basics.ticketId }).delete();
    let waiting: ReturnType<TestApp['request']> | undefined;
    let sawWait = false;
    // the locked pass may outlast 5 s on a loaded machine: this write waits as long as it takes
    // (the 5 s bound has its own test below)
    configureTenantRouting({ lockWaitMs: 120_000 });
    configureCutover({
      afterLock: async (tenantId) => {
        waiting = app.request('POST', '/api/customers', { token: a.adminToken, body: customerBody() });
        for (let i = 0; i < 200 && !sawWait; i += 1) {
          const r = await env.knex.raw(
            `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = ? AND objid = ?`,
            [CUTOVER_LOCK_CLASS, tenantId],
          );
          sawWait = r.rows[0].n > 0;
          if (!sawWait) await new Promise((res) => setTimeout(res, 25));
        }
      },
    });
    const body = { approval_id: approvalId, fingerprint: FP, confirm_phrase: 'CUTOVER TENANT DB PRODUCTION' };
    const r = await call('POST', 'tenant-db/cutover-production', body);
    expect(r.status, r.text).to.equal(202);
    expect(r.body.data).to.include({ kind: 'cutover_production', status: 'queued' });
    const run = await runJob(app, r.body.data.id);
    configureCutover({});
    const late = await waiting!;
    configureTenantRouting();
    expect(run.status, run.error).to.equal('succeeded');
    expect(sawWait, 'a write waited on the lock').to.equal(true);
    for (const t of run.result.verified.tables) expect(t, t.table).to.include({ ok: true });
    expect(run.result.verified.foreign_keys_unvalidated).to.equal(0);
    const tables = run.result.verified.tables.map((t: { table: string }) => t.table);
    expect(tables).to.include.members(['customers', 'invoices', 'tickets', 'audit_log', 'tenant_counters', 'users']);
    expect(late.status, late.text).to.equal(201);
    // the waiting write retried on the tenant database: there, not in shared
    expect(await inTenantDb('SELECT id FROM customers WHERE id = $1', [late.body.data.id])).to.have.length(1);
    expect(await env.knex('customers').where({ id: late.body.data.id })).to.have.length(0);
    // the changes before the cutover arrived
    expect(await inTenantDb('SELECT id FROM customers WHERE id = $1', [created.body.data.id])).to.have.length(1);
    expect((await inTenantDb('SELECT amount FROM invoices WHERE id = $1', [basics.invoiceId]))[0].amount).to.equal(
      (await env.knex('invoices').where({ id: basics.invoiceId }).first()).amount,
    );
    expect(await inTenantDb('SELECT id FROM tickets WHERE id = $1', [basics.ticketId])).to.have.length(0);
    // switched: both databases, status, approval
    expect((await env.knex('tenants').where({ id: a.tenant.id }).first()).db_mode).to.equal('tenant_db');
    expect((await inTenantDb('SELECT db_mode FROM tenants WHERE id = $1', [a.tenant.id]))[0].db_mode).to.equal(
      'tenant_db',
    );
    expect((await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first()).status).to.equal(
      'production',
    );
    const approval = await env.knex('tenant_db_approvals').where({ id: approvalId }).first();
    expect(approval).to.include({ status: 'used', cutover_run_id: run.id });
    const status = await call('GET', 'tenant-db/production-status');
    expect(status.status, status.text).to.equal(200);
    expect(status.body.data.routing.db_mode).to.equal('tenant_db');
    expect(status.body.data.routing.tenant_db_tables).to.include.members(['customers', 'audit_log', 'tenant_counters']);
    expect(status.body.data.routing.shared_tables).to.include.members(['auth_tokens', 'idempotency_keys', 'users']);
    // the id block of customers: the waiting write's id is inside it, the shared sequence beyond it
    const block = await env
      .knex('tenant_db_id_blocks')
      .where({ tenant_id: a.tenant.id, table_name: 'customers' })
      .first();
    expect(Number(late.body.data.id)).to.be.within(Number(block.block_start), Number(block.block_end));
    expect(Number(block.block_end) - Number(block.block_start) + 1).to.equal(1_000_000);
    const shared = await env.knex.raw('SELECT last_value FROM customers_id_seq');
    expect(Number(shared.rows[0].last_value)).to.be.at.least(Number(block.block_end));
  });

  it('a cut-over tenant’s API reads and writes its database; shared rows stay untouched', async () => {
    const sharedBefore = await env.knex('customers').where({ tenant_id: a.tenant.id }).orderBy('id');
    const created = await app.request('POST', '/api/customers', { token: a.adminToken, body: customerBody() });
    expect(created.status, created.text).to.equal(201);
    const id = created.body.data.id;
    const put = await app.request('PUT', `/api/customers/${basics.customerId}`, {
      token: a.adminToken,
      body: { name: 'Renamed In Tenant Db' },
    });
    expect(put.status, put.text).to.equal(200);
    expect((await inTenantDb('SELECT name FROM customers WHERE id = $1', [basics.customerId]))[0].name).to.equal(
      'Renamed In Tenant Db',
    );
    const list = await app.request('GET', '/api/customers?per_page=100', { token: a.adminToken });
    expect(list.status, list.text).to.equal(200);
    expect(list.body.data.map((c: { id: number }) => c.id)).to.include(id);
    const invoices = await app.request('GET', '/api/invoices', { token: a.adminToken });
    expect(invoices.status, invoices.text).to.equal(200);
    const inv = invoices.body.data.find((x: { id: number }) => x.id === basics.invoiceId);
    expect(Number(inv.amount)).to.equal(300000);
    const tickets = await app.request('GET', '/api/tickets', { token: a.adminToken });
    expect(tickets.status, tickets.text).to.equal(200);
    expect(tickets.body.data.map((t: { id: number }) => t.id)).to.not.include(basics.ticketId);
    const { token } = await makeIntegrationToken(a);
    const ext = await app.request('GET', '/api/external/v1/customers?per_page=100', { token });
    expect(ext.status, ext.text).to.equal(200);
    expect(ext.body.data.map((c: { id: number }) => c.id)).to.include(id);
    expect(await env.knex('customers').where({ tenant_id: a.tenant.id }).orderBy('id')).to.deep.equal(sharedBefore);
    // users stay shared; a user write also writes the user's copy in the tenant database
    const email = `tdb-user-${a.tenant.id}-${Date.now()}@example.test`;
    const user = await app.request('POST', '/api/users', {
      token: a.adminToken,
      body: { name: 'Tenant Db User', email, password: PASSWORD, roles: ['Super Admin'] },
    });
    expect(user.status, user.text).to.equal(201);
    expect((await env.knex('users').where({ id: user.body.data.id }).first()).email).to.equal(email);
    const renamed = await app.request('PUT', `/api/users/${user.body.data.id}`, {
      token: a.adminToken,
      body: { name: 'Tenant Db User Renamed' },
    });
    expect(renamed.status, renamed.text).to.equal(200);
    expect(await inTenantDb('SELECT email, name FROM users WHERE id = $1', [user.body.data.id])).to.deep.equal([
      { email, name: 'Tenant Db User Renamed' },
    ]);
  });

  it('id blocks: the scheduler moves a sequence 80 % through its block to a new one; release migrates tenant databases', async () => {
    const first = await env.knex('tenant_db_id_blocks').where({ tenant_id: a.tenant.id, table_name: 'customers' });
    expect(first).to.have.length(1);
    const start = Number(first[0].block_start);
    await tdb.query("SELECT setval(pg_get_serial_sequence('customers', 'id'), $1)", [start + 800_000]);
    configureJobDeps({ knex: env.knex, appKey: TEST_WEB_APP_KEY });
    const job = { id: 'test', data: {}, log: async () => {}, updateProgress: async () => {} };
    const r = await idBlocks.refillAll(env.knex, TEST_WEB_APP_KEY, job as never); // the JobLike: log only
    expect(r.failed).to.deep.equal({});
    expect(r.blocks[String(a.tenant.id)].map((x) => x.table)).to.deep.equal(['customers']);
    const next = r.blocks[String(a.tenant.id)][0];
    expect(next.start).to.be.greaterThan(Number(first[0].block_end));
    const again = await idBlocks.refillAll(env.knex, TEST_WEB_APP_KEY, job as never); // the same JobLike
    expect(again.blocks).to.deep.equal({});
    const created = await app.request('POST', '/api/customers', { token: a.adminToken, body: customerBody() });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.data.id).to.equal(next.start);
    const migrated = await migrateTenantDatabases(env.knex, TEST_WEB_APP_KEY);
    expect(migrated.find((m) => m.tenant_id === a.tenant.id)).to.deep.include({ applied: [] });
    expect(migrated.every((m) => !m.error)).to.equal(true);
  });

  // issue 15 item 4's cross-tenant scans on the cut-over tenant (tenant-db-cutover-scans.ts)
  scansOnCutOverTenant(cutOver);

  // issue 15 item 4: a job of each family and a role change on the cut-over tenant (one setup)
  jobsFollowDbMode({ app: () => app, tenant: () => a, inTenantDb });
  // customer mailboxes: the job in the tenant's database, one address across two databases
  mailboxesOnCutOverTenants({ ...cutOver, customerId: () => basics.customerId, opsToken: () => ops.token });

  it('a write waiting more than 5 s for the lock answers 503 tenant_db_cutover_in_progress', async () => {
    await tdb.query('BEGIN');
    try {
      await tdb.query('SELECT pg_advisory_xact_lock($1, $2)', [CUTOVER_LOCK_CLASS, a.tenant.id]);
      const t0 = Date.now();
      const r = await app.request('PUT', `/api/customers/${basics.customerId}`, {
        token: a.adminToken,
        body: { name: 'Never Written' },
      });
      expect(r.status, r.text).to.equal(503);
      expect(r.body.code).to.equal('tenant_db_cutover_in_progress');
      expect(Date.now() - t0).to.be.at.least(4900);
    } finally {
      await tdb.query('ROLLBACK');
    }
    expect((await inTenantDb('SELECT name FROM customers WHERE id = $1', [basics.customerId]))[0].name).to.equal(
      'Renamed In Tenant Db',
    );
  });

  it('rollback: the dry run plans and writes nothing; the rollback brings every row back with its id', async () => {
    const runs = await env.knex('tenant_db_runs').count('* as n').first();
    const audits = await env.knex('platform_audit_log').count('* as n').first();
    const dry = await call('POST', 'tenant-db/rollback-production', { approval_id: approvalId, dry_run: true });
    expect(dry.status, dry.text).to.equal(200);
    const customers = dry.body.data.tables.find((t: { table: string }) => t.table === 'customers');
    // 3 created by the API cases above, 1 + the push concurrency by the push cases (tenant-db-cutover-jobs.ts)
    const pushes = registry['customer-network']!.concurrency!;
    expect(customers).to.include({ to_insert: 4 + pushes, to_update: 1, to_delete: 0 });
    const planned = dry.body.data.tables.map((t: { table: string }) => t.table);
    for (const identity of ['tenants', 'users', 'roles', 'user_roles', 'role_permissions', 'permissions'])
      expect(planned).to.not.include(identity);
    expect(await env.knex('tenant_db_runs').count('* as n').first()).to.deep.equal(runs);
    expect(await env.knex('platform_audit_log').count('* as n').first()).to.deep.equal(audits);
    expect((await env.knex('tenants').where({ id: a.tenant.id }).first()).db_mode).to.equal('tenant_db');
    const noPhrase = await call('POST', 'tenant-db/rollback-production', { approval_id: approvalId });
    expect(noPhrase.status).to.equal(422);
    const r = await call('POST', 'tenant-db/rollback-production', {
      approval_id: approvalId,
      confirm_phrase: 'ROLLBACK TENANT DB PRODUCTION',
    });
    expect(r.status, r.text).to.equal(202);
    const run = await runJob(app, r.body.data.id);
    expect(run.status, run.error).to.equal('succeeded');
    for (const t of run.result.verified.tables) expect(t, t.table).to.include({ ok: true });
    const ids = (await inTenantDb('SELECT id, name FROM customers ORDER BY id')) as { id: number; name: string }[];
    const back = await env.knex('customers').where({ tenant_id: a.tenant.id }).orderBy('id').select('id', 'name');
    expect(back).to.deep.equal(ids);
    expect((await env.knex('tenants').where({ id: a.tenant.id }).first()).db_mode).to.equal('shared_db');
    expect((await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first()).status).to.equal(
      'data_copied',
    );
    expect(await env.knex('tenant_db_approvals').where({ id: approvalId }).first()).to.include({
      status: 'rolled_back',
      rollback_run_id: run.id,
    });
    // back on the shared database: the API writes there again
    const put = await app.request('PUT', `/api/customers/${basics.customerId}`, {
      token: a.adminToken,
      body: { name: 'Back In Shared' },
    });
    expect(put.status, put.text).to.equal(200);
    expect((await env.knex('customers').where({ id: basics.customerId }).first()).name).to.equal('Back In Shared');
  });
});
