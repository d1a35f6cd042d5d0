import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { DelayedError, UnrecoverableError } from 'bullmq';
import { seal } from '../../lib/crypto.js';
import { configureJobDeps } from '../../jobs/deps.js';
import * as mailboxCreate from '../../jobs/mailbox-create.js';
import { SHUTDOWN_ABORT_REASON } from '../../jobs/queues.js';
import {
  PanelError,
  type CreateMailboxInput,
  type MailPanel,
  type MailPanelConfig,
} from '../../jobs/adapters/mail-panel/index.js';
import { env } from '../helpers/env.js';
import { fakeJob } from './fake-job.js';
import {
  SENTINEL_NEW_PASSWORD as NEW_PW,
  TEST_APP_KEY,
  captureLogger,
  dumpStores,
  makeDomain,
  secretForms,
  uniq,
  type DomainFixture,
} from '../api/mail/support.js';

/** A panel that records its calls and answers with `behaviour`. */
function fakePanel(behaviour: (input: CreateMailboxInput) => Promise<void> | void) {
  const calls: { cfg: MailPanelConfig; input: CreateMailboxInput }[] = [];
  const factory = (cfg: MailPanelConfig): MailPanel => ({
    async createMailbox(input) {
      calls.push({ cfg, input });
      await behaviour(input);
    },
    async mailboxExists() {
      return false;
    },
    async testConnection() {
      /* ok */
    },
  });
  return { calls, factory };
}

describe('job mailbox-create (processor with a fake job and a fake panel)', () => {
  const logs: string[] = [];
  let domain: DomainFixture;

  before(async () => {
    configureJobDeps({ knex: env.knex, logger: captureLogger(logs), appKey: TEST_APP_KEY });
    domain = await makeDomain({
      panel: { type: 'cpanel', host: 'panel.example.test', port: 2083, user: 'cpuser', password: 'PANEL-SECRET-TOKEN' },
    });
  });
  after(() => mailboxCreate.configureMailboxCreate({}));

  /** A pending request and its sealed password, written the way the API writes them. */
  async function pending(o: { d?: DomainFixture; expiresInMs?: number; sealWith?: Buffer } = {}) {
    const d = o.d ?? domain;
    const local = `job-${uniq()}`;
    const [req] = await env
      .knex('mail_mailbox_requests')
      .insert({ domain_id: d.id, local_part: local, real_name: 'Job Test', quota: '2G', status: 'pending' })
      .returning('id');
    const secretId = randomUUID();
    await env.knex('mail_sealed_secrets').insert({
      id: secretId,
      purpose: 'mailbox-create',
      ciphertext: seal(o.sealWith ?? TEST_APP_KEY, NEW_PW, mailboxCreate.secretAad(secretId)),
      expires_at: new Date(Date.now() + (o.expiresInMs ?? 15 * 60_000)),
    });
    return { requestId: Number(req.id), secretId, email: `${local}@${d.name}`, local };
  }

  function job(
    data: mailboxCreate.MailboxCreateData,
    o: { attemptsMade?: number; attempts?: number; attemptsStarted?: number } = {},
  ) {
    const f = fakeJob(data);
    const delayed: number[] = [];
    const j: mailboxCreate.MailboxCreateJob = {
      ...f.job,
      attemptsMade: o.attemptsMade ?? 0,
      attemptsStarted: o.attemptsStarted ?? (o.attemptsMade ?? 0) + 1,
      opts: { attempts: o.attempts ?? 5 },
      async moveToDelayed(ts) {
        delayed.push(ts);
      },
    };
    return { j, logs: f.logs, progress: f.progress, delayed };
  }

  const secretLeft = async (id: string) => (await env.knex('mail_sealed_secrets').where({ id }).first()) !== undefined;
  const request = (id: number) => env.knex('mail_mailbox_requests').where({ id }).first();

  it('creates the mailbox with the unsealed password, registers it, marks the request created and deletes the sealed row', async () => {
    const panel = fakePanel(() => undefined);
    mailboxCreate.configureMailboxCreate({ panelFactory: panel.factory });
    const p = await pending();
    const { j, logs: jobLogs, progress } = job({ request_id: p.requestId, secret_id: p.secretId });
    const result = await mailboxCreate.process(j, 'token');
    const box = await env.knex('mail_mailboxes').where({ email: p.email }).first();
    expect(result).to.deep.equal({ status: 'created', request_id: p.requestId, mailbox_id: box.id });
    expect(panel.calls).to.have.length(1);
    expect(panel.calls[0].input).to.deep.equal({
      domain: domain.name,
      local_part: p.local,
      password: NEW_PW,
      real_name: 'Job Test',
      quota: '2G',
    });
    expect(panel.calls[0].cfg).to.include({
      type: 'cpanel',
      host: 'panel.example.test',
      port: 2083,
      user: 'cpuser',
      password: 'PANEL-SECRET-TOKEN',
      ssl: true,
    });
    expect(await request(p.requestId)).to.include({ status: 'created', mailbox_id: box.id, error_code: null });
    expect(await secretLeft(p.secretId)).to.equal(false);
    expect(progress.at(-1)).to.equal(100);
    expect(jobLogs.join('\n')).to.include(p.email);
    expect(jobLogs.join('\n')).not.to.include(NEW_PW);
  });

  it('is idempotent: a re-run of a created request neither calls the panel nor registers twice', async () => {
    const panel = fakePanel(() => undefined);
    mailboxCreate.configureMailboxCreate({ panelFactory: panel.factory });
    const p = await pending();
    await mailboxCreate.process(job({ request_id: p.requestId, secret_id: p.secretId }).j, 'token');
    const again = await mailboxCreate.process(
      job({ request_id: p.requestId, secret_id: p.secretId }, { attemptsMade: 1 }).j,
      'token',
    );
    expect(again.status).to.equal('already_created');
    expect(panel.calls).to.have.length(1);
    expect(await env.knex('mail_mailboxes').where({ email: p.email }).count('* as n').first()).to.deep.equal({ n: 1 });
  });

  it('an expired, missing or unreadable sealed password is unrecoverable: request failed, row deleted, panel not called', async () => {
    const panel = fakePanel(() => undefined);
    mailboxCreate.configureMailboxCreate({ panelFactory: panel.factory });
    const expired = await pending({ expiresInMs: -3600_000 });
    const missing = await pending();
    await env.knex('mail_sealed_secrets').where({ id: missing.secretId }).del();
    const foreign = await pending({ sealWith: randomBytes(32) });
    for (const [p, code] of [
      [expired, 'secret_expired'],
      [missing, 'secret_expired'],
      [foreign, 'secret_unreadable'],
    ] as const) {
      let err: unknown;
      try {
        await mailboxCreate.process(job({ request_id: p.requestId, secret_id: p.secretId }).j, 'token');
      } catch (e) {
        err = e;
      }
      expect(err, code).to.be.instanceOf(UnrecoverableError);
      expect(await request(p.requestId)).to.include({ status: 'failed', error_code: code });
      expect(await secretLeft(p.secretId)).to.equal(false);
    }
    expect(panel.calls).to.have.length(0);
  });

  it('takes APP_KEY from the job deps (never the environment): a worker without one fails the request without calling the panel', async () => {
    const panel = fakePanel(() => undefined);
    mailboxCreate.configureMailboxCreate({ panelFactory: panel.factory });
    const p = await pending();
    const savedEnv = process.env.APP_KEY;
    process.env.APP_KEY = TEST_APP_KEY.toString('hex'); // present in the environment, yet not used
    configureJobDeps({ knex: env.knex, logger: captureLogger(logs) });
    let err: unknown;
    try {
      await mailboxCreate.process(job({ request_id: p.requestId, secret_id: p.secretId }).j, 'token');
    } catch (e) {
      err = e;
    } finally {
      configureJobDeps({ knex: env.knex, logger: captureLogger(logs), appKey: TEST_APP_KEY });
      if (savedEnv === undefined) delete process.env.APP_KEY;
      else process.env.APP_KEY = savedEnv;
    }
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect((err as Error).message).to.include('no APP_KEY');
    expect(await request(p.requestId)).to.include({ status: 'failed', error_code: 'secret_unreadable' });
    expect(await secretLeft(p.secretId)).to.equal(false);
    expect(panel.calls).to.have.length(0);
  });

  it('a domain without a panel fails permanently with "domain has no mail panel"', async () => {
    mailboxCreate.configureMailboxCreate({ panelFactory: fakePanel(() => undefined).factory });
    const bare = await makeDomain({ panel: null });
    const p = await pending({ d: bare });
    let err: unknown;
    try {
      await mailboxCreate.process(job({ request_id: p.requestId, secret_id: p.secretId }).j, 'token');
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UnrecoverableError);
    expect((err as Error).message).to.include('domain has no mail panel');
    expect(await request(p.requestId)).to.include({ status: 'failed', error_code: 'no_panel' });
    expect(await secretLeft(p.secretId)).to.equal(false);
  });

  it('transient failures retry (plain Error, sealed row kept) until the last attempt, which fails the request and deletes the row', async () => {
    mailboxCreate.configureMailboxCreate({
      panelFactory: fakePanel(() => {
        throw new PanelError('transient', 'cpanel Email/add_pop: ECONNRESET');
      }).factory,
    });
    const p = await pending();
    let err: unknown;
    try {
      await mailboxCreate.process(
        job({ request_id: p.requestId, secret_id: p.secretId }, { attemptsMade: 0, attempts: 3 }).j,
        'token',
      );
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(Error);
    expect(err).not.to.be.instanceOf(UnrecoverableError);
    expect((await request(p.requestId)).status).to.equal('pending');
    expect(await secretLeft(p.secretId)).to.equal(true);
    err = undefined;
    try {
      await mailboxCreate.process(
        job({ request_id: p.requestId, secret_id: p.secretId }, { attemptsMade: 2, attempts: 3 }).j,
        'token',
      );
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(Error);
    expect(await request(p.requestId)).to.include({ status: 'failed', error_code: 'transient' });
    expect(await secretLeft(p.secretId)).to.equal(false);
  });

  it('permanent, auth and exists failures are unrecoverable, keep the PanelError as cause and never store the password', async () => {
    for (const kind of ['permanent', 'auth', 'exists'] as const) {
      // a panel that (against the adapters' rules) echoes the password: the job still redacts it
      mailboxCreate.configureMailboxCreate({
        panelFactory: fakePanel((i) => {
          throw new PanelError(kind, `refused ${i.local_part} with password ${i.password}`);
        }).factory,
      });
      const p = await pending();
      let err: unknown;
      try {
        await mailboxCreate.process(job({ request_id: p.requestId, secret_id: p.secretId }).j, 'token');
      } catch (e) {
        err = e;
      }
      expect(err, kind).to.be.instanceOf(UnrecoverableError);
      expect((err as Error).cause).to.be.instanceOf(PanelError);
      expect((err as Error).message).not.to.include(NEW_PW);
      const row = await request(p.requestId);
      expect(row).to.include({ status: 'failed', error_code: kind });
      expect(row.error).to.include('[redacted]').and.not.include(NEW_PW);
      expect(await secretLeft(p.secretId)).to.equal(false);
    }
  });

  it('"exists" on a later attempt (an earlier attempt created it before failing) counts as created', async () => {
    mailboxCreate.configureMailboxCreate({
      panelFactory: fakePanel(() => {
        throw new PanelError('exists', 'already exists');
      }).factory,
    });
    const p = await pending();
    const r = await mailboxCreate.process(
      job({ request_id: p.requestId, secret_id: p.secretId }, { attemptsMade: 1 }).j,
      'token',
    );
    expect(r.status).to.equal('created');
    expect((await request(p.requestId)).status).to.equal('created');
    expect(await secretLeft(p.secretId)).to.equal(false);
  });

  it('"exists" on a rerun after an earlier run called the panel (stalled job: attemptsMade still 0) counts as created', async () => {
    // the first run calls the panel, which creates the mailbox; the run dies before it hears back
    // (kill -9): BullMQ reruns the stalled job with attemptsMade unchanged
    const p = await pending();
    const created = new Set<string>();
    const dies = new Error('worker killed');
    mailboxCreate.configureMailboxCreate({
      panelFactory: fakePanel((input) => {
        const address = `${input.local_part}@${input.domain}`;
        if (created.has(address)) throw new PanelError('exists', 'already exists');
        created.add(address);
        throw dies;
      }).factory,
    });
    const data = { request_id: p.requestId, secret_id: p.secretId };
    let err: unknown;
    try {
      await mailboxCreate.process(job(data).j, 'token');
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).to.include('worker killed');
    expect((await request(p.requestId)).panel_called_at).to.be.instanceOf(Date);
    const r = await mailboxCreate.process(job(data, { attemptsMade: 0, attemptsStarted: 2 }).j, 'token');
    expect(r.status).to.equal('created');
    expect(await request(p.requestId)).to.include({ status: 'created', error_code: null });
    expect(await env.knex('mail_mailboxes').where({ email: p.email }).select('id')).to.have.length(1);
    expect(await secretLeft(p.secretId)).to.equal(false);
  });

  it('stopped by the worker shutdown on its last attempt: nothing recorded, the request stays pending with its sealed row', async () => {
    const ctl = new AbortController();
    mailboxCreate.configureMailboxCreate({
      panelFactory: fakePanel(async () => {
        ctl.abort(SHUTDOWN_ABORT_REASON);
        throw new PanelError('transient', 'request aborted');
      }).factory,
    });
    const p = await pending();
    const { j, logs: jobLogs } = job({ request_id: p.requestId, secret_id: p.secretId }, { attemptsMade: 4 });
    let err: unknown;
    try {
      await mailboxCreate.process(j, 'token', ctl.signal);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(PanelError);
    expect(await request(p.requestId)).to.include({ status: 'pending', error_code: null });
    expect(await secretLeft(p.secretId)).to.equal(true);
    expect(jobLogs.join('\n')).to.include('stopped by the worker shutdown');
  });

  it("rate_limited moves the job to delayed for the panel's Retry-After (DelayedError), keeping the sealed row", async () => {
    mailboxCreate.configureMailboxCreate({
      panelFactory: fakePanel(() => {
        throw new PanelError('rate_limited', 'HTTP 429', { retryAfterMs: 45_000 });
      }).factory,
    });
    const p = await pending();
    const { j, delayed } = job({ request_id: p.requestId, secret_id: p.secretId });
    const before = Date.now();
    let err: unknown;
    try {
      await mailboxCreate.process(j, 'token');
    } catch (e) {
      err = e;
    }
    const after = Date.now();
    expect(err).to.be.instanceOf(DelayedError);
    expect(delayed).to.have.length(1);
    // exactly Retry-After from the moment of the call, however long the call took
    expect(delayed[0]).to.be.within(before + 45_000, after + 45_000);
    expect((await request(p.requestId)).status).to.equal('pending');
    expect(await secretLeft(p.secretId)).to.equal(true);
    const { j: last } = job(
      { request_id: p.requestId, secret_id: p.secretId },
      { attemptsMade: 4, attempts: 5, attemptsStarted: 99 },
    );
    err = undefined;
    try {
      await mailboxCreate.process(last, 'token');
    } catch (e) {
      err = e;
    }
    expect(err).not.to.be.instanceOf(DelayedError);
    expect(await request(p.requestId)).to.include({ status: 'failed', error_code: 'rate_limited' });
    expect(await secretLeft(p.secretId)).to.equal(false);
  });

  it('job ids are fixed and parse back to the request id', () => {
    expect(mailboxCreate.jobId(42)).to.equal('mailbox-create-42');
    expect(mailboxCreate.requestIdOf('mailbox-create-42')).to.equal(42);
    expect(mailboxCreate.requestIdOf('mailbox-create-4x')).to.equal(null);
    expect(mailboxCreate.requestIdOf('42')).to.equal(null);
  });

  it('the new-mailbox password is nowhere afterwards: not in any table, any Redis key or any log line', async () => {
    const { db, redis } = await dumpStores();
    for (const f of secretForms(NEW_PW)) {
      expect(db).not.to.include(f);
      expect(redis).not.to.include(f);
      expect(logs.join('\n')).not.to.include(f);
    }
    expect(db).to.include('mail_mailbox_requests');
  });
});
