import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { addDays, todayIn } from '../../../lib/clock.js';
import * as customerNetwork from '../../../jobs/customer-network.js';
import { reactivateIfSettled, suspendForOverdue } from '../../../api/customers/network-state.js';
import { breakQueues, createCustomer, customerRow, makeNas, networkQueue, uniq } from './support.js';

/**
 * Issue 8 item 2, the billing hooks: suspendForOverdue and reactivateIfSettled called directly in a
 * transaction, and reactivateIfSettled through POST /api/invoices/{id}/void.
 */
describe('api/customers/network-state.ts: suspendForOverdue, reactivateIfSettled', () => {
  let app: TestApp;
  let t: TenantFixture;
  let other: TenantFixture;
  let nas: number;
  const invoice = async (customerId: number, status: string, f: TenantFixture = t) =>
    (
      await f.scope.insert('invoices', {
        invoice_number: `INV-${uniq()}`,
        customer_id: customerId,
        amount: 100000,
        status,
        due_date: addDays(todayIn(f.timeZone), -20),
      })
    ).id as number;
  const audit = (id: number) =>
    tenantKnex(t.tenant.id)('audit_log')
      .where({ action: 'customers.status_changed', subject_id: id })
      .orderBy('id', 'desc')
      .first();

  before(async () => {
    app = await startTestApp();
    t = await makeTenant();
    other = await makeTenant();
    nas = await makeNas(t);
  });

  it('suspendForOverdue suspends the active ones only (reason overdue, audited, push enqueued), in the caller transaction', async () => {
    const onNas = await createCustomer(app, t, { nas_id: nas });
    const plain = await createCustomer(app, t);
    const manual = await createCustomer(app, t);
    await app.request('POST', `/api/customers/${manual.id}/status`, {
      token: t.adminToken,
      body: { status: 'suspended' },
    });
    const foreign = await createCustomer(app, other);
    const ids = await tenantKnex(t.tenant.id).transaction((trx) =>
      suspendForOverdue(trx, app.queues, t.tenant.id, [onNas.id, plain.id, manual.id, foreign.id, onNas.id]),
    );
    expect(ids).to.deep.equal([onNas.id, plain.id]);
    for (const id of ids) {
      expect(await customerRow(id)).to.include({ status: 'suspended', suspend_reason: 'overdue' });
      const a = await audit(id);
      expect(a.user_id).to.equal(null);
      expect(a.after).to.include({ status: 'suspended', suspend_reason: 'overdue' });
    }
    expect(await customerRow(manual.id)).to.include({ status: 'suspended', suspend_reason: 'manual' });
    expect((await customerRow(foreign.id)).status).to.equal('active');
    const row = await customerRow(onNas.id);
    const job = (await networkQueue(app).getJob(
      customerNetwork.pushJobId(t.tenant.id, onNas.id, Number(row.network_version)),
    ))!;
    expect(job.data).to.deep.equal({
      tenant_id: t.tenant.id,
      customer_id: onNas.id,
      version: Number(row.network_version),
    });
    expect((await customerRow(plain.id)).network_sync_status).to.equal('none');
  });

  it('suspendForOverdue rolls back with its caller: Redis down -> QueueUnavailableError, nobody suspended', async () => {
    const c = await createCustomer(app, t, { nas_id: nas });
    const before = await customerRow(c.id);
    const restore = breakQueues(app);
    try {
      const err = await tenantKnex(t.tenant.id)
        .transaction((trx) => suspendForOverdue(trx, app.queues, t.tenant.id, [c.id]))
        .catch((e: Error) => e);
      expect(err).to.be.instanceOf(Error);
      expect((err as Error).name).to.equal('QueueUnavailableError');
    } finally {
      restore();
    }
    expect(await customerRow(c.id)).to.deep.equal(before);
  });

  it('reactivateIfSettled: only an overdue-suspended customer with no overdue invoice left', async () => {
    const c = await createCustomer(app, t, { nas_id: nas });
    const inv = await invoice(c.id, 'overdue');
    await tenantKnex(t.tenant.id).transaction((trx) => suspendForOverdue(trx, app.queues, t.tenant.id, [c.id]));
    const still = await tenantKnex(t.tenant.id).transaction((trx) =>
      reactivateIfSettled(trx, app.queues, t.tenant.id, c.id),
    );
    expect(still).to.equal(false);
    expect((await customerRow(c.id)).status).to.equal('suspended');
    await tenantKnex(t.tenant.id)('invoices').where({ id: inv }).update({ status: 'paid' });
    const v = Number((await customerRow(c.id)).network_version);
    const done = await tenantKnex(t.tenant.id).transaction((trx) =>
      reactivateIfSettled(trx, app.queues, t.tenant.id, c.id),
    );
    expect(done).to.equal(true);
    const row = await customerRow(c.id);
    expect(row).to.include({ status: 'active', suspend_reason: null, network_sync_status: 'pending' });
    expect(Number(row.network_version)).to.be.greaterThan(v);
    expect(
      await networkQueue(app).getJob(customerNetwork.pushJobId(t.tenant.id, c.id, Number(row.network_version))),
    ).to.not.equal(undefined);
    expect((await audit(c.id)).after).to.include({ status: 'active', reason: 'No overdue invoice left.' });

    const manual = await createCustomer(app, t);
    await app.request('POST', `/api/customers/${manual.id}/status`, {
      token: t.adminToken,
      body: { status: 'suspended' },
    });
    expect(
      await tenantKnex(t.tenant.id).transaction((trx) => reactivateIfSettled(trx, app.queues, t.tenant.id, manual.id)),
    ).to.equal(false);
    expect((await customerRow(manual.id)).status).to.equal('suspended');
    const foreign = await createCustomer(app, other);
    await tenantKnex(other.tenant.id).transaction((trx) =>
      suspendForOverdue(trx, app.queues, other.tenant.id, [foreign.id]),
    );
    expect(
      await tenantKnex(t.tenant.id).transaction((trx) => reactivateIfSettled(trx, app.queues, t.tenant.id, foreign.id)),
    ).to.equal(false);
    expect((await customerRow(foreign.id)).status).to.equal('suspended');
  });

  it('voiding the last overdue invoice reactivates the customer (POST /api/invoices/{id}/void); Redis down -> 503, nothing voided', async () => {
    const c = await createCustomer(app, t, { nas_id: nas });
    const first = await invoice(c.id, 'overdue');
    const second = await invoice(c.id, 'overdue');
    await tenantKnex(t.tenant.id).transaction((trx) => suspendForOverdue(trx, app.queues, t.tenant.id, [c.id]));
    const voidIt = (id: number) =>
      app.request('POST', `/api/invoices/${id}/void`, { token: t.adminToken, body: { reason: 'Billed twice' } });
    expect((await voidIt(first)).status).to.equal(200);
    expect((await customerRow(c.id)).status).to.equal('suspended');
    const restore = breakQueues(app);
    try {
      const down = await voidIt(second);
      expect(down.status).to.equal(503);
      expect(down.body.code).to.equal('QUEUE_UNAVAILABLE');
    } finally {
      restore();
    }
    expect((await tenantKnex(t.tenant.id)('invoices').where({ id: second }).first()).status).to.equal('overdue');
    expect((await customerRow(c.id)).status).to.equal('suspended');
    expect((await voidIt(second)).status).to.equal(200);
    expect(await customerRow(c.id)).to.include({ status: 'active', suspend_reason: null });
  });
});
