import { expect } from 'chai';
import fs from 'node:fs/promises';
import nock from 'nock';
import { startWorkers } from '../workers/main.js';
import * as mailboxCreate from '../jobs/mailbox-create.js';
import { createMailboxClient } from '../jobs/adapters/mailbox-client/index.js';
import { getMailStack } from './helpers/mail.js';
import { env, registerCleanup } from './helpers/env.js';
import { FakeMailboxClient } from './api/mail/fake-client.js';
import {
  SENTINEL_MAILBOX_PASSWORD as PW,
  SENTINEL_NEW_PASSWORD as NEW_PW,
  TEST_APP_KEY,
  allMailLogs,
  captureLogger,
  dumpStores,
  enc,
  makeDomain,
  makeKey,
  makeMailbox,
  processOutput,
  secretForms,
  startMailTestApp,
  uniq,
} from './api/mail/support.js';

/**
 * Issue 3 item 4: mailbox passwords are never stored. This file sorts last (`test/zz-...`), and
 * `npm test` (bin/test.ts) runs it last in each shard, so it runs after every test of its process
 * that uses the sentinels (test/api/mail/*, test/jobs/mailbox-create.test.ts, ...); its `before`
 * checks that it really is the last suite of the run.
 * It also exercises the sentinels itself: a header and a body password against real Dovecot, a
 * failing create whose panel answer quotes the new password, an unexpected error whose message
 * carries the password. Then neither sentinel may appear in any table, any Redis key or value, any
 * log line of the mail apps, jobs and mail clients, anything the test process printed, or
 * Dovecot's log.
 */
describe('Mailbox API: the sentinel passwords appear nowhere afterwards (issue 3 item 4)', () => {
  let serverErrorBody: any;

  before(async function () {
    this.timeout(120_000);
    const suite = this.test!.parent!;
    const last = suite.parent!.suites.at(-1);
    expect(
      last,
      'the sentinel check must be the last suite of the run (run the whole suite, or name this file last)',
    ).to.equal(suite);
    const stack = await getMailStack();
    const client = createMailboxClient({ idleMs: 500, logger: captureLogger() });
    registerCleanup(() => client.close());
    const app = await startMailTestApp({ mailClient: client });
    const domain = await makeDomain({
      imap: stack.imap,
      smtp: stack.smtp,
      panel: {
        type: 'cpanel',
        host: `cp-${uniq()}.example.test`,
        port: 2083,
        user: 'u',
        password: 'TOKEN-ZZ-0123456789',
      },
    });
    const box = await makeMailbox(domain);
    await stack.addMailbox(box.email, PW);
    await stack.deliver({ from: 'a@outside.test', to: box.email, subject: 'zz', text: 'zz' });
    const key = (await makeKey(domain, [box.id], ['emails:read', 'emails:reply', 'emails:send', 'mailboxes:create']))
      .key;
    expect(
      (await app.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails`, { key, password: PW })).status,
    ).to.equal(200);
    expect(
      (
        await app.request('POST', `/api/v1/mailboxes/${enc(box.email)}/emails/999999/reply`, {
          key,
          body: { body: 'x', mailbox_password: PW },
        })
      ).status,
    ).to.equal(404);
    expect(
      (
        await app.request('POST', `/api/v1/mailboxes/${enc(box.email)}/send`, {
          key,
          body: { to: box.email, subject: 'zz', body: 'zz', mailbox_password: PW },
        })
      ).status,
    ).to.equal(200);

    // a create whose panel quotes the password back in its error
    const prefix = `{mailzz-${uniq()}}`;
    mailboxCreate.configureMailboxCreate({});
    const workers = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_APP_KEY,
      queues: ['mailbox-create'],
      prefix,
      logger: captureLogger(),
      shutdownGraceMs: 1000,
      registry: { 'mailbox-create': { processor: mailboxCreate.process } },
    });
    registerCleanup(() => workers.close());
    const creator = await startMailTestApp({ mailClient: client, prefix, config: { createWaitMs: 15_000 } });
    nock(`https://${(await env.knex('mail_domains').where({ id: domain.id }).first()).panel_host}:2083`)
      .post('/execute/Email/add_pop')
      .reply(200, (_uri, body) => ({
        status: 0,
        errors: [`Password "${new URLSearchParams(String(body)).get('password')}" is not allowed.`],
        data: null,
      }));
    const created = await creator.request('POST', `/api/v1/domains/${domain.name}/mailboxes`, {
      key,
      body: { local_part: `zz-${uniq()}`, password: NEW_PW },
    });
    expect(created.status, created.text).to.equal(502);
    expect(created.text).not.to.include(NEW_PW);
    nock.cleanAll();

    // an unexpected failure whose error message carries the password -> 500, logged scrubbed
    const buggy = new FakeMailboxClient();
    buggy.listEmails = async (c) => {
      throw new Error(`library bug while using ${c.password}`);
    };
    const broken = await startMailTestApp({ mailClient: buggy });
    const res = await broken.request('GET', `/api/v1/mailboxes/${enc(box.email)}/emails`, { key, password: PW });
    expect(res.status).to.equal(500);
    serverErrorBody = res.body;
    expect(broken.logs.join('')).to.include(res.body.request_id);
  });

  it('a 500 answers server_error with the request id and logs the error with the password redacted', () => {
    expect(serverErrorBody).to.include({ ok: false, error: 'server_error' });
    expect(serverErrorBody.request_id).to.be.a('string');
    const line = allMailLogs.find((l) => l.includes(serverErrorBody.request_id) && l.includes('request failed'));
    expect(line).to.be.a('string');
    expect(line).to.include('library bug while using [redacted]');
  });

  it('neither sentinel is in any table of the database', async () => {
    const { db } = await dumpStores();
    expect(db).to.include('mail_mailbox_requests');
    for (const s of [PW, NEW_PW]) for (const f of secretForms(s)) expect(db, f).not.to.include(f);
  });

  it('neither sentinel is in any Redis key or value (strings, hashes, lists, sets, sorted sets, streams)', async () => {
    const { redis } = await dumpStores();
    expect(redis).to.include('mailbox-create');
    for (const s of [PW, NEW_PW]) for (const f of secretForms(s)) expect(redis, f).not.to.include(f);
  });

  it("neither sentinel is in any log line of the mail apps, jobs and mail clients, in anything the test process printed, nor in Dovecot's log", async () => {
    // the capture works: it holds this file's own 500 (with `npm test`'s shards, a shard may run no other mail test)
    expect(allMailLogs.some((l) => l.includes(serverErrorBody.request_id))).to.equal(true);
    expect(processOutput.join('')).to.include('Mailbox API');
    const dovecotLog = await fs.readFile((await getMailStack()).dovecot.logFile, 'utf8');
    for (const s of [PW, NEW_PW]) {
      for (const f of secretForms(s)) {
        expect(allMailLogs.join('\n'), f).not.to.include(f);
        expect(processOutput.join(''), f).not.to.include(f);
        expect(dovecotLog, f).not.to.include(f);
      }
    }
  });
});
