import { expect } from 'chai';
import type { Knex } from 'knex';
import pg from 'pg';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { platformAdminToken } from './support.js';
import { runJob, saveTenantDbCredential } from './tenant-db-support.js';
import { closeTenantPools } from '../../../db/tenant-pools.js';
import {
  configureTenantRouting,
  CUTOVER_LOCK_CLASS,
  TenantDbCutoverInProgress,
  tenantScopeOf,
} from '../../../db/tenant-routing.js';
import { Customer } from '../../../db/models/index.js';
import { isWriteSql } from '../../../db/autocommit-gate.js';
import { leaveTenantsShared } from '../../helpers/shared-mode.js';

/**
 * Issue 15 item 3 b for autocommit writes ("Autocommit writes pass the gate"): a write made through
 * a TenantScope outside a transaction (knex builder, objection, raw) takes the cutover lock shared
 * and re-reads db_mode like `scope.knex.transaction` does; a read does not. The lock is held here
 * as the cutover job holds it: `pg_advisory_xact_lock(15015, tenant)` in an open transaction.
 */
describe('tenant databases: autocommit writes through a scope pass the cutover write gate', function () {
  leaveTenantsShared();
  this.timeout(120_000);
  let app: TestApp;
  let a: TenantFixture;
  let basics: Awaited<ReturnType<typeof seedBasics>>;
  let tdb: pg.Client;
  const inTenantDb = async (sql: string, values: unknown[] = []) => (await tdb.query(sql, values)).rows;
  const scope = () => tenantScopeOf(env.knex, a.tenant.id, TEST_WEB_APP_KEY);
  const customerName = async (id = basics.customerId) =>
    ((await env.knex('customers').where({ id }).first('name')) as { name: string }).name;

  /** Holds the cutover lock exclusively in the shared database until the returned trx ends. */
  const holdLock = async (): Promise<Knex.Transaction> => {
    const trx = await env.knex.transaction();
    await trx.raw('SELECT pg_advisory_xact_lock(?, ?)', [CUTOVER_LOCK_CLASS, a.tenant.id]);
    return trx;
  };
  /** Resolves once `n` sessions wait for the tenant's cutover lock (no fixed sleep). */
  const waiters = async (n = 1) => {
    for (let i = 0; i < 1500; i += 1) {
      const r = await env.knex.raw(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = ? AND objid = ?`,
        [CUTOVER_LOCK_CLASS, a.tenant.id],
      );
      if (r.rows[0].n >= n) return;
      await new Promise((res) => setTimeout(res, 20));
    }
    throw new Error('no write waited on the cutover lock');
  };
  /** Switches the tenant's db_mode in both databases (as the cutover's step f), inside the lock. */
  const switchMode = async (holder: Knex.Transaction, mode: 'shared_db' | 'tenant_db') => {
    await holder('tenants').where({ id: a.tenant.id }).update({ db_mode: mode });
    await inTenantDb('UPDATE tenants SET db_mode = $1 WHERE id = $2', [mode, a.tenant.id]);
  };
  /** The SQL texts the shared knex sends while `fn` runs. */
  const sqlOf = async (fn: () => Promise<unknown>) => {
    const seen: string[] = [];
    const on = (q: { sql: string }) => seen.push(q.sql);
    env.knex.on('query', on);
    try {
      await fn();
    } finally {
      env.knex.off('query', on);
    }
    return seen;
  };

  before(async () => {
    app = await startTestApp();
    const ops = await platformAdminToken();
    await env.knex('provisioning_credentials').del();
    await saveTenantDbCredential(app, ops.token);
    a = await makeTenant();
    basics = await seedBasics(a);
    // a tenant database with the tenant's rows (issue 14's pilot, schema and copy): the other side
    for (const [path, body] of [
      ['pilot-db/run', { confirm_phrase: 'RUN DB PILOT' }],
      ['tenant-schema/run', { confirm_phrase: 'RUN TENANT SCHEMA' }],
      ['data-copy/dry-run', {}],
      ['data-copy/run', { confirm_phrase: 'COPY TENANT DATA PILOT' }],
    ] as const) {
      const r = await app.request('POST', `/api/platform/tenants/${a.tenant.slug}/provisioning/${path}`, {
        token: ops.token,
        body,
      });
      expect(r.status, r.text).to.equal(202);
      const run = await runJob(app, r.body.data.id);
      expect(run.status, `${path}: ${run.error}`).to.equal('succeeded');
    }
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    tdb = new pg.Client({ connectionString: env.adminDatabaseUrl.replace(/\/postgres$/, `/${row.database_name}`) });
    await tdb.connect();
  });
  afterEach(() => configureTenantRouting());
  after(async () => {
    configureTenantRouting();
    await tdb?.end();
    await closeTenantPools();
  });

  it('recognises raw writes after comments and whitespace, not reads', () => {
    const writes = [
      ' INSERT INTO t VALUES (1)',
      '-- note\n/* block */ update customers set name = 1',
      'DELETE FROM t',
      'with x as (update t set a = 1 returning id) select * from x',
      'MERGE INTO t USING s ON true WHEN MATCHED THEN DO NOTHING',
      'COPY t FROM STDIN',
      'truncate t',
    ];
    const reads = [
      'SELECT 1',
      '  with x as (select 1) select * from x',
      "SELECT 'delete from t'",
      '/* insert */ select 2',
    ];
    expect(writes.map(isWriteSql)).to.deep.equal(writes.map(() => true));
    expect(reads.map(isWriteSql)).to.deep.equal(reads.map(() => false));
  });

  it('a knex update and an objection patch wait for the held lock and land after its release', async () => {
    const s = await scope();
    const holder = await holdLock();
    let knexDone = false;
    let objDone = false;
    const knexWrite = s
      .table('customers')
      .where({ id: basics.customerId })
      .update({ name: 'Gate Knex' })
      .then((n) => ((knexDone = true), n));
    const objWrite = s
      .query(Customer)
      .findById(basics.customerId)
      .patch({ address: 'Jl. Gate 2' })
      .then((n) => ((objDone = true), n));
    const provided = s.knex.transaction(); // knex's provider form
    try {
      await waiters(3);
      expect([knexDone, objDone]).to.deep.equal([false, false]);
      expect(await customerName()).to.not.equal('Gate Knex');
    } finally {
      await holder.commit();
    }
    expect(await knexWrite).to.equal(1);
    expect(await objWrite).to.equal(1);
    const trx = await provided;
    await trx('customers').where({ id: basics.customerId }).update({ phone: '+6281200000015' });
    await trx.commit();
    const row = await env.knex('customers').where({ id: basics.customerId }).first('name', 'address', 'phone');
    expect(row).to.deep.equal({ name: 'Gate Knex', address: 'Jl. Gate 2', phone: '+6281200000015' });
  });

  it('past the (shortened) wait an autocommit write rejects with TenantDbCutoverInProgress and changes nothing', async () => {
    configureTenantRouting({ lockWaitMs: 300 });
    const s = await scope();
    const before = await env.knex('customers').where({ id: basics.customerId }).first('name', 'address');
    const holder = await holdLock();
    try {
      const results = await Promise.allSettled([
        s.knex('customers').where({ id: basics.customerId, tenant_id: a.tenant.id }).update({ name: 'Too Late' }),
        s.query(Customer).findById(basics.customerId).patch({ address: 'Too Late' }),
        s.knex.raw('UPDATE customers SET name = ? WHERE id = ?', ['Too Late', basics.customerId]),
        // knex's provider form: the transaction is handed out gated, or not at all
        s.knex.transaction(),
      ]);
      for (const r of results) {
        expect(r.status).to.equal('rejected');
        expect((r as PromiseRejectedResult).reason).to.be.an.instanceOf(TenantDbCutoverInProgress);
      }
    } finally {
      await holder.rollback();
    }
    expect(await env.knex('customers').where({ id: basics.customerId }).first('name', 'address')).to.deep.equal(before);
  });

  it('reads through the scope do not take the lock: they complete while it is held, with no gate', async () => {
    const s = await scope();
    const holder = await holdLock();
    try {
      const sql = await sqlOf(async () => {
        const viaKnex = await s.table('customers').where({ id: basics.customerId }).first('id');
        const viaObjection = await s.query(Customer).findById(basics.customerId);
        const viaRaw = await s.knex.raw('SELECT count(*)::int AS n FROM customers WHERE tenant_id = ?', [a.tenant.id]);
        expect(Number(viaKnex.id)).to.equal(basics.customerId);
        expect(Number(viaObjection?.id)).to.equal(basics.customerId);
        expect(viaRaw.rows[0].n).to.be.at.least(1);
      });
      expect(sql).to.have.length(3);
      expect(sql.join('\n')).to.not.match(/tenant_write_gate|BEGIN/i);
    } finally {
      await holder.rollback();
    }
  });

  it('a tenant moved while an autocommit insert waited: the insert lands on the other side, once', async () => {
    configureTenantRouting({ lockWaitMs: 60_000 });
    const s = await scope(); // built in shared_db mode
    const name = `gate-moved-${a.tenant.id}`;
    const holder = await holdLock();
    let inserted: Promise<unknown>;
    try {
      // a knex builder runs when awaited: start it now
      inserted = s
        .knex('tenant_counters')
        .insert({ tenant_id: a.tenant.id, name, value: 7 })
        .then((r) => r);
      await waiters(1);
      await switchMode(holder, 'tenant_db');
    } finally {
      await holder.commit();
    }
    try {
      await inserted!;
      expect(await env.knex('tenant_counters').where({ tenant_id: a.tenant.id, name })).to.have.length(0);
      const there = await inTenantDb('SELECT value FROM tenant_counters WHERE tenant_id = $1 AND name = $2', [
        a.tenant.id,
        name,
      ]);
      expect(there.map((r) => Number(r.value))).to.deep.equal([7]);
      // the scope follows the tenant: its next write goes to the tenant database too, ungated reads as well
      await s.table('tenant_counters').where({ name }).update({ value: 8 });
      expect(await inTenantDb('SELECT value FROM tenant_counters WHERE name = $1', [name])).to.deep.equal([
        { value: 8 },
      ]);
    } finally {
      const back = await env.knex.transaction();
      await switchMode(back, 'shared_db');
      await back.commit();
    }
  });

  it('an admin PUT of a customer during the held lock returns after release, stored where db_mode names', async () => {
    configureTenantRouting({ lockWaitMs: 60_000 });
    // shared_db: stored in the shared database
    let holder = await holdLock();
    let put = app.request('PUT', `/api/customers/${basics.customerId}`, {
      token: a.adminToken,
      body: { name: 'Put During Lock' },
    });
    try {
      await waiters(1);
    } finally {
      await holder.commit();
    }
    let res = await put;
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.name).to.equal('Put During Lock');
    expect(await customerName()).to.equal('Put During Lock');

    // the tenant moved to its database while the PUT waited: stored there, shared untouched
    holder = await holdLock();
    put = app.request('PUT', `/api/customers/${basics.customerId}`, {
      token: a.adminToken,
      body: { name: 'Put After Move' },
    });
    try {
      await waiters(1);
      await switchMode(holder, 'tenant_db');
    } finally {
      await holder.commit();
    }
    try {
      res = await put;
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.name).to.equal('Put After Move');
      expect(await inTenantDb('SELECT name FROM customers WHERE id = $1', [basics.customerId])).to.deep.equal([
        { name: 'Put After Move' },
      ]);
      expect(await customerName()).to.equal('Put During Lock');
    } finally {
      const back = await env.knex.transaction();
      await switchMode(back, 'shared_db');
      await back.commit();
    }
  });
});
