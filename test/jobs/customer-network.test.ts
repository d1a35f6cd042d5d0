import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { UnrecoverableError } from 'bullmq';
import { env } from '../helpers/env.js';
import { makeTenant, type TenantFixture } from '../helpers/fixtures.js';
import { startTestApp, type TestApp } from '../helpers/http.js';
import { configureJobDeps } from '../../jobs/deps.js';
import * as customerNetwork from '../../jobs/customer-network.js';
import type { CustomerNetworkData, CustomerNetworkPushResult } from '../../jobs/customer-network.js';
import { requestNetworkPush } from '../../api/customers/network-state.js';
import { ManualClock } from '../../lib/clock.js';
import { fakeJob } from './fake-job.js';
import {
  PPPOE_SECRET,
  createCustomer,
  customerRow,
  makeNas,
  makePackage,
  networkQueue,
} from '../api/customers/support.js';

/** A fake job of a push, with BullMQ's attempt counters. */
function pushJob(data: CustomerNetworkData, attemptsMade = 0, attempts = 5) {
  const f = fakeJob(data);
  return { ...f, job: { ...f.job, name: customerNetwork.PUSH_JOB, attemptsMade, opts: { attempts } } };
}

const sessionsOf = (nasId: number) => env.knex('network_fake_sessions').where({ nas_id: nasId }).orderBy('username');
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Issue 8 item 2: the customer-network push called with a fake Job against the fake driver (its
 * table), the version rules, retries and give-ups, NAS moves and removal.
 */
describe('job customer-network (push)', () => {
  const clock = new ManualClock();
  let app: TestApp;
  let t: TenantFixture;
  let nas: number;
  let pkg: number;
  const logs: string[] = [];

  /** The data of the newest job of a customer (what the API enqueued). */
  const latest = async (id: number): Promise<Required<CustomerNetworkData>> => {
    const v = Number((await customerRow(id)).network_version);
    const job = (await networkQueue(app).getJob(customerNetwork.pushJobId(t.tenant.id, id, v)))!;
    return job.data as Required<CustomerNetworkData>;
  };
  /** Runs the push of `data`; returns the result and the log lines. */
  const run = async (data: CustomerNetworkData, attemptsMade = 0, attempts = 5) => {
    const j = pushJob(data, attemptsMade, attempts);
    try {
      return { result: (await customerNetwork.process(j.job)) as CustomerNetworkPushResult, logs: j.logs };
    } finally {
      logs.push(...j.logs);
    }
  };
  const runFailing = async (data: CustomerNetworkData, attemptsMade = 0, attempts = 5) => {
    const j = pushJob(data, attemptsMade, attempts);
    const err = await customerNetwork.process(j.job).then(
      () => null,
      (e: unknown) => e,
    );
    logs.push(...j.logs);
    expect(err, 'the push should fail').to.be.instanceOf(Error);
    return { err: err as Error, logs: j.logs };
  };
  const api = (method: string, path: string, body?: unknown) =>
    app.request(method, path, { token: t.adminToken, body });

  before(async () => {
    app = await startTestApp();
    t = await makeTenant();
    nas = await makeNas(t, { isolation_profile: 'isolir' });
    pkg = await makePackage(t, { name: 'Home 30 Mbps' });
  });
  beforeEach(() => configureJobDeps({ knex: env.knex, clock, appKey: app.appKey, queues: app.queues }));
  after(() => {
    expect(logs.join('\n')).not.to.include(PPPOE_SECRET);
    expect(logs.length).to.be.greaterThan(20);
  });

  it('pushes a new customer: the fake NAS holds the session (package profile, the right password); synced', async () => {
    const c = await createCustomer(app, t, { nas_id: nas, package_id: pkg, pppoe_password: PPPOE_SECRET });
    const data = await latest(c.id);
    const { result, logs: lines } = await run(data);
    expect(result).to.deep.equal({
      kind: 'push',
      tenant_id: t.tenant.id,
      customer_id: c.id,
      version: data.version,
      outcome: 'synced',
      state: 'active',
    });
    const [session] = await sessionsOf(nas).where({ username: c.data.pppoe_username });
    expect(session).to.include({
      tenant_id: t.tenant.id,
      state: 'active',
      profile: 'Home 30 Mbps',
      service_type: 'pppoe',
      password_sha256: sha(PPPOE_SECRET),
    });
    expect(Number(session.version)).to.equal(data.version);
    const row = await customerRow(c.id);
    expect(row).to.include({
      network_sync_status: 'synced',
      network_state: 'active',
      network_error: null,
      network_nas_id: nas,
      network_username: c.data.pppoe_username,
    });
    expect(row.network_synced_at.getTime()).to.equal(clock.now().getTime());
    expect(lines.join('\n'))
      .to.match(/waiting for the change/)
      .and.match(/applying active/)
      .and.match(/synced/);
    expect(JSON.stringify(result) + lines.join('\n')).not.to.include(PPPOE_SECRET);
    const shown = await api('GET', `/api/customers/${c.id}`);
    expect(shown.body.data.network).to.include({ sync_status: 'synced', state: 'active', error: null, nas_id: nas });
  });

  it('suspend -> isolated with the NAS isolation profile; activate -> active again', async () => {
    const c = await createCustomer(app, t, { nas_id: nas, package_id: pkg });
    await run(await latest(c.id));
    expect((await api('POST', `/api/customers/${c.id}/status`, { status: 'suspended' })).status).to.equal(202);
    const suspended = await run(await latest(c.id));
    expect(suspended.result).to.include({ outcome: 'synced', state: 'isolated' });
    expect((await sessionsOf(nas).where({ username: c.data.pppoe_username }))[0]).to.include({
      state: 'isolated',
      profile: 'isolir',
    });
    expect((await customerRow(c.id)).network_state).to.equal('isolated');
    expect((await api('POST', `/api/customers/${c.id}/status`, { status: 'active' })).status).to.equal(202);
    await run(await latest(c.id));
    expect((await sessionsOf(nas).where({ username: c.data.pppoe_username }))[0]).to.include({
      state: 'active',
      profile: 'Home 30 Mbps',
    });
  });

  it('skips a stale version (a newer job carries the newer state) and a version that was rolled back', async () => {
    const c = await createCustomer(app, t, { nas_id: nas });
    const v1 = await latest(c.id);
    await api('PUT', `/api/customers/${c.id}`, { package_id: pkg });
    const v2 = await latest(c.id);
    expect(v2.version).to.be.greaterThan(v1.version);
    const stale = await run(v1);
    expect(stale.result).to.include({ outcome: 'newer', state: null });
    expect(stale.logs.at(-1)).to.match(/newer network version/);
    expect(await sessionsOf(nas).where({ username: c.data.pppoe_username })).to.deep.equal([]);
    expect((await customerRow(c.id)).network_sync_status).to.equal('pending');
    const never = await run({ ...v2, version: v2.version + 1000 });
    expect(never.result.outcome).to.equal('rolled_back');
    expect((await run(v2)).result).to.include({ outcome: 'synced', state: 'active' });
    expect((await run({ ...v2, customer_id: 2147483000 })).result.outcome).to.equal('gone');
  });

  it('waits for the transaction that enqueued it: a change rolled back after the enqueue is skipped', async () => {
    const c = await createCustomer(app, t, { nas_id: nas });
    await run(await latest(c.id));
    const before = await customerRow(c.id);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let job!: Required<CustomerNetworkData>;
    let queued!: () => void;
    const enqueued = new Promise<void>((r) => (queued = r));
    const change = env.knex
      .transaction(async (trx) => {
        await trx('customers').where({ id: c.id }).update({ status: 'suspended', suspend_reason: 'manual' });
        const jobs = await requestNetworkPush(trx, app.queues, t.tenant.id, [c.id]);
        const id = jobs.get(c.id)!;
        job = (await networkQueue(app).getJob(id))!.data as Required<CustomerNetworkData>;
        queued();
        await held;
        throw new Error('rolled back on purpose');
      })
      .catch((e: Error) => e.message);
    await enqueued;
    let done = false;
    const pushing = run(job).then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(done, 'the push must wait for the row lock of the enqueuing transaction').to.equal(false);
    release();
    expect(await change).to.equal('rolled back on purpose');
    expect((await pushing).result.outcome).to.equal('rolled_back');
    expect(await customerRow(c.id)).to.deep.equal(before);
    expect((await sessionsOf(nas).where({ username: c.data.pppoe_username }))[0].state).to.equal('active');
  });

  it('a timeout retries: pending with the error and the attempt, then synced on the next attempt', async () => {
    const n = await makeNas(t);
    const c = await createCustomer(app, t, { nas_id: n });
    await t.scope.insert('network_fake_failures', { nas_id: n, kind: 'timeout', remaining: 1 });
    const data = await latest(c.id);
    const { err, logs: lines } = await runFailing(data, 0, 5);
    expect(err).not.to.be.instanceOf(UnrecoverableError);
    expect(err.message).to.include('did not answer in time');
    expect(await customerRow(c.id)).to.include({
      network_sync_status: 'pending',
      network_error: 'The NAS did not answer in time. Retrying (attempt 1 of 5).',
    });
    expect(lines.at(-1)).to.match(/Retrying with backoff \(attempt 1 of 5\)/);
    expect((await run(data, 1, 5)).result.outcome).to.equal('synced');
    expect(await customerRow(c.id)).to.include({ network_sync_status: 'synced', network_error: null });
  });

  it('a server error on the last attempt leaves the sync failed; network-sync then retries it (new version)', async () => {
    const n = await makeNas(t);
    const c = await createCustomer(app, t, { nas_id: n });
    await t.scope.insert('network_fake_failures', { nas_id: n, kind: 'server_error', remaining: null });
    const data = await latest(c.id);
    const { err } = await runFailing(data, 4, 5);
    expect(err).not.to.be.instanceOf(UnrecoverableError);
    expect(await customerRow(c.id)).to.include({
      network_sync_status: 'failed',
      network_error: 'The NAS answered with an internal error.',
    });
    await env.knex('network_fake_failures').where({ nas_id: n }).delete();
    const res = await api('POST', `/api/customers/${c.id}/network-sync`);
    expect(res.status).to.equal(202);
    const again = await latest(c.id);
    expect(again.version).to.be.greaterThan(data.version);
    expect((await run(again)).result.outcome).to.equal('synced');
    expect((await api('GET', `/api/customers/${c.id}`)).body.data.network).to.include({
      sync_status: 'synced',
      error: null,
    });
  });

  it('refused credentials, an unknown driver, a NAS without isolation profile: failed and UnrecoverableError', async () => {
    const auth = await makeNas(t);
    const c1 = await createCustomer(app, t, { nas_id: auth, pppoe_password: PPPOE_SECRET });
    await t.scope.insert('network_fake_failures', { nas_id: auth, kind: 'auth', remaining: null });
    const r1 = await runFailing(await latest(c1.id));
    expect(r1.err).to.be.instanceOf(UnrecoverableError);
    expect(r1.logs.at(-1)).to.match(/Giving up/);
    expect(await customerRow(c1.id)).to.include({
      network_sync_status: 'failed',
      network_error: 'The NAS refused the credentials.',
    });

    const odd = await makeNas(t, { driver: 'mikrotik-v9' });
    const c2 = await createCustomer(app, t, { nas_id: odd });
    expect((await runFailing(await latest(c2.id))).err).to.be.instanceOf(UnrecoverableError);
    expect((await customerRow(c2.id)).network_error).to.equal('The NAS names an unknown driver.');

    const bare = await makeNas(t, { isolation_profile: null });
    const c3 = await createCustomer(app, t, { nas_id: bare });
    await run(await latest(c3.id));
    await api('POST', `/api/customers/${c3.id}/status`, { status: 'suspended' });
    expect((await runFailing(await latest(c3.id))).err).to.be.instanceOf(UnrecoverableError);
    expect(await customerRow(c3.id)).to.include({
      network_sync_status: 'failed',
      network_error: 'The NAS has no isolation profile.',
      network_state: 'active',
    });

    const prof = await makeNas(t);
    const c4 = await createCustomer(app, t, { nas_id: prof });
    await t.scope.insert('network_fake_failures', { nas_id: prof, kind: 'unknown_profile', remaining: 1 });
    expect((await runFailing(await latest(c4.id))).err).to.be.instanceOf(UnrecoverableError);
    expect((await customerRow(c4.id)).network_error).to.equal('The NAS does not know the profile.');
  });

  it('a move to another NAS or a new username removes the old session first; terminated removes it', async () => {
    const other = await makeNas(t);
    const c = await createCustomer(app, t, { nas_id: nas });
    await run(await latest(c.id));
    await api('PUT', `/api/customers/${c.id}`, { nas_id: other });
    const moved = await run(await latest(c.id));
    expect(moved.logs.join('\n')).to.match(new RegExp(`removing session ${c.data.pppoe_username} from NAS ${nas}`));
    expect(await sessionsOf(nas).where({ username: c.data.pppoe_username })).to.deep.equal([]);
    expect(await sessionsOf(other).where({ username: c.data.pppoe_username })).to.have.length(1);
    await api('PUT', `/api/customers/${c.id}`, { pppoe_username: `${c.data.pppoe_username}-new` });
    await run(await latest(c.id));
    expect((await sessionsOf(other)).map((s) => s.username)).to.include(`${c.data.pppoe_username}-new`);
    expect((await sessionsOf(other)).map((s) => s.username)).not.to.include(c.data.pppoe_username);
    await api('POST', `/api/customers/${c.id}/status`, { status: 'terminated' });
    expect((await run(await latest(c.id))).result).to.include({ outcome: 'synced', state: 'removed' });
    expect(await sessionsOf(other).where({ username: `${c.data.pppoe_username}-new` })).to.deep.equal([]);
    expect(await customerRow(c.id)).to.include({
      network_sync_status: 'synced',
      network_state: 'removed',
      network_nas_id: null,
      network_username: null,
    });
  });

  it('a dhcp customer is keyed by its MAC; a push without ids is refused', async () => {
    const c = await createCustomer(app, t, {
      nas_id: nas,
      service_type: 'dhcp',
      mac_address: 'a1b2c3d4e5f6',
      pppoe_username: null,
    });
    await run(await latest(c.id));
    expect((await sessionsOf(nas).where({ username: 'A1:B2:C3:D4:E5:F6' }))[0]).to.include({
      service_type: 'dhcp',
      mac_address: 'A1:B2:C3:D4:E5:F6',
      password_sha256: null,
    });
    const bad = await runFailing({ tenant_id: t.tenant.id });
    expect(bad.err).to.be.instanceOf(UnrecoverableError);
  });
});
