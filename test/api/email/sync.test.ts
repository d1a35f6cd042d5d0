import { expect } from 'chai';
import path from 'node:path';
import { Writable } from 'node:stream';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeTenant, makeUser, type TenantFixture } from '../../helpers/fixtures.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { getMailStack, type MailStack } from '../../helpers/mail.js';
import { startWorkers, type WorkerHandle } from '../../../workers/main.js';
import * as imapSync from '../../../jobs/imap-sync.js';
import { createLogger } from '../../../lib/logger.js';
import { createStorage } from '../../../lib/storage/index.js';
import { accountFixture } from '../../helpers/email.js';

/** Issue 9 items 2, 3: POST /api/auth/email-settings/test-incoming and /sync through a real worker. */
describe('/api/auth/email-settings/test-incoming and /sync', function () {
  this.timeout(60_000);
  let app: TestApp;
  let stack: MailStack;
  let handle: WorkerHandle | null = null;
  const workerLogs: string[] = [];

  const startWorker = async () => {
    const sink = new Writable({
      write(chunk, _e, cb) {
        workerLogs.push(chunk.toString());
        cb();
      },
    });
    handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('info', sink),
      storage: createStorage({ driver: 'local', root: path.join(env.dir, 'storage') }),
      queues: ['imap-sync'],
      registry: { 'imap-sync': { processor: imapSync.process, concurrency: 2 } },
    });
  };

  before(async () => {
    app = await startTestApp();
    stack = await getMailStack();
    registerCleanup(() => handle?.close());
  });

  it('test-incoming: 422 when nothing is saved', async () => {
    const t = await makeTenant();
    const res = await app.request('POST', '/api/auth/email-settings/test-incoming', { token: t.adminToken });
    expect(res.status).to.equal(422);
    expect(res.body.errors).to.have.property('email');
  });

  it('sync: 202 {job_id, status}; a second request while it waits gets the same job; the worker imports', async () => {
    const { t, box, account } = await accountFixture(stack);
    for (let i = 1; i <= 5; i++) await stack.deliver({ from: 'a@outside.test', to: box.email, subject: `s ${i}` });
    const first = await app.request('POST', '/api/auth/email-settings/sync', { token: t.adminToken });
    expect(first.status).to.equal(202);
    expect(first.body.data.status).to.equal('waiting');
    const second = await app.request('POST', '/api/auth/email-settings/sync', { token: t.adminToken });
    expect(second.body.data.job_id).to.equal(first.body.data.job_id);
    const queued = await app.request('GET', '/api/auth/email-settings', { token: t.adminToken });
    expect(queued.body.data.sync.status).to.equal('queued');
    await startWorker();
    const deadline = Date.now() + 20_000;
    let sync: { status: string } = { status: '' };
    while (Date.now() < deadline) {
      sync = (await app.request('GET', '/api/auth/email-settings', { token: t.adminToken })).body.data.sync;
      if (sync.status === 'ok') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(sync.status).to.equal('ok');
    expect(await env.knex('communication_messages').where({ tenant_id: t.tenant.id })).to.have.length(5);
    // finished: the next request is a new job
    const third = await app.request('POST', '/api/auth/email-settings/sync', { token: t.adminToken });
    expect(third.status).to.equal(202);
    expect(third.body.data.job_id).not.to.equal(first.body.data.job_id);
    expect(account.id).to.be.a('number');
  });

  it('test-incoming: good -> ok, 1 synced; bad password -> auth_failed; port closed -> connect_failed', async () => {
    if (!handle) await startWorker();
    const { t, box } = await accountFixture(stack);
    await stack.deliver({ from: 'a@outside.test', to: box.email, subject: 'one' });
    await stack.deliver({ from: 'a@outside.test', to: box.email, subject: 'two' });
    const good = await app.request('POST', '/api/auth/email-settings/test-incoming', { token: t.adminToken });
    expect(good.status).to.equal(200);
    expect(good.body.ok).to.equal(true);
    expect(good.body.data).to.include({ protocol: 'imap', messages_on_server: 2, synced: 1 });
    const row = await env.knex('communication_messages').where({ id: good.body.data.communication_id }).first();
    expect(row.subject).to.equal('two');

    const current = (await app.request('GET', '/api/auth/email-settings', { token: t.adminToken })).body.data;
    const body = { ...current };
    for (const k of ['leave_on_server', 'incoming_password_set', 'outgoing_password_set', 'source', 'sync'])
      delete body[k];
    await app.request('PUT', '/api/auth/email-settings', {
      token: t.adminToken,
      body: { ...body, incoming_password: 'Wrong-Sentinel-pw-8080' },
    });
    const bad = await app.request('POST', '/api/auth/email-settings/test-incoming', { token: t.adminToken });
    expect(bad.body).to.deep.include({ ok: false });
    expect(bad.body.error.code).to.equal('auth_failed');

    await app.request('PUT', '/api/auth/email-settings', {
      token: t.adminToken,
      body: { ...body, incoming_port: 1 },
    });
    const closed = await app.request('POST', '/api/auth/email-settings/test-incoming', { token: t.adminToken });
    expect(closed.body.error.code).to.equal('connect_failed');
    const all = [good.text, bad.text, closed.text, ...app.logs, ...workerLogs].join('\n');
    expect(all).not.to.include('Wrong-Sentinel-pw-8080');
  });

  it('demo tenant: 403 demo_guard_blocked; technician 403', async () => {
    const demo = await makeTenant({ demo: true });
    for (const p of ['sync', 'test-incoming']) {
      const res = await app.request('POST', `/api/auth/email-settings/${p}`, { token: demo.adminToken });
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('demo_guard_blocked');
    }
    const t: TenantFixture = await makeTenant();
    const tech = await makeUser(t.tenant.id, 'technician');
    const res = await app.request('POST', '/api/auth/email-settings/sync', { token: tech.token });
    expect(res.status).to.equal(403);
  });
});
