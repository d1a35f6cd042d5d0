import { expect } from 'chai';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { Writable } from 'node:stream';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, seedBasics, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { createLogger } from '../../../lib/logger.js';
import { startWorkers } from '../../../workers/main.js';
import * as customerMailbox from '../../../jobs/customer-mailbox.js';
import { dumpStores } from '../mail/support.js';
import { FakeDns, FakePanel, RUN_PANEL_PW, RUN_TOKEN, fakeRuntime } from '../platform/runs-fakes.js';

const MAIL = 'mail.customers.test';

/**
 * Issue 13 item 9: POST/GET /api/customers/{id}/email-account with a real (in-process) worker on
 * `customer-mailbox` and an in-memory panel: new (201 with the password), existing (200), slow
 * (202, then the password once by GET), locked, foreign, roles. The feature's one worker file.
 */
describe('customer e-mail accounts (issue 13 item 9)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let a: TenantFixture;
  const panel = new FakePanel();
  const rt = fakeRuntime(new FakeDns('unused.test'), panel);
  const workerLogs: string[] = [];
  const answers: string[] = [];
  const call = async (method: string, path: string, body?: object, token = a.adminToken) => {
    const r = await app.request(method, path, { token, body });
    answers.push(r.text);
    return r;
  };
  const newCustomer = async () => (await seedBasics(a)).customerId;

  before(async () => {
    app = await startTestApp({ provisioning: { runtime: rt, mailDomain: MAIL, customerMailboxWaitMs: 10_000 } });
    const sink = new Writable({
      write(chunk, _e, cb) {
        workerLogs.push(chunk.toString());
        cb();
      },
    });
    const handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('info', sink),
      queues: ['customer-mailbox'],
      registry: { 'customer-mailbox': { processor: customerMailbox.process, concurrency: 2 } },
      provisioning: rt,
    });
    registerCleanup(() => handle.close());
    a = await makeTenant();
  });

  it('new: 201 with the initial password at {slug}.{code}@mail domain, customers.email set; again: 200 created false', async () => {
    const id = await newCustomer();
    const code = (await tenantKnex(a.tenant.id)('customers').where({ id }).first()).code as string;
    const r = await call('POST', `/api/customers/${id}/email-account`, { quota_mb: 500 });
    expect(r.status, r.text).to.equal(201);
    const email = `${a.tenant.slug}.${code.toLowerCase()}@${MAIL}`;
    expect(r.body.data).to.include({ email, created: true });
    expect(r.body.data.initial_password).to.be.a('string').with.length(20);
    expect(panel.boxes.get(email)).to.include({ password: r.body.data.initial_password, quota: '500M' });
    expect((await tenantKnex(a.tenant.id)('customers').where({ id }).first()).email).to.equal(email);
    const again = await call('POST', `/api/customers/${id}/email-account`, {});
    expect(again.status).to.equal(200);
    expect(again.body.data).to.include({ email, created: false });
    expect(again.body.data).to.not.have.property('initial_password');
    const got = await call('GET', `/api/customers/${id}/email-account`);
    expect(got.body.data).to.include({ email, initial_password: null });
  });

  it('already at the panel: 200 created false, no password', async () => {
    const id = await newCustomer();
    panel.boxes.set(`kept-${id}@${MAIL}`, { domain: MAIL, local_part: `kept-${id}`, password: 'x', quota: null });
    const creates = panel.creates;
    const r = await call('POST', `/api/customers/${id}/email-account`, { local_part: `kept-${id}` });
    expect(r.status, r.text).to.equal(200);
    expect(r.body.data).to.include({ email: `kept-${id}@${MAIL}`, created: false, status: 'existed' });
    expect(panel.creates).to.equal(creates);
  });

  it('slow panel: 202, then GET shows the password once', async () => {
    const fast = await startTestApp({ provisioning: { runtime: rt, mailDomain: MAIL, customerMailboxWaitMs: 300 } });
    const handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: fast.queues.prefix,
      logger: createLogger('info', new Writable({ write: (c, _e, cb) => (workerLogs.push(c.toString()), cb()) })),
      queues: ['customer-mailbox'],
      registry: { 'customer-mailbox': { processor: customerMailbox.process, concurrency: 1 } },
      provisioning: rt,
    });
    registerCleanup(() => handle.close());
    const id = await newCustomer();
    let release!: () => void;
    panel.gate = new Promise<void>((r) => (release = r));
    const r = await fast.request('POST', `/api/customers/${id}/email-account`, {
      token: a.adminToken,
      body: { local_part: `slow-${id}` },
    });
    expect(r.status, r.text).to.equal(202);
    expect(r.body.data).to.include({ status: 'pending', email: `slow-${id}@${MAIL}` });
    panel.gate = null;
    release();
    const until = Date.now() + 20_000;
    let got = await call('GET', `/api/customers/${id}/email-account`);
    while (got.body.data.status === 'pending' && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 100));
      got = await call('GET', `/api/customers/${id}/email-account`);
    }
    expect(got.body.data).to.include({ status: 'created', created: true });
    expect(got.body.data.initial_password).to.equal(panel.boxes.get(`slow-${id}@${MAIL}`)?.password);
    expect((await call('GET', `/api/customers/${id}/email-account`)).body.data.initial_password).to.equal(null);
  });

  it('locked: 422 provisioning_locked, nothing saved; foreign customer 404; technician and staff 403', async () => {
    const id = await newCustomer();
    rt.source.state.lock = { locked: true, reasons: ['enabled'] };
    try {
      const r = await call('POST', `/api/customers/${id}/email-account`, {});
      expect(r.status).to.equal(422);
      expect(r.body.code).to.equal('provisioning_locked');
    } finally {
      rt.source.state.lock = { locked: false, reasons: [] };
    }
    expect(await env.knex('customer_mailboxes').where({ customer_id: id })).to.have.length(0);
    const b = await makeTenant();
    expect((await call('POST', `/api/customers/${id}/email-account`, {}, b.adminToken)).status).to.equal(404);
    expect((await call('GET', `/api/customers/${id}/email-account`, undefined, b.adminToken)).status).to.equal(404);
    for (const role of ['technician', 'staff']) {
      const u = await makeUser(a.tenant.id, role);
      expect((await call('POST', `/api/customers/${id}/email-account`, {}, u.token)).status, role).to.equal(403);
    }
    expect(await env.knex('customer_mailboxes').where({ customer_id: id })).to.have.length(0);
  });

  it('the sentinel secrets and the initial passwords are in no table, Redis key or log line', async () => {
    const { db, redis } = await dumpStores();
    const passwords = [...panel.boxes.values()].map((b) => b.password).filter((p) => p.length === 20);
    expect(passwords.length).to.be.greaterThan(1);
    for (const s of [RUN_TOKEN, RUN_PANEL_PW, ...passwords]) {
      expect(db).to.not.include(s);
      expect(redis).to.not.include(s);
      expect(app.logs.join('') + workerLogs.join('')).to.not.include(s);
    }
    expect(answers.join('')).to.not.include(RUN_PANEL_PW);
  });
});
