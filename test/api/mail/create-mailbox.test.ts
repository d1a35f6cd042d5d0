import { expect } from 'chai';
import nock from 'nock';
import { startWorkers } from '../../../workers/main.js';
import * as mailboxCreate from '../../../jobs/mailbox-create.js';
import { createQueues } from '../../../jobs/queues.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { FakeMailboxClient } from './fake-client.js';
import {
  SENTINEL_NEW_PASSWORD as NEW_PW,
  TEST_APP_KEY,
  captureLogger,
  makeDomain,
  makeKey,
  makeMailbox,
  startMailTestApp,
  uniq,
  type DomainFixture,
  type MailTestApp,
} from './support.js';

const PANEL_TOKEN = 'PANELTOKEN-0123456789ABCDEF';

/**
 * POST /api/v1/domains/{domain}/mailboxes (document 3) end to end: the API seals the password,
 * enqueues `mailbox-create`, a real BullMQ worker (in-process, unique queue prefix) runs the job
 * against a nock'ed cPanel UAPI, and the API answers 201, 202 (poll), or the mapped failure.
 */
describe("Mailbox API: create mailbox through the mailbox-create job (nock'ed cPanel)", () => {
  const prefix = `{mailcreate-${uniq()}}`;
  let app: MailTestApp;
  let slow: MailTestApp;
  let domain: DomainFixture;
  let panelHost: string;
  let key: string;

  before(async function () {
    this.timeout(60_000);
    mailboxCreate.configureMailboxCreate({});
    const workers = await startWorkers({
      redisUrl: env.redisUrl,
      knex: env.knex,
      appKey: TEST_APP_KEY,
      queues: ['mailbox-create'],
      prefix,
      logger: captureLogger(),
      shutdownGraceMs: 1000,
      registry: { 'mailbox-create': { processor: mailboxCreate.process, concurrency: 5 } },
    });
    registerCleanup(() => workers.close());
    app = await startMailTestApp({ mailClient: new FakeMailboxClient(), prefix, config: { createWaitMs: 15_000 } });
    slow = await startMailTestApp({ mailClient: new FakeMailboxClient(), prefix, config: { createWaitMs: 200 } });
    panelHost = `cpanel-${uniq()}.example.test`;
    domain = await makeDomain({
      panel: { type: 'cpanel', host: panelHost, port: 2083, user: 'cpuser', password: PANEL_TOKEN },
    });
    key = (await makeKey(domain, [], ['mailboxes:create'])).key;
  });
  afterEach(() => nock.cleanAll());

  /** Intercepts Email/add_pop for `local`, checking the form and the token; answers via `reply`. */
  function addPop(local: string, reply: () => Promise<[number, unknown]> | [number, unknown], times = 1) {
    return nock(`https://${panelHost}:2083`)
      .post(
        '/execute/Email/add_pop',
        (b: Record<string, string>) => b.email === local && b.domain === domain.name && b.password === NEW_PW,
      )
      .matchHeader('authorization', `cpanel cpuser:${PANEL_TOKEN}`)
      .times(times)
      .reply(async () => reply());
  }
  const ok = (): [number, unknown] => [
    200,
    { status: 1, errors: null, messages: null, warnings: null, data: `${domain.name}+x`, metadata: {} },
  ];
  const create = (a: MailTestApp, body: Record<string, unknown>, k = key, d = domain.name) =>
    a.request('POST', `/api/v1/domains/${d}/mailboxes`, { key: k, body });
  const requestRow = (local: string) =>
    env.knex('mail_mailbox_requests').where({ domain_id: domain.id, local_part: local }).orderBy('id', 'desc').first();

  it('201 with the new mailbox when the panel answers in time; registered, request created, sealed password deleted', async () => {
    const local = `alice-${uniq()}`;
    const scope = addPop(local, ok);
    const res = await create(app, { local_part: local, password: NEW_PW, real_name: 'Alice A.', quota: '500M' });
    expect(res.status, res.text).to.equal(201);
    const email = `${local}@${domain.name}`;
    expect(res.body).to.deep.equal({
      ok: true,
      status: 'created',
      data: {
        email,
        username: email,
        domain: domain.name,
        imap_host: 'imap.invalid',
        imap_port: 993,
        smtp_host: 'smtp.invalid',
        smtp_port: 465,
      },
    });
    expect(scope.isDone()).to.equal(true);
    const box = await env.knex('mail_mailboxes').where({ email }).first();
    expect(box).to.include({ domain_id: domain.id, local_part: local, display_name: 'Alice A.' });
    const req = await requestRow(local);
    expect(req).to.include({ status: 'created', mailbox_id: box.id, quota: '500M' });
    expect(await env.knex('mail_sealed_secrets').count('* as n').first()).to.deep.equal({ n: 0 });
    const job = await app.queues.get('mailbox-create').getJob(mailboxCreate.jobId(req.id));
    expect(job?.data).to.deep.equal({ request_id: req.id, secret_id: job?.data.secret_id });
    expect(Object.keys(job!.data).sort()).to.deep.equal(['request_id', 'secret_id']);
  });

  it('202 pending with a job_id when the panel is slower than createWaitMs; the poll answers 202, then 200 with the mailbox', async function () {
    this.timeout(30_000);
    const local = `slow-${uniq()}`;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const scope = addPop(local, async () => {
      await gate;
      return ok();
    });
    const res = await create(slow, { local_part: local, password: NEW_PW });
    expect(res.status, res.text).to.equal(202);
    const req = await requestRow(local);
    expect(res.body).to.deep.equal({ ok: true, status: 'pending', job_id: `mailbox-create-${req.id}` });
    const pending = await slow.request('GET', `/api/v1/domains/${domain.name}/mailboxes/requests/${res.body.job_id}`, {
      key,
    });
    expect(pending.status).to.equal(202);
    expect(pending.body).to.deep.equal(res.body);
    const dup = await create(slow, { local_part: local, password: NEW_PW });
    expect(dup.status).to.equal(409);
    expect(dup.body).to.deep.include({ ok: false, error: 'mailbox_exists', job_id: res.body.job_id });
    release();
    let done = pending;
    for (let i = 0; i < 100 && done.status === 202; i++) {
      await new Promise((r) => setTimeout(r, 100));
      done = await slow.request('GET', `/api/v1/domains/${domain.name}/mailboxes/requests/${res.body.job_id}`, { key });
    }
    expect(done.status, done.text).to.equal(200);
    expect(done.body.data).to.include({ email: `${local}@${domain.name}`, username: `${local}@${domain.name}` });
    expect(scope.isDone()).to.equal(true);
    const again = await create(app, { local_part: local, password: NEW_PW });
    expect(again.status).to.equal(409);
    expect(again.body.error).to.equal('mailbox_exists');
  });

  it('maps panel failures: exists -> 409 mailbox_exists, refused credentials and permanent errors -> 502 mail_server_error', async () => {
    const cases: [string, [number, unknown], number, string, RegExp][] = [
      [
        'exists',
        [200, { status: 0, errors: ['The account “x” already exists.'], data: null }],
        409,
        'mailbox_exists',
        /already exists/,
      ],
      ['auth', [401, 'Access denied'], 502, 'mail_server_error', /credentials/],
      [
        'permanent',
        [200, { status: 0, errors: ['The password you selected does not meet the strength requirement.'], data: null }],
        502,
        'mail_server_error',
        /strength requirement/,
      ],
    ];
    for (const [kind, answer, status, error, message] of cases) {
      const local = `${kind}-${uniq()}`;
      const scope = addPop(local, () => answer);
      const res = await create(app, { local_part: local, password: NEW_PW });
      expect(res.status, `${kind}: ${res.text}`).to.equal(status);
      expect(res.body.ok).to.equal(false);
      expect(res.body.error).to.equal(error);
      expect(res.body.message).to.match(message);
      expect(res.text).not.to.include(PANEL_TOKEN);
      expect(scope.isDone()).to.equal(true);
      const req = await requestRow(local);
      expect(req).to.include({ status: 'failed', error_code: kind });
      expect(res.body.job_id).to.equal(`mailbox-create-${req.id}`);
      expect(
        await env
          .knex('mail_mailboxes')
          .where({ email: `${local}@${domain.name}` })
          .first(),
      ).to.equal(undefined);
    }
    expect(await env.knex('mail_sealed_secrets').count('* as n').first()).to.deep.equal({ n: 0 });
  });

  it('retries a transient panel failure (HTTP 503) with backoff and answers 201 once the panel recovers', async function () {
    this.timeout(30_000);
    const local = `retry-${uniq()}`;
    let calls = 0;
    const scope = addPop(local, () => (++calls === 1 ? [503, 'Service Unavailable'] : ok()), 2);
    const res = await create(app, { local_part: local, password: NEW_PW });
    expect(res.status, res.text).to.equal(201);
    expect(calls).to.equal(2);
    expect(scope.isDone()).to.equal(true);
    expect((await requestRow(local)).status).to.equal('created');
  });

  it('422 invalid_request with field errors, never echoing the password; nothing is written or enqueued', async () => {
    const before = await env.knex('mail_mailbox_requests').count('* as n').first();
    const cases: [Record<string, unknown>, string][] = [
      [{ password: NEW_PW }, 'local_part'],
      [{ local_part: 'bad..part', password: NEW_PW }, 'local_part'],
      [{ local_part: '-x', password: NEW_PW }, 'local_part'],
      [{ local_part: 'a b', password: NEW_PW }, 'local_part'],
      [{ local_part: 'x'.repeat(65), password: NEW_PW }, 'local_part'],
      [{ local_part: 'ok' }, 'password'],
      [{ local_part: 'ok', password: 'short-pw9' }, 'password'],
      [{ local_part: 'ok', password: `${NEW_PW}\n` }, 'password'],
      [{ local_part: 'ok', password: NEW_PW, quota: '5T' }, 'quota'],
      [{ local_part: 'ok', password: NEW_PW, quota: 500 }, 'quota'],
      [{ local_part: 'ok', password: NEW_PW, real_name: 'Evil\r\nName' }, 'real_name'],
    ];
    for (const [body, field] of cases) {
      const res = await create(app, body);
      expect(res.status, JSON.stringify(body)).to.equal(422);
      expect(res.body.error).to.equal('invalid_request');
      expect(res.body.errors, JSON.stringify(body)).to.have.property(field);
      expect(res.text).not.to.include(NEW_PW);
    }
    expect(await env.knex('mail_mailbox_requests').count('* as n').first()).to.deep.equal(before);
  });

  it('403 forbidden without mailboxes:create, 403 domain_not_allowed for another domain, 404 domain_not_found for an unknown one', async () => {
    const reader = (await makeKey(domain, [], ['emails:read'])).key;
    const other = await makeDomain({
      panel: { type: 'cpanel', host: panelHost, port: 2083, user: 'cpuser', password: PANEL_TOKEN },
    });
    const body = { local_part: `x-${uniq()}`, password: NEW_PW };
    const f = await create(app, body, reader);
    expect([f.status, f.body.error]).to.deep.equal([403, 'forbidden']);
    const n = await create(app, body, key, other.name);
    expect([n.status, n.body.error]).to.deep.equal([403, 'domain_not_allowed']);
    const u = await create(app, body, key, `unknown-${uniq()}.test`);
    expect([u.status, u.body.error]).to.deep.equal([404, 'domain_not_found']);
    const upper = await create(app, { local_part: 'bad..part', password: NEW_PW }, key, domain.name.toUpperCase());
    expect([upper.status, upper.body.error]).to.deep.equal([422, 'invalid_request']);
  });

  it('409 mailbox_exists for a registered address and 409 panel_not_configured for a domain without panel, without calling any panel', async () => {
    const existing = await makeMailbox(domain, `taken-${uniq()}`);
    const res = await create(app, { local_part: existing.email.split('@')[0].toUpperCase(), password: NEW_PW });
    expect([res.status, res.body.error]).to.deep.equal([409, 'mailbox_exists']);
    const bare = await makeDomain({ panel: null });
    const bareKey = (await makeKey(bare, [], ['mailboxes:create'])).key;
    const p = await create(app, { local_part: 'someone', password: NEW_PW }, bareKey, bare.name);
    expect([p.status, p.body.error]).to.deep.equal([409, 'panel_not_configured']);
    expect(await env.knex('mail_mailbox_requests').where({ domain_id: bare.id }).count('* as n').first()).to.deep.equal(
      { n: 0 },
    );
  });

  it('503 queue_unavailable when the job cannot be enqueued; the request and the sealed password are removed again', async () => {
    const down = await startMailTestApp({ mailClient: new FakeMailboxClient(), prefix, config: { createWaitMs: 200 } });
    const deadQueues = createQueues('redis://127.0.0.1:1', { prefix });
    registerCleanup(() => deadQueues.close());
    (down.queues as { get: unknown }).get = deadQueues.get.bind(deadQueues);
    const local = `noqueue-${uniq()}`;
    const res = await create(down, { local_part: local, password: NEW_PW });
    expect(res.status).to.equal(503);
    expect(res.body.error).to.equal('queue_unavailable');
    expect(await requestRow(local)).to.equal(undefined);
    expect(await env.knex('mail_sealed_secrets').count('* as n').first()).to.deep.equal({ n: 0 });
  });

  it('the poll answers 404 request_not_found for unknown ids and for requests of another domain', async () => {
    for (const id of ['nope', 'mailbox-create-999999999', '12']) {
      const res = await app.request('GET', `/api/v1/domains/${domain.name}/mailboxes/requests/${id}`, { key });
      expect([res.status, res.body.error], id).to.deep.equal([404, 'request_not_found']);
    }
    const other = await makeDomain({
      panel: { type: 'cpanel', host: panelHost, port: 2083, user: 'cpuser', password: PANEL_TOKEN },
    });
    const [foreign] = await env
      .knex('mail_mailbox_requests')
      .insert({ domain_id: other.id, local_part: 'x', status: 'pending' })
      .returning('id');
    const res = await app.request(
      'GET',
      `/api/v1/domains/${domain.name}/mailboxes/requests/mailbox-create-${foreign.id}`,
      { key },
    );
    expect(res.status).to.equal(404);
    await env.knex('mail_mailbox_requests').where({ id: foreign.id }).del();
  });
});
