import { expect } from 'chai';
import knexPkg from 'knex';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { ManualClock } from '../../../lib/clock.js';
import { platformAdminToken } from './support.js';
import { saveTenantDbCredential } from './tenant-db-support.js';
import { copiedTenant, runStep, tenantKnex } from './tenant-db-evidence-support.js';
import { closeTenantPools, tenantKnexConfig } from '../../../db/tenant-pools.js';
import { fingerprintOf } from '../../../api/platform/tenant-db/evidence.js';
import { usableApproval } from '../../../api/platform/tenant-db/approval.js';
import { dualWrite } from '../../../api/platform/tenant-db/dual-write.js';

const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Issue 15 items 1, 2, 6, 7 and the gate's new checks on real PostgreSQL: readiness snapshot and
 * verify, production approval (window rules on a ManualClock), demo seed and dual write with their
 * rollbacks (runs executed in this process, no worker), access of every new endpoint.
 */
describe('tenant databases: evidence, approval, demo seed, dual write', function () {
  this.timeout(180_000);
  const clock = new ManualClock();
  let app: TestApp;
  let ops: { id: number; token: string };
  let a: TenantFixture;
  const base = (slug = a.tenant.slug) => `/api/platform/tenants/${slug}/provisioning/tenant-db`;
  const get = async (path: string, slug?: string) => {
    const r = await app.request('GET', `${base(slug)}/${path}`, { token: ops.token });
    expect(r.status, `${path}: ${r.text}`).to.equal(200);
    return r.body.data;
  };
  const snapshot = () => get('readiness-snapshot');
  const verify = (fp: string, slug?: string) => get(`readiness-snapshot/verify?fingerprint=${fp}`, slug);
  const gateCheck = async (name: string) =>
    (await get('cutover-gate')).checks.find((c: { name: string }) => c.name === name);
  const approveBody = async (over: Record<string, unknown> = {}) => ({
    fingerprint: 'fingerprint' in over ? over.fingerprint : (await snapshot()).evidence.fingerprint,
    approver: 'Ana Approver',
    maintenance_window: `${iso(clock.now().getTime())}/${iso(clock.now().getTime() + 2 * HOUR)}`,
    rollback_owner: 'Rob Rollback',
    monitoring_owner: 'Mo Monitor',
    reason: 'Pilot verified; moving the tenant in the quiet hours.',
    confirm_phrase: 'APPROVE TENANT DB PRODUCTION',
    ...over,
  });
  const approve = (body: object) => app.request('POST', `${base()}/approve-production`, { token: ops.token, body });
  const approvals = () => env.knex('tenant_db_approvals').where({ tenant_id: a.tenant.id }).orderBy('id');
  const settings = (s: { backup_ready: boolean; enabled: boolean }) =>
    env
      .knex('provisioning_settings')
      .insert({ id: 1, ...s })
      .onConflict('id')
      .merge();

  before(async () => {
    app = await startTestApp({ tenantDbClock: clock });
    ops = await platformAdminToken();
    await env.knex('provisioning_credentials').del();
    await saveTenantDbCredential(app, ops.token);
    await settings({ backup_ready: true, enabled: true });
    a = await makeTenant();
    await seedBasics(a);
    await copiedTenant(app, ops.token, a.tenant.slug);
  });
  after(() => closeTenantPools());

  it('snapshot: evidence fingerprinted and stable, observed live, cutover never allowed, commands; verify ready', async () => {
    const s = await snapshot();
    expect(Object.keys(s).sort()).to.deep.equal(['commands', 'db_mode', 'evidence', 'observed', 'production_cutover']);
    expect(s.db_mode).to.equal('shared_db');
    expect(s.production_cutover.allowed).to.equal(false);
    const e = s.evidence;
    expect(e.fingerprint).to.match(/^[0-9a-f]{64}$/);
    expect(fingerprintOf(e)).to.equal(e.fingerprint);
    expect(e).to.include({ status: 'data_copied' });
    expect(e.tenant).to.deep.equal({ id: a.tenant.id, slug: a.tenant.slug });
    expect(e.target.database).to.equal(`isp_t_${a.tenant.slug.replace(/-/g, '_')}`);
    const lastMigration = await env.knex('knex_migrations').orderBy('id', 'desc').first('name');
    expect(e.last_migration).to.equal(lastMigration.name);
    const copyRun = await env
      .knex('tenant_db_runs')
      .where({ tenant_id: a.tenant.id, kind: 'copy_run', status: 'succeeded' })
      .first();
    expect(e.copy.run_id).to.equal(copyRun.id);
    expect(e.copy.tables.find((t: { table: string }) => t.table === 'customers')).to.include({ count: 1 });
    expect(e.gate.passed).to.equal(true);
    expect(e.gate.checks.map((c: { name: string }) => c.name)).to.include.members([
      'backup_ready',
      'credentials_enabled',
      'dual_write_rolled_back',
    ]);
    expect(s.observed.reconciliation.totals).to.deep.equal({
      missing_in_tenant: 0,
      changed: 0,
      accepted_pilot_extra: 0,
      blocking_extra_key_count: 0,
    });
    expect(s.observed.at).to.equal(clock.now().toISOString());
    expect(s.commands.map((c: { step: string }) => c.step)).to.deep.equal(['verify', 'approve', 'cutover']);
    expect(s.commands[0].path).to.equal(`${base()}/readiness-snapshot/verify?fingerprint=${e.fingerprint}`);
    expect(s.commands[1].body).to.include({
      fingerprint: e.fingerprint,
      confirm_phrase: 'APPROVE TENANT DB PRODUCTION',
    });
    // stable per state: the observed time moves, the fingerprint does not
    clock.advance(60_000);
    expect((await snapshot()).evidence.fingerprint).to.equal(e.fingerprint);
    expect(await verify(e.fingerprint)).to.deep.equal({
      matched: true,
      decision: 'ready_for_approval',
      operator_action: 'POST tenant-db/approve-production with this fingerprint and a maintenance window.',
      production_cutover_allowed: false,
    });
    expect(await verify(e.fingerprint.toUpperCase())).to.include({ matched: true });

    // a daily write in the shared database: observed sees it, the evidence (and its approvals) do not
    const c = await env.knex('customers').where({ tenant_id: a.tenant.id }).first('id', 'name');
    await env
      .knex('customers')
      .where({ id: c.id })
      .update({ name: `${c.name} (moved house)` });
    try {
      const after = await snapshot();
      expect(after.evidence.fingerprint).to.equal(e.fingerprint);
      expect(after.observed.reconciliation.totals).to.include({ changed: 1 });
      expect(after.observed.gate.passed).to.equal(false);
      expect(await verify(e.fingerprint)).to.include({ matched: true, decision: 'ready_for_approval' });
    } finally {
      await env.knex('customers').where({ id: c.id }).update({ name: c.name });
    }
  });

  it('verify: a bad or missing fingerprint 422; another fingerprint evidence_changed', async () => {
    for (const q of ['?fingerprint=abc', `?fingerprint=${'g'.repeat(64)}`, '', `?fingerprint=${'a'.repeat(65)}`]) {
      const r = await app.request('GET', `${base()}/readiness-snapshot/verify${q}`, { token: ops.token });
      expect(r.status, q).to.equal(422);
      expect(r.body.code).to.equal('VALIDATION_FAILED');
      expect(r.body.errors).to.have.property('fingerprint');
    }
    expect(await verify('f'.repeat(64))).to.include({
      matched: false,
      decision: 'evidence_changed',
      production_cutover_allowed: false,
    });
  });

  it('master tenant: db_mode shared_db_master, verify master_tenant, approval refused', async () => {
    const m = await makeTenant();
    // at most one master: another file of the shard (the fuzz's PUT tenants) may have left one
    await env.knex('tenants').where({ is_master: true }).update({ is_master: false });
    await env.knex('tenants').where({ id: m.tenant.id }).update({ is_master: true });
    try {
      const s = await get('readiness-snapshot', m.tenant.slug);
      expect(s.db_mode).to.equal('shared_db_master');
      expect(s.production_cutover.allowed).to.equal(false);
      expect(s.commands.map((c: { step: string }) => c.step)).to.deep.equal(['verify']);
      expect(await verify(s.evidence.fingerprint, m.tenant.slug)).to.include({
        matched: true,
        decision: 'master_tenant',
        production_cutover_allowed: false,
      });
      const r = await app.request('POST', `${base(m.tenant.slug)}/approve-production`, {
        token: ops.token,
        body: await approveBody({ fingerprint: s.evidence.fingerprint }),
      });
      expect(r.status).to.equal(422);
      expect(r.body.code).to.equal('INVALID_TRANSITION');
      expect(r.body.message).to.contain('master tenant');
    } finally {
      await env.knex('tenants').where({ id: m.tenant.id }).update({ is_master: false });
    }
  });

  it('demo seed: DEMO- rows in the tenant database only, ids from shared sequences, accepted_pilot_extra; rollback', async () => {
    const before = (await snapshot()).evidence.fingerprint;
    const run = await runStep(app, ops.token, a.tenant.slug, 'tenant-db/demo-seed', {
      confirm_phrase: 'SEED TENANT DB DEMO DATA',
    });
    expect(run.result.written).to.deep.equal({ customers: 2, invoices: 2, tickets: 1 });
    const rec = await env.knex('tenant_db_demo_rows').where({ tenant_id: a.tenant.id }).orderBy('id');
    expect(rec.map((r) => `${r.table_name}:${r.demo_key}:${r.origin}`)).to.deep.equal([
      'customers:DEMO-C0001:demo_seed',
      'customers:DEMO-C0002:demo_seed',
      'invoices:DEMO-INV-0001:demo_seed',
      'invoices:DEMO-INV-0002:demo_seed',
      'tickets:DEMO-TCK-0001:demo_seed',
    ]);
    const tk = await tenantKnex(a.tenant.id);
    const demoCustomers = await tk('customers').where('code', 'like', 'DEMO-%').orderBy('id');
    expect(demoCustomers.map((c) => [c.id, c.code])).to.deep.equal(
      rec.filter((r) => r.table_name === 'customers').map((r) => [Number(r.row_id), r.demo_key]),
    );
    expect(await env.knex('customers').where('code', 'like', 'DEMO-%')).to.have.length(0);
    // the shared sequence moved past the demo ids: the next shared customer gets a higher id
    const next = await env.knex.raw(`SELECT nextval(pg_get_serial_sequence('customers', 'id')) AS id`);
    expect(Number(next.rows[0].id)).to.be.greaterThan(demoCustomers[1].id);
    const r = (await get('reconciliation')).totals;
    expect(r).to.deep.equal({ missing_in_tenant: 0, changed: 0, accepted_pilot_extra: 5, blocking_extra_key_count: 0 });
    const flow = await get('demo-flow');
    expect([flow.customers.count, flow.invoices.count, flow.tickets.count]).to.deep.equal([2, 2, 1]);
    expect((await get('cutover-gate')).passed).to.equal(true);
    expect((await snapshot()).evidence.fingerprint).to.equal(before);
    // a second seed is idempotent
    await runStep(app, ops.token, a.tenant.slug, 'tenant-db/demo-seed', { confirm_phrase: 'SEED TENANT DB DEMO DATA' });
    expect(await env.knex('tenant_db_demo_rows').where({ tenant_id: a.tenant.id })).to.have.length(5);

    const back = await runStep(app, ops.token, a.tenant.slug, 'tenant-db/demo-seed/rollback', {
      confirm_phrase: 'ROLLBACK TENANT DB DEMO DATA',
    });
    expect(back.result).to.deep.include({ records_removed: 5, deleted: { tickets: 1, invoices: 2, customers: 2 } });
    expect(await tk('customers').where('code', 'like', 'DEMO-%')).to.have.length(0);
    expect(await env.knex('tenant_db_demo_rows').where({ tenant_id: a.tenant.id })).to.have.length(0);
    expect((await get('reconciliation')).totals.accepted_pilot_extra).to.equal(0);
  });

  it('dual write: both databases, equal row hashes recorded; the gate fails until its rollback; the writer refuses CUST-000001', async () => {
    const fp = (await snapshot()).evidence.fingerprint;
    const run = await runStep(app, ops.token, a.tenant.slug, 'tenant-db/dual-write/run', {
      confirm_phrase: 'RUN TENANT DB DUAL WRITE PILOT',
    });
    expect(run.result.hashes_equal).to.equal(true);
    expect(run.result.rows.map((x: { table: string; equal: boolean }) => `${x.table}:${x.equal}`)).to.deep.equal([
      'customers:true',
      'invoices:true',
      'tickets:true',
    ]);
    const tk = await tenantKnex(a.tenant.id);
    const shared = await env.knex('customers').where({ code: 'DEMO-DW-C0001' }).first();
    const tenant = await tk('customers').where({ code: 'DEMO-DW-C0001' }).first();
    expect(shared.name).to.equal('Demo Dual Write (updated)');
    expect(tenant).to.deep.equal(shared);
    expect((await tk('invoices').where({ invoice_number: 'DEMO-DW-INV-0001' }).first()).amount).to.equal(125000);
    const rec = await env.knex('tenant_db_demo_rows').where({ tenant_id: a.tenant.id, origin: 'dual_write' });
    expect(rec).to.have.length(3);
    for (const x of rec)
      expect(x.shared_hash)
        .to.match(/^[0-9a-f]{32}$/)
        .and.equal(x.tenant_hash);
    expect((await get('reconciliation')).totals).to.include({
      missing_in_tenant: 0,
      changed: 0,
      blocking_extra_key_count: 0,
    });
    expect(await gateCheck('dual_write_rolled_back')).to.include({ ok: false });
    expect(await verify(fp)).to.include({ matched: false, decision: 'evidence_changed' });
    const failing = (await snapshot()).evidence.fingerprint;
    expect(await verify(failing)).to.include({ matched: true, decision: 'gate_failing' });
    const refused = await approve(await approveBody());
    expect(refused.status).to.equal(422);
    expect(refused.body.code).to.equal('INVALID_TRANSITION');
    expect(refused.body.message).to.contain('dual_write_rolled_back');

    const back = await runStep(app, ops.token, a.tenant.slug, 'tenant-db/dual-write/rollback', {
      confirm_phrase: 'ROLLBACK TENANT DB DUAL WRITE PILOT',
    });
    expect(back.result.deleted).to.deep.equal({
      shared: { tickets: 1, invoices: 1, customers: 1 },
      tenant: { tickets: 1, invoices: 1, customers: 1 },
    });
    expect(await env.knex('customers').where('code', 'like', 'DEMO-%')).to.have.length(0);
    expect(await tk('customers').where('code', 'like', 'DEMO-%')).to.have.length(0);
    expect(await gateCheck('dual_write_rolled_back')).to.deep.equal({
      name: 'dual_write_rolled_back',
      ok: true,
      detail: `dual write rolled back by run ${back.id}`,
    });
    expect((await snapshot()).evidence.fingerprint).to.equal(fp);

    let called = false;
    const write = async () => {
      called = true;
      return 0;
    };
    const caught = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: Error) => e,
      );
    let err = await caught(dualWrite(env.knex, tk, 'customers', 'CUST-000001', write));
    expect(err?.message).to.contain('CUST-000001 is not a DEMO- key');
    expect(called).to.equal(false);
    // a tenant failure undoes the shared write (the tenant commit runs inside the shared transaction)
    const down = knexPkg.knex(
      tenantKnexConfig({ host: '127.0.0.1', port: 1, database: 'x', user: 'x', password: 'x' }),
    );
    try {
      err = await caught(
        dualWrite(env.knex, down, 'customers', 'DEMO-DW-FAIL', async (trx) => {
          const [{ id }] = await trx('customers')
            .insert({ tenant_id: a.tenant.id, code: 'DEMO-DW-FAIL', name: 'x', phone: '0800', address: 'x' })
            .returning('id');
          return id;
        }),
      );
      expect(err?.message).to.contain('ECONNREFUSED');
      expect(await env.knex('customers').where({ code: 'DEMO-DW-FAIL' })).to.have.length(0);
    } finally {
      await down.destroy();
    }
  });

  it('approval: every refusal 422 and nothing recorded; then 201, supersede, audit', async () => {
    const now = clock.now().getTime();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ maintenance_window: `${iso(now)}/${iso(now + 12 * HOUR + 1000)}` }, 'maintenance_window', '12 hours'],
      [{ maintenance_window: `${iso(now - 3 * HOUR)}/${iso(now - HOUR)}` }, 'maintenance_window', 'ended'],
      [
        { maintenance_window: `${iso(now + 15 * 86_400_000)}/${iso(now + 15 * 86_400_000 + HOUR)}` },
        'maintenance_window',
        '14 days',
      ],
      [{ maintenance_window: `${iso(now + HOUR)}/${iso(now)}` }, 'maintenance_window', 'end after'],
      [{ maintenance_window: 'tomorrow' }, 'maintenance_window', 'ISO 8601'],
      [{ maintenance_window: `${iso(now)}/PT2H` }, 'maintenance_window', 'ISO 8601'],
      [{ reason: 'too short' }, 'reason', ''],
      [{ approver: 'A' }, 'approver', ''],
      [{ rollback_owner: 'x'.repeat(191) }, 'rollback_owner', ''],
      [{ monitoring_owner: undefined }, 'monitoring_owner', ''],
      [{ confirm_phrase: 'approve tenant db production' }, 'confirm_phrase', ''],
      [{ fingerprint: 'f'.repeat(64) }, 'fingerprint', 'evidence_changed'],
      [{ fingerprint: 'nope' }, 'fingerprint', ''],
    ];
    const fingerprint = (await snapshot()).evidence.fingerprint;
    for (const [over, field, text] of cases) {
      const r = await approve(await approveBody({ fingerprint, ...over }));
      expect(r.status, JSON.stringify(over)).to.equal(422);
      expect(r.body.code).to.equal('VALIDATION_FAILED');
      expect(r.body.errors, JSON.stringify(over)).to.have.property(field);
      expect(r.body.errors[field][0]).to.contain(text);
    }
    // gate failing: backup_ready false (with the new current fingerprint)
    await settings({ backup_ready: false, enabled: true });
    try {
      const r = await approve(await approveBody());
      expect(r.status).to.equal(422);
      expect(r.body.code).to.equal('INVALID_TRANSITION');
      expect(r.body.message).to.contain('backup_ready (backup_ready is off)');
    } finally {
      await settings({ backup_ready: true, enabled: true });
    }
    expect(await approvals()).to.have.length(0);

    const first = await approve(await approveBody());
    expect(first.status, first.text).to.equal(201);
    const body = await approveBody();
    expect(first.body.data).to.include({
      tenant_id: a.tenant.id,
      status: 'approved',
      fingerprint: body.fingerprint,
      approver: 'Ana Approver',
      approved_by: ops.id,
      expired: false,
      maintenance_window: body.maintenance_window.replace(/Z/g, '.000Z').replace(/\.(\d{3})\.000Z/g, '.$1Z'),
    });
    const second = await approve(await approveBody({ approver: 'Bea Approver' }));
    expect(second.status).to.equal(201);
    const rows = await approvals();
    expect(rows.map((x) => [x.id, x.status])).to.deep.equal([
      [first.body.data.id, 'superseded'],
      [second.body.data.id, 'approved'],
    ]);
    expect(rows[0].superseded_at).to.not.equal(null);
    const audit = await env
      .knex('platform_audit_log')
      .where({ action: 'platform.tenant_db_approve_production', subject_id: a.tenant.id })
      .orderBy('id');
    expect(audit.map((x) => x.after.approval_id)).to.deep.equal([first.body.data.id, second.body.data.id]);
    expect(audit[1].after.superseded).to.deep.equal([first.body.data.id]);
  });

  it('usableApproval: the current approval in its window; used, expired, superseded, rolled back, not started, foreign 404', async () => {
    const rows = await approvals();
    const [old, cur] = [rows[0], rows[1]];
    expect((await usableApproval(env.knex, a.tenant.id, cur.id, clock)).id).to.equal(cur.id);
    const refused = async (id: number, text: string, c = clock, tenantId = a.tenant.id) => {
      let err: { status?: number; code?: string; message?: string } = {};
      await usableApproval(env.knex, tenantId, id, c).catch((e) => (err = e));
      expect(err.message, text).to.contain(text);
      return err;
    };
    expect((await refused(old.id, 'superseded')).code).to.equal('INVALID_TRANSITION');
    expect(await refused(cur.id, 'expired', new ManualClock(new Date(cur.window_end).getTime() + 1))).to.include({
      status: 422,
    });
    await refused(cur.id, 'not started', new ManualClock(new Date(cur.window_start).getTime() - 1));
    expect((await refused(cur.id, 'not found', clock, a.tenant.id + 100000)).status).to.equal(404);
    expect((await refused(987654321, 'not found')).status).to.equal(404);
    await env.knex('tenant_db_approvals').where({ id: cur.id }).update({ status: 'used' });
    await refused(cur.id, 'already used');
    await env.knex('tenant_db_approvals').where({ id: cur.id }).update({ status: 'rolled_back' });
    await refused(cur.id, 'rolled back');
    await env.knex('tenant_db_approvals').where({ id: cur.id }).update({ status: 'approved' });
  });

  it('fingerprint changed by a re-copy: the old one refused by verify and approval', async () => {
    const old = (await snapshot()).evidence.fingerprint;
    await runStep(app, ops.token, a.tenant.slug, 'data-copy/rollback', {
      confirm_phrase: 'ROLLBACK TENANT DATA PILOT',
    });
    await runStep(app, ops.token, a.tenant.slug, 'data-copy/dry-run');
    await runStep(app, ops.token, a.tenant.slug, 'data-copy/run', { confirm_phrase: 'COPY TENANT DATA PILOT' });
    const s = await snapshot();
    expect(s.evidence.fingerprint).to.not.equal(old);
    expect(s.evidence.gate.passed).to.equal(true);
    expect(await verify(old)).to.include({ matched: false, decision: 'evidence_changed' });
    expect(await verify(s.evidence.fingerprint)).to.include({ matched: true, decision: 'ready_for_approval' });
    const r = await approve(await approveBody({ fingerprint: old }));
    expect(r.status).to.equal(422);
    expect(r.body.errors.fingerprint[0]).to.contain('evidence_changed');
  });

  it('every new endpoint: platform admin 2xx, tenant Super Admin 403, integration token 401, none 401; unknown tenant 404', async () => {
    const integration = await makeIntegrationToken(a, 'read_write');
    const fp = (await snapshot()).evidence.fingerprint;
    const endpoints: { method: string; path: string; body?: () => Promise<object>; ok: number }[] = [
      { method: 'GET', path: 'readiness-snapshot', ok: 200 },
      { method: 'GET', path: `readiness-snapshot/verify?fingerprint=${fp}`, ok: 200 },
      { method: 'POST', path: 'approve-production', body: () => approveBody(), ok: 201 },
      {
        method: 'POST',
        path: 'demo-seed',
        body: async () => ({ confirm_phrase: 'SEED TENANT DB DEMO DATA' }),
        ok: 202,
      },
      {
        method: 'POST',
        path: 'demo-seed/rollback',
        body: async () => ({ confirm_phrase: 'ROLLBACK TENANT DB DEMO DATA' }),
        ok: 202,
      },
      {
        method: 'POST',
        path: 'dual-write/run',
        body: async () => ({ confirm_phrase: 'RUN TENANT DB DUAL WRITE PILOT' }),
        ok: 202,
      },
      {
        method: 'POST',
        path: 'dual-write/rollback',
        body: async () => ({ confirm_phrase: 'ROLLBACK TENANT DB DUAL WRITE PILOT' }),
        ok: 202,
      },
    ];
    for (const e of endpoints) {
      const url = (ref: string | number) => `${base(String(ref))}/${e.path}`;
      const body = e.body ? await e.body() : undefined;
      const ok = await app.request(e.method, url(a.tenant.slug), { token: ops.token, body });
      expect(ok.status, `${e.path}: ${ok.text}`).to.equal(e.ok);
      // runs are only queued here: drop them so the next step is not refused as unfinished
      await env.knex('tenant_db_runs').where({ tenant_id: a.tenant.id, status: 'queued' }).delete();
      for (const [token, status] of [
        [a.adminToken, 403],
        [integration.token, 401],
        [undefined, 401],
      ] as const)
        expect((await app.request(e.method, url(a.tenant.slug), { token, body })).status, e.path).to.equal(status);
      expect((await app.request(e.method, url('no-such-tenant'), { token: ops.token, body })).status).to.equal(404);
      expect((await app.request(e.method, url(2147483000), { token: ops.token, body })).status).to.equal(404);
    }
    const phrases = endpoints.filter((e) => e.ok === 202);
    for (const e of phrases) {
      const r = await app.request('POST', `${base()}/${e.path}`, { token: ops.token, body: { confirm_phrase: 'no' } });
      expect(r.status, e.path).to.equal(422);
      expect(r.body.errors).to.have.property('confirm_phrase');
    }
    expect(await env.knex('tenant_db_runs').where({ tenant_id: a.tenant.id, status: 'queued' })).to.have.length(0);
  });
});
