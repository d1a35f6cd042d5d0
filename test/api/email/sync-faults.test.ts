import { expect } from 'chai';
import net from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { getMailStack, type MailStack } from '../../helpers/mail.js';
import { accountFixture, pop3AccountFixture } from '../../helpers/email.js';
import { startWorkers, type WorkerHandle } from '../../../workers/main.js';
import * as imapSync from '../../../jobs/imap-sync.js';
import { createQueues } from '../../../jobs/queues.js';
import { createStorage } from '../../../lib/storage/index.js';
import { createLogger } from '../../../lib/logger.js';

/** The test-incoming bound of this file's app (the real one is 30 s). */
const WAIT_MS = 1500;

/** Issue 9 "Bad input and failure" on the routes: hung server, Redis down, Dovecot down; POP3 through the routes. */
describe('/api/auth/email-settings test-incoming and sync: failures, POP3', function () {
  this.timeout(60_000);
  let app: TestApp;
  let stack: MailStack;
  let handle: WorkerHandle;

  before(async () => {
    app = await startTestApp({ emailTestWaitMs: WAIT_MS });
    stack = await getMailStack();
    handle = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_WEB_APP_KEY,
      prefix: app.queues.prefix,
      logger: createLogger('silent', new Writable({ write: (_c, _e, cb) => cb() })),
      storage: createStorage({ driver: 'local', root: path.join(env.dir, 'storage') }),
      queues: ['imap-sync'],
      registry: { 'imap-sync': { processor: imapSync.process, concurrency: 2 } },
    });
    // the worker keeps the default mail-server bound (10 s): the route's wait ends first
    registerCleanup(() => handle.close());
  });

  const settings = (token: string) => app.request('GET', '/api/auth/email-settings', { token });

  it('test-incoming against a server that accepts TCP and never answers: 200 {ok: false, code timeout} within the bound', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((s) => {
      sockets.add(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    registerCleanup(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    });
    const { t, account } = await accountFixture(stack);
    const port = (silent.address() as AddressInfo).port;
    await env.knex('external_email_accounts').where({ id: account.id }).update({ incoming_port: port });
    const started = Date.now();
    const res = await app.request('POST', '/api/auth/email-settings/test-incoming', { token: t.adminToken });
    const took = Date.now() - started;
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({
      ok: false,
      error: { code: 'timeout', message: `The connection test did not finish in ${WAIT_MS / 1000} s.` },
    });
    expect(took).to.be.at.least(WAIT_MS).and.below(30_000);
    expect(sockets.size).to.be.at.least(1);
  });

  it('Redis down: sync and test-incoming answer 503 QUEUE_UNAVAILABLE and change nothing', async () => {
    const { t, account } = await accountFixture(stack);
    const down = await startTestApp();
    const dead = createQueues('redis://127.0.0.1:1', { prefix: `{email-dead-${process.pid}}` });
    registerCleanup(() => dead.close());
    Object.assign(down.queues, { get: dead.get.bind(dead) });
    for (const p of ['sync', 'test-incoming']) {
      const res = await down.request('POST', `/api/auth/email-settings/${p}`, { token: t.adminToken });
      expect(res.status, p).to.equal(503);
      expect(res.body.code, p).to.equal('QUEUE_UNAVAILABLE');
    }
    const acc = await env.knex('external_email_accounts').where({ id: account.id }).first();
    expect(acc.sync_status).to.equal('never');
  });

  it("Dovecot down: the sync job fails and GET's sync shows status failed with a readable reason", async () => {
    const { t } = await accountFixture(stack);
    await stack.stopDovecot();
    try {
      const res = await app.request('POST', '/api/auth/email-settings/sync', { token: t.adminToken });
      expect(res.status).to.equal(202);
      const deadline = Date.now() + 20_000;
      let sync: { status: string; last_error: string | null } = { status: '', last_error: null };
      while (Date.now() < deadline) {
        sync = (await settings(t.adminToken)).body.data.sync;
        if (sync.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(sync).to.include({ status: 'failed', last_error: 'IMAP connection failed (ECONNREFUSED)' });
      const job = await app.queues.get(imapSync.QUEUE).getJob(res.body.data.job_id);
      // the attempt failed with the same reason (then a retry waits: 3 attempts for network errors)
      expect(job?.failedReason).to.equal('IMAP connection failed (ECONNREFUSED)');
      expect(job?.attemptsMade).to.be.at.least(1);
      await job?.remove();
    } finally {
      await stack.startDovecot();
    }
  });

  it('a POP3 account through the routes: test-incoming answers protocol pop3; sync imports the rest', async () => {
    const { t, box } = await pop3AccountFixture(stack);
    for (const s of ['one', 'two', 'three'])
      await stack.deliver({ from: 'a@outside.test', to: box.email, subject: s, text: s });
    const test = await app.request('POST', '/api/auth/email-settings/test-incoming', { token: t.adminToken });
    expect(test.status).to.equal(200);
    expect(test.body.data).to.include({ protocol: 'pop3', messages_on_server: 3, synced: 1 });
    const res = await app.request('POST', '/api/auth/email-settings/sync', { token: t.adminToken });
    expect(res.status).to.equal(202);
    const deadline = Date.now() + 20_000;
    let status = '';
    while (Date.now() < deadline) {
      status = (await settings(t.adminToken)).body.data.sync.status;
      if (status === 'ok') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).to.equal('ok');
    const subjects = await env
      .knex('communication_messages')
      .where({ tenant_id: t.tenant.id })
      .orderBy('subject')
      .pluck('subject');
    expect(subjects).to.deep.equal(['one', 'three', 'two']);
    const list = await app.request('GET', '/api/communications?channel=email', { token: t.adminToken });
    expect(list.body.data.map((m: { subject: string }) => m.subject)).to.have.members(['one', 'two', 'three']);
  });
});
