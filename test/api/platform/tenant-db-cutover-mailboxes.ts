import { expect } from 'chai';
import pg from 'pg';
import { env } from '../../helpers/env.js';
import { TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { configureJobDeps } from '../../../jobs/deps.js';
import * as customerMailbox from '../../../jobs/customer-mailbox.js';
import { claimMailboxAddress, MAILBOX_CLAIM_LOCK_CLASS } from '../../../api/customers/mailbox-claim.js';
import { tenantScopeOf } from '../../../db/tenant-routing.js';
import { seal } from '../../../lib/crypto.js';
import { FakeDns, FakePanel, fakeRuntime } from './runs-fakes.js';
import { copiedTenant } from './tenant-db-evidence-support.js';
import { fakeJob } from '../../jobs/fake-job.js';
import type { CutOverBasics } from './tenant-db-cutover-scans.js';

/** What the mailbox cases need besides the cut-over tenant. */
export interface MailboxCase extends CutOverBasics {
  customerId: () => number;
  /** A platform admin's token (to give `other` a tenant database of its own). */
  opsToken: () => string;
}

const DOMAIN = 'mail.cutover.test';

/**
 * Issue 15's customer mailboxes on cut-over tenants (registered inside the cutover test after the
 * cutover): the customer-mailbox job works in the tenant's database (older jobs without tenant_id
 * too, or fail without retry), and one address claimed by two cut-over tenants at once goes to one.
 */
export function mailboxesOnCutOverTenants(t: MailboxCase): void {
  const KEY = TEST_WEB_APP_KEY;
  const jobOf = (data: customerMailbox.CustomerMailboxData) =>
    // a fake Job with the members the processor reads (data, attemptsMade, opts.attempts, log)
    ({ ...fakeJob(data).job, attemptsMade: 0, opts: { attempts: 5 } }) as never;
  const pending = (tenantId: number, customerId: number, address: string) =>
    t.inTenantDb(
      `INSERT INTO customer_mailboxes (tenant_id, customer_id, address, quota_mb, status, password_enc)
       VALUES ($1, $2, $3, 100, 'pending', $4) RETURNING id`,
      [tenantId, customerId, address, seal(KEY, 'Initial-Pass-123', customerMailboxAad(tenantId, address))],
    );
  const customerMailboxAad = customerMailbox.customerMailboxAad;

  it('customer-mailbox writes the cut-over tenant’s database; a job without tenant_id takes it from the shared row or fails without retry', async () => {
    const a = t.tenant();
    const panel = new FakePanel();
    configureJobDeps({ knex: env.knex, appKey: KEY, provisioning: fakeRuntime(new FakeDns('unused.test'), panel) });
    const address = `cut-${a.tenant.id}@${DOMAIN}`;
    const sharedCustomer = await env.knex('customers').where({ id: t.customerId() }).first('email');
    const [r1] = await pending(a.tenant.id, t.customerId(), address);
    const done = await customerMailbox.process(jobOf({ mailbox_id: Number(r1.id), tenant_id: a.tenant.id }));
    expect(done).to.deep.equal({ status: 'created', address });
    expect(panel.boxes.get(address)?.password).to.equal('Initial-Pass-123');
    expect(await t.inTenantDb('SELECT status FROM customer_mailboxes WHERE id = $1', [r1.id])).to.deep.equal([
      { status: 'created' },
    ]);
    expect((await t.inTenantDb('SELECT email FROM customers WHERE id = $1', [t.customerId()]))[0].email).to.equal(
      address,
    );
    expect(await env.knex('customers').where({ id: t.customerId() }).first('email')).to.deep.equal(sharedCustomer);
    expect(await env.knex('customer_mailboxes').where({ id: r1.id })).to.deep.equal([]);

    // a job enqueued before jobs carried tenant_id, for a row made after the cutover: no shared row
    const [newest] = await t.inTenantDb('SELECT id FROM customers WHERE tenant_id = $1 ORDER BY id DESC LIMIT 1', [
      a.tenant.id,
    ]);
    expect(await env.knex('customers').where({ id: newest.id })).to.deep.equal([]);
    const old = `old-${a.tenant.id}@${DOMAIN}`;
    const [r2] = await pending(a.tenant.id, Number(newest.id), old);
    const refused = await customerMailbox.process(jobOf({ mailbox_id: Number(r2.id) })).then(
      () => null,
      (e: Error) => e,
    );
    expect(refused?.name).to.equal('UnrecoverableError');
    expect(refused?.message).to.contain('carries no tenant_id');
    expect(panel.boxes.has(old)).to.equal(false);
    // the same job when the shared database has the row (made before the cutover, copied with its id)
    await env.knex('customer_mailboxes').insert({
      id: r2.id,
      tenant_id: a.tenant.id,
      customer_id: t.customerId(),
      address: old,
      quota_mb: 100,
      status: 'pending',
    });
    try {
      expect(await customerMailbox.process(jobOf({ mailbox_id: Number(r2.id) }))).to.deep.equal({
        status: 'created',
        address: old,
      });
      expect(await t.inTenantDb('SELECT status FROM customer_mailboxes WHERE id = $1', [r2.id])).to.deep.equal([
        { status: 'created' },
      ]);
      expect((await env.knex('customer_mailboxes').where({ id: r2.id }).first()).status).to.equal('pending');
    } finally {
      await env.knex('customer_mailboxes').where({ id: r2.id }).del();
      await t.inTenantDb('DELETE FROM customer_mailboxes WHERE id = ANY($1::bigint[])', [[r1.id, r2.id]]);
      configureJobDeps({ knex: env.knex, appKey: KEY });
    }
  });

  it('one address claimed at once by two cut-over tenants (two databases): exactly one wins, the other 422', async () => {
    const a = t.tenant();
    const b = t.other();
    const app: TestApp = t.app();
    // b gets a tenant database of its own (pilot, schema, copy), then is switched to it directly (the
    // cutover's own steps are the main test's)
    await seedBasics(b);
    const bCustomer = Number((await env.knex('customers').where({ tenant_id: b.tenant.id }).first('id')).id);
    await copiedTenant(app, t.opsToken(), b.tenant.slug);
    const row = await env.knex('tenant_databases').where({ tenant_id: b.tenant.id }).first();
    const bdb = new pg.Client({
      connectionString: env.adminDatabaseUrl.replace(/\/postgres$/, `/${row.database_name}`),
    });
    await bdb.connect();
    await env.knex('tenants').where({ id: b.tenant.id }).update({ db_mode: 'tenant_db' });
    await bdb.query("UPDATE tenants SET db_mode = 'tenant_db' WHERE id = $1", [b.tenant.id]);
    const address = `race-${a.tenant.id}-${b.tenant.id}@${DOMAIN}`;
    try {
      let waited = false;
      const insertFor = (f: TenantFixture, customerId: number) => async () => {
        // the claim holding the lock goes on only once the other claim waits for it: a real race
        for (let i = 0; i < 400 && !waited; i += 1) {
          const r = await env.knex.raw(
            `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = ?`,
            [MAILBOX_CLAIM_LOCK_CLASS],
          );
          waited = r.rows[0].n > 0;
          if (!waited) await new Promise((res) => setTimeout(res, 25));
        }
        const scope = await tenantScopeOf(env.knex, f.tenant.id, KEY);
        return scope.insert('customer_mailboxes', { customer_id: customerId, address, quota_mb: 100 });
      };
      const results = await Promise.allSettled([
        claimMailboxAddress(env.knex, KEY, address, insertFor(a, t.customerId())),
        claimMailboxAddress(env.knex, KEY, address.toUpperCase(), insertFor(b, bCustomer)),
      ]);
      expect(waited, 'the second claim waited for the first').to.equal(true);
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).to.include({ status: 422, code: 'VALIDATION_FAILED' });
      expect(Object.keys(lost.reason.errors)).to.deep.equal(['local_part']);
      expect(lost.reason.errors.local_part[0]).to.match(/ is taken\.$/);
      const rows = [
        ...(await t.inTenantDb('SELECT tenant_id FROM customer_mailboxes WHERE lower(address) = $1', [address])),
        ...(await bdb.query('SELECT tenant_id FROM customer_mailboxes WHERE lower(address) = $1', [address])).rows,
      ];
      expect(rows).to.have.length(1);
      expect(await env.knex('customer_mailboxes').whereRaw('lower(address) = ?', [address])).to.deep.equal([]);
    } finally {
      await t.inTenantDb('DELETE FROM customer_mailboxes WHERE lower(address) = $1', [address]);
      await bdb.query('DELETE FROM customer_mailboxes WHERE lower(address) = $1', [address]);
      await env.knex('tenants').where({ id: b.tenant.id }).update({ db_mode: 'shared_db' });
      await bdb.query("UPDATE tenants SET db_mode = 'shared_db' WHERE id = $1", [b.tenant.id]);
      await bdb.end();
    }
  });
}
