import { expect } from 'chai';
import pg from 'pg';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { dumpStores } from '../mail/support.js';
import { platformAdminToken } from './support.js';
import { runJob, saveTenantDbCredential, tenantDbCredential } from './tenant-db-support.js';
import { openRolePassword } from '../../../api/platform/tenant-db/state.js';
import { runJobId, tenantDatabaseSummary } from '../../../api/platform/tenant-db/runs.js';
import { configureTenantDbJob } from '../../../jobs/tenant-db.js';
import { closeTenantPools } from '../../../db/tenant-pools.js';
import { leaveTenantsShared } from '../../helpers/shared-mode.js';

/** Issue 14 items 1-6 on real PostgreSQL: pilot, test, schema, dry-run, copy, both rollbacks. */
describe('tenant databases: lifecycle', function () {
  leaveTenantsShared();
  this.timeout(120_000);
  let app: TestApp;
  let ops: { id: number; token: string };
  let a: TenantFixture;
  const responses: string[] = [];
  const base = () => `/api/platform/tenants/${a.tenant.slug}/provisioning`;
  const call = async (method: string, path: string, body?: object) => {
    const r = await app.request(method, `${base()}/${path}`, { token: ops.token, body });
    responses.push(r.text);
    return r;
  };
  const step = async (path: string, body: object = {}) => {
    const r = await call('POST', path, body);
    expect(r.status, r.text).to.equal(202);
    expect(r.body.data).to.include({ status: 'queued', tenant_id: a.tenant.id });
    const run = await runJob(app, r.body.data.id);
    responses.push(JSON.stringify(run));
    return run;
  };
  /** The bull-board log lines of a run's job. */
  const logsOf = async (runId: number) => (await app.queues.get('tenant-db').getJobLogs(runJobId(runId))).logs;
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>) => {
    const c = new pg.Client({ connectionString: env.adminDatabaseUrl });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };

  before(async () => {
    app = await startTestApp();
    ops = await platformAdminToken();
    await env.knex('provisioning_credentials').del();
    await saveTenantDbCredential(app, ops.token);
    a = await makeTenant();
    await seedBasics(a);
    await seedBasics(a);
    await makeUser(a.tenant.id, 'technician'); // a built-in role with role_permissions rows
  });
  after(async () => {
    configureTenantDbJob({});
    await closeTenantPools();
  });

  it('preview: names, SQL, pg_hba.conf line, rollback plan, no conflicts; saves nothing', async () => {
    const r = await call('POST', 'pilot-db/preview', { db_user_host: '10.0.0.0/8' });
    expect(r.status, r.text).to.equal(200);
    const db = `isp_t_${a.tenant.slug.replace(/-/g, '_')}`;
    expect(r.body.data).to.include({
      database: db,
      role: `${db}_app`,
      subdomain: a.tenant.slug,
      db_user_host: '10.0.0.0/8',
    });
    expect(r.body.data.pg_hba_conf).to.deep.equal([`host    ${db}    ${db}_app    10.0.0.0/8    scram-sha-256`]);
    expect(r.body.data.conflicts).to.include({ checked: true, database_exists: false, role_exists: false });
    expect(r.body.data.sql[0]).to.contain("PASSWORD '<random>'");
    expect(r.body.data.server).to.deep.equal({ host: tenantDbCredential().host, port: tenantDbCredential().port });
    expect(await env.knex('tenant_databases').where({ tenant_id: a.tenant.id })).to.have.length(0);
  });

  it('pilot: role, database owned by it, CONNECT revoked from PUBLIC, OIDs recorded; password sealed', async () => {
    const run = await step('pilot-db/run', { confirm_phrase: 'RUN DB PILOT' });
    expect(run.status, run.error).to.equal('succeeded');
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    expect(row.status).to.equal('pilot_created');
    const cat = await admin(
      async (c) =>
        (
          await c.query(
            `SELECT d.oid AS db_oid, r.oid AS role_oid, pg_get_userbyid(d.datdba) AS owner, d.datacl::text AS acl,
                  r.rolsuper, r.rolcreatedb, r.rolcanlogin
             FROM pg_database d, pg_roles r WHERE d.datname = $1 AND r.rolname = $2`,
            [row.database_name, row.role_name],
          )
        ).rows[0],
    );
    expect(Number(cat.db_oid)).to.equal(Number(row.database_oid));
    expect(Number(cat.role_oid)).to.equal(Number(row.role_oid));
    expect(cat.owner).to.equal(row.role_name);
    expect(cat).to.include({ rolsuper: false, rolcreatedb: false, rolcanlogin: true });
    expect(cat.acl).to.not.match(/(^|[{,])=[A-Za-z]*c/); // PUBLIC (empty grantee) has no CONNECT
    expect(cat.acl).to.contain(`${row.role_name}=`);
    const password = openRolePassword(TEST_WEB_APP_KEY, a.tenant.id, row.role_password_enc);
    expect(password).to.match(/^[0-9a-f]{32}$/);
    const summary = await tenantDatabaseSummary(env.knex, a.tenant.id);
    expect(summary.database).to.not.have.property('role_password_enc');
    expect(summary.database).to.include({ status: 'pilot_created', role_password_set: true });
    expect(summary.runs.map((x) => x.kind)).to.deep.equal(['pilot_run']);
    // issue 13's GET .../provisioning shows the same state and runs
    const g = await app.request('GET', base(), { token: ops.token });
    responses.push(g.text);
    expect(g.status).to.equal(200);
    expect(g.body.data.database).to.include({
      status: 'pilot_created',
      name: row.database_name,
      role_password_set: true,
    });
    expect(g.body.data.database).to.not.have.property('role_password_enc');
    expect(g.body.data.database.runs.map((x: { kind: string }) => x.kind)).to.deep.equal(['pilot_run']);
  });

  it('test: read-only as its role', async () => {
    const r = await call('POST', 'tenant-db/test', {});
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data).to.include({ ok: true, client_addr_allowed: true, schema_version: null });
    expect(r.body.data.server_version).to.match(/^\d+/);
  });

  it('schema: the shared migrations applied as the role; knex_migrations equal shared', async () => {
    const before = await call('GET', 'tenant-schema/preview');
    expect(before.status, before.text).to.equal(200);
    expect(before.body.data.applied).to.deep.equal([]);
    expect(before.body.data.pending.length).to.be.greaterThan(10);
    const run = await step('tenant-schema/run', { confirm_phrase: 'RUN TENANT SCHEMA' });
    expect(run.status, run.error).to.equal('succeeded');
    const shared = (await env.knex('knex_migrations').orderBy('id').select('name')).map((x) => x.name);
    expect(await logsOf(run.id)).to.deep.equal(shared.map((m: string) => `migration ${m}: applied`));
    const preview = await call('GET', 'tenant-schema/preview');
    expect(preview.body.data.applied).to.deep.equal(shared);
    expect(preview.body.data.pending).to.deep.equal([]);
    expect(preview.body.data.pilot_tables.every((t: { present: boolean }) => t.present)).to.equal(true);
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    const t = new pg.Client({ connectionString: env.adminDatabaseUrl.replace(/\/postgres$/, `/${row.database_name}`) });
    await t.connect();
    const o = await t.query("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'");
    await t.end();
    const owners = o.rows.map((x: { tableowner: string }) => x.tableowner);
    expect(owners).to.deep.equal([row.role_name]);
  });

  it('planted collision: listed by the dry-run, copy refused; planted after the dry-run: the run fails, status kept', async () => {
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    const tenantDb = new pg.Client({
      connectionString: env.adminDatabaseUrl.replace(/\/postgres$/, `/${row.database_name}`),
    });
    await tenantDb.connect();
    const plant = () =>
      tenantDb.query("INSERT INTO tenants (id, slug, name) VALUES ($1, $2, 'planted')", [
        a.tenant.id + 100_000,
        a.tenant.slug,
      ]);
    const unplant = () => tenantDb.query('DELETE FROM tenants WHERE id = $1', [a.tenant.id + 100_000]);
    try {
      const early = await call('POST', 'data-copy/run', { confirm_phrase: 'COPY TENANT DATA PILOT' });
      expect(early.status).to.equal(422);
      expect(early.body.code).to.equal('INVALID_TRANSITION');
      await plant();
      const dry = await step('data-copy/dry-run');
      expect(dry.status, dry.error).to.equal('succeeded');
      expect(dry.result.collisions_total).to.equal(1);
      const tenants = dry.result.tables.find((t: { table: string }) => t.table === 'tenants');
      expect(tenants.keys).to.deep.equal([`tenants.slug: id ${a.tenant.id} vs ${a.tenant.id + 100_000}`]);
      const refused = await call('POST', 'data-copy/run', { confirm_phrase: 'COPY TENANT DATA PILOT' });
      expect(refused.status).to.equal(422);
      expect(refused.body.code).to.equal('INVALID_TRANSITION');
      await unplant();
      expect((await step('data-copy/dry-run')).result.collisions_total).to.equal(0);
      await plant();
      const run = await step('data-copy/run', { confirm_phrase: 'COPY TENANT DATA PILOT' });
      expect(run.status).to.equal('failed');
      expect(run.error).to.contain('collision in tenants');
      expect(run.result.collisions).to.have.length(1);
      const after = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
      expect(after.status).to.equal('schema_migrated');
    } finally {
      await unplant();
      await tenantDb.end();
    }
  });

  it('dry-run counts; copy with checkpoints; counts and checksums equal', async () => {
    const dry = await step('data-copy/dry-run');
    expect(dry.status, dry.error).to.equal('succeeded');
    expect(dry.result.collisions_total).to.equal(0);
    const planned = dry.result.tables.map((t: { table: string }) => t.table);
    for (const t of ['tenants', 'packages', 'olts', 'onus', 'users', 'customers', 'invoices', 'tickets'])
      expect(planned, 'copy plan').to.include(t);
    expect(planned.indexOf('customers')).to.be.lessThan(planned.indexOf('invoices'));
    expect(planned).to.include.members(['home_bases', 'nas']); // reached through users' and customers' foreign keys
    expect(planned.indexOf('nas')).to.be.lessThan(planned.indexOf('customers'));
    const customers = dry.result.tables.find((t: { table: string }) => t.table === 'customers');
    expect(customers).to.include({ count: 2, to_insert: 2, to_update: 0, collisions: 0 });
    let failAt: number | null = 3;
    configureTenantDbJob({
      afterBatch: (n) => {
        if (failAt !== null && n === failAt)
          throw Object.assign(new Error('connection timeout (test)'), { code: 'ETIMEDOUT' });
      },
    });
    const r = await call('POST', 'data-copy/run', { confirm_phrase: 'COPY TENANT DATA PILOT' });
    expect(r.status, r.text).to.equal(202);
    const first = await runJob(app, r.body.data.id, { attemptsMade: 0 });
    expect(first.status).to.equal('running');
    expect(Object.keys(first.checkpoint)).to.have.length(3);
    expect(first.checkpoint.tenants).to.equal(a.tenant.id);
    expect(first.error).to.match(/^attempt 1: connection timeout/);
    failAt = null;
    const done = await runJob(app, r.body.data.id, { attemptsMade: 1 });
    expect(done.status, done.error).to.equal('succeeded');
    for (const t of done.result.tables) expect(t, t.table).to.include({ ok: true });
    // bull-board: per table, the rows copied (by each attempt that reached it) and the verification
    const copyLogs = await logsOf(done.id);
    for (const t of done.result.tables as { table: string; count: number; tenant_count: number }[]) {
      const copied = copyLogs.filter((l) => l.startsWith(`${t.table}: `) && l.includes('rows copied'));
      expect(copied.length, t.table).to.be.oneOf([1, 2]);
      expect(copyLogs, t.table).to.include(`${t.table}: count ${t.count}/${t.tenant_count}, checksum equal`);
    }
    expect(done.progress).to.include({ step: 'copy' });
    const tickets = done.result.tables.find((t: { table: string }) => t.table === 'tickets');
    expect(tickets).to.include({ count: 2, tenant_count: 2 });
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    expect(row).to.include({ status: 'data_copied', use_tenant_db_read: true });
    // the users' roles: user_roles after users and roles, role_permissions after permissions
    const order = done.result.tables.map((t: { table: string }) => t.table);
    expect(order.indexOf('users')).to.be.lessThan(order.indexOf('user_roles'));
    expect(order.indexOf('roles')).to.be.lessThan(order.indexOf('user_roles'));
    expect(order.indexOf('permissions')).to.be.lessThan(order.indexOf('role_permissions'));
    const userRoles = done.result.tables.find((t: { table: string }) => t.table === 'user_roles');
    expect(userRoles).to.include({ count: 2, tenant_count: 2, ok: true });
    const copied = await call('GET', 'tenant-db/users');
    expect(copied.body).to.include({ source: 'tenant_db', total: 2 });
    const shared = await app.request('GET', '/api/users', { token: a.adminToken });
    const roles = (list: { email: string; roles: { name: string }[] }[]) =>
      Object.fromEntries(list.map((u) => [u.email, u.roles.map((x) => x.name)]));
    expect(roles(copied.body.data)).to.deep.equal(roles(shared.body.data));
    expect(Object.values(roles(copied.body.data)).sort()).to.deep.equal([['Super Admin'], ['technician']]);
    expect(copied.body.data).to.deep.equal(shared.body.data); // permissions too
    // a dry-run after the copy compares row md5s across the databases: nothing to do, then one change
    const again = await step('data-copy/dry-run');
    for (const t of again.result.tables) expect(t, t.table).to.include({ to_insert: 0, to_update: 0, collisions: 0 });
    const tenantDb = new pg.Client({
      connectionString: env.adminDatabaseUrl.replace(/\/postgres$/, `/${row.database_name}`),
    });
    await tenantDb.connect();
    await tenantDb.query("UPDATE customers SET name = name || ' (changed)' WHERE id = (SELECT min(id) FROM customers)");
    await tenantDb.end();
    const changed = await step('data-copy/dry-run');
    const c = changed.result.tables.find((t: { table: string }) => t.table === 'customers');
    expect(c).to.include({ count: 2, to_insert: 0, to_update: 1, collisions: 0 });
  });

  it('copy rollback empties the tables; pilot rollback drops them; a same-named older database survives', async () => {
    const back = await step('data-copy/rollback', { confirm_phrase: 'ROLLBACK TENANT DATA PILOT' });
    expect(back.status, back.error).to.equal('succeeded');
    const emptied = await logsOf(back.id);
    expect(emptied).to.have.length(back.result.emptied.length);
    expect(emptied).to.include.members(['customers: emptied (2 rows)', 'user_roles: emptied (2 rows)']);
    let row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    expect(row).to.include({ status: 'schema_migrated', use_tenant_db_read: false });
    const t = await call('POST', 'tenant-db/test', {});
    expect(t.body.data.schema_version).to.be.a('string');
    await closeTenantPools();
    // the database this pilot made is replaced by an older one of the same name (another OID)
    await admin(async (c) => {
      await c.query(`DROP DATABASE ${row.database_name} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${row.database_name}`);
    });
    const drop = await step('pilot-db/rollback', { confirm_phrase: 'ROLLBACK DB PILOT' });
    expect(drop.status, drop.error).to.equal('succeeded');
    expect(drop.result).to.include({ role: 'dropped' });
    expect(drop.result.database).to.match(/^kept/);
    const left = await admin(async (c) => ({
      db: (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [row.database_name])).rowCount,
      role: (await c.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [row.role_name])).rowCount,
    }));
    expect(left).to.deep.equal({ db: 1, role: 0 });
    row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    expect(row).to.include({ status: 'none', role_password_enc: null, database_oid: null });
    // a new pilot meets the older database: unexpected object, run failed, status kept
    const again = await step('pilot-db/run', { confirm_phrase: 'RUN DB PILOT' });
    expect(again.status).to.equal('failed');
    expect(again.error).to.contain(`unexpected object: database ${row.database_name}`);
    row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    expect(row.status).to.equal('none');
    await admin((c) => c.query(`DROP DATABASE ${row.database_name}`));
  });

  it('the role password appears 0 times in logs, Redis, runs and responses', async () => {
    const r = await call('POST', 'pilot-db/run', { confirm_phrase: 'RUN DB PILOT' });
    const run = await runJob(app, r.body.data.id);
    expect(run.status, run.error).to.equal('succeeded');
    const row = await env.knex('tenant_databases').where({ tenant_id: a.tenant.id }).first();
    const password = openRolePassword(TEST_WEB_APP_KEY, a.tenant.id, row.role_password_enc);
    const stores = await dumpStores();
    const runs = JSON.stringify(await env.knex('tenant_db_runs').select('*'));
    for (const [where, text] of Object.entries({
      ...stores,
      runs,
      logs: app.logs.join('\n'),
      responses: responses.join('\n'),
    }))
      expect(text.split(password).length - 1, where).to.equal(0);
    await step('pilot-db/rollback', { confirm_phrase: 'ROLLBACK DB PILOT' });
  });
});
