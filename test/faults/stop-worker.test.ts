import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { seal } from '../../lib/crypto.js';
import { createQueues, type Queues } from '../../jobs/queues.js';
import * as mailboxCreate from '../../jobs/mailbox-create.js';
import { env } from '../helpers/env.js';
import { makeDomain, TEST_APP_KEY, uniq, type DomainFixture } from '../api/mail/support.js';
import { jsonLines, killAll, startProcfile, waitFor, type Proc } from './support.js';

/**
 * Issue 7 items 1 and 4 on the real `worker` process (Procfile entry, own process group), running
 * the `mailbox-create` queue against a fake cPanel (UAPI over HTTP, in this test process). The panel
 * creates the mailbox as soon as it receives Email/add_pop and answers only when the test says so:
 * a job is "in flight" while the panel holds its answer. Whatever happens to the worker (SIGTERM
 * before or after the grace period, SIGKILL), the job completes, the mailbox exists once on the
 * panel and once in mail_mailboxes, and the request ends `created`.
 */

/** A cPanel UAPI stand-in: creates on receipt, answers when released; "already exists" for a repeat. */
class FakeCpanel {
  readonly server: http.Server;
  /** Addresses created, in order (a repeat is not added). */
  readonly created: string[] = [];
  /** Every Email/add_pop received, in order. */
  readonly calls: string[] = [];
  private held: (() => void)[] = [];
  /** When true, a new mailbox's answer waits for release(). */
  hold = true;

  constructor() {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const address = `${form.get('email')}@${form.get('domain')}`.toLowerCase();
        this.calls.push(address);
        const answer = (json: object) => {
          if (res.destroyed) return;
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(json));
        };
        if (this.created.includes(address)) {
          answer({ status: 0, errors: [`The account ${address} already exists!`], data: null });
          return;
        }
        this.created.push(address);
        const ok = () => answer({ status: 1, errors: null, data: null, messages: null });
        if (this.hold) this.held.push(ok);
        else ok();
      });
    });
  }

  /** Starts listening on a loopback port. @returns the port */
  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as AddressInfo).port;
  }

  /** Sends the answers held so far. */
  release(): void {
    for (const ok of this.held.splice(0)) ok();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

describe('stopping and killing the worker process with a job in flight (real processes)', function () {
  this.timeout(240_000);
  // a Redis database of its own: these workers use the default queue prefix (set in before())
  let redisUrl = '';
  const procs: Proc[] = [];
  const panel = new FakeCpanel();
  let domain: DomainFixture;
  let queues: Queues;

  const worker = (vars: Record<string, string> = {}) => {
    const p = startProcfile('worker', {
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: redisUrl,
      APP_KEY: TEST_APP_KEY.toString('hex'),
      WORKER_QUEUES: 'mailbox-create',
      SHUTDOWN_GRACE_MS: '30000',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
      ...vars,
    });
    procs.push(p);
    return p;
  };

  before(async () => {
    redisUrl = `${env.redisUrl}/9`;
    const r = new Redis(redisUrl);
    await r.flushdb();
    r.disconnect();
    const port = await panel.listen();
    domain = await makeDomain({
      panel: { type: 'cpanel', host: '127.0.0.1', port, user: 'cpuser', password: 'panel-api-token', ssl: false },
    });
    queues = createQueues(redisUrl);
  });
  afterEach(async () => {
    panel.release();
    await killAll(procs.splice(0));
  });
  after(async () => {
    await queues?.close();
    await panel.close();
  });

  /** A pending request with its sealed initial password (as the Mailbox API writes them), enqueued. */
  async function enqueueRequest() {
    const local = `stop-${uniq()}`;
    const [req] = await env
      .knex('mail_mailbox_requests')
      .insert({ domain_id: domain.id, local_part: local, real_name: 'Stop Test', status: 'pending' })
      .returning('id');
    const secretId = randomUUID();
    await env.knex('mail_sealed_secrets').insert({
      id: secretId,
      purpose: mailboxCreate.SECRET_PURPOSE,
      ciphertext: seal(TEST_APP_KEY, 'initial-Passw0rd-x', mailboxCreate.secretAad(secretId)),
      expires_at: new Date(Date.now() + 15 * 60_000),
    });
    const requestId = Number(req.id);
    const job = await mailboxCreate.enqueue(queues, { request_id: requestId, secret_id: secretId });
    return { requestId, secretId, email: `${local}@${domain.name}`.toLowerCase(), jobId: job.id! };
  }

  const panelReceived = (email: string) =>
    waitFor(`the panel to receive add_pop for ${email}`, async () => panel.calls.includes(email), 60_000, 50);

  /** The end state every scenario must reach: done once, nothing left behind. */
  async function expectCreatedOnce(r: Awaited<ReturnType<typeof enqueueRequest>>) {
    const job = await waitFor(
      'the job to complete',
      async () => {
        const j = await queues.get('mailbox-create').getJob(r.jobId);
        const state = j ? await j.getState() : null;
        if (state === 'failed') throw new Error(`the job failed: ${j!.failedReason}`);
        // read the job again once completed: the first read may predate the completion (attemptsMade 0)
        return state === 'completed' ? queues.get('mailbox-create').getJob(r.jobId) : null;
      },
      90_000,
      100,
    );
    // BullMQ counts the finished attempt: 1 means no attempt failed because of the stop or the kill
    expect(job.attemptsMade, 'one attempt, none failed').to.equal(1);
    expect(job.failedReason ?? null).to.equal(null);
    const req = await env.knex('mail_mailbox_requests').where({ id: r.requestId }).first('status', 'mailbox_id');
    expect(req.status).to.equal('created');
    const boxes = await env.knex('mail_mailboxes').where({ email: r.email }).select('id');
    expect(boxes).to.deep.equal([{ id: req.mailbox_id }]);
    expect(panel.created.filter((a) => a === r.email)).to.have.length(1);
    expect(await env.knex('mail_sealed_secrets').where({ id: r.secretId }).first()).to.equal(undefined);
    return job;
  }

  it('SIGTERM while a job runs: the worker waits for it, the job completes, exit code 0', async () => {
    panel.hold = true;
    const w = worker();
    await w.waitForLine(/workers started/, 'the worker to start');
    const r = await enqueueRequest();
    await panelReceived(r.email);

    w.signal('SIGTERM');
    await w.waitForLine(/"msg":"shutting down"/, 'the worker to start stopping', 30_000);
    w.signal('SIGTERM'); // a relayed repeat is absorbed
    await w.waitForLine(/SIGTERM again: already stopping/, 'the repeated signal', 30_000);
    await new Promise((res) => setTimeout(res, 500));
    expect(w.running(), 'the worker waits for its running job').to.equal(true);
    panel.release();

    const exit = await w.exited;
    expect(exit, w.output().slice(-3000)).to.deep.equal({ name: 'worker', code: 0, signal: null });
    const job = await expectCreatedOnce(r);
    expect(panel.calls.filter((a) => a === r.email)).to.have.length(1);
    expect(job.attemptsStarted).to.equal(1);
    const done = jsonLines(w.output()).find((l) => l.msg === 'job completed' && l.job_id === r.jobId);
    expect(done, 'completed by the stopping worker').to.not.equal(undefined);
  });

  it('SIGTERM while a job outlasts the grace period: the job goes back to its queue, exit 0, then runs again once', async () => {
    panel.hold = true;
    const w1 = worker({ SHUTDOWN_GRACE_MS: '3000' });
    await w1.waitForLine(/workers started/, 'the first worker to start');
    const r = await enqueueRequest();
    await panelReceived(r.email);

    const t0 = Date.now();
    w1.signal('SIGTERM');
    const exit = await w1.exited;
    const took = Date.now() - t0;
    expect(exit, w1.output().slice(-3000)).to.deep.equal({ name: 'worker', code: 0, signal: null });
    // the grace period is 3 s; the default (30 s in this file) would be far above this bound
    expect(took, 'stopped about the end of the grace period').to.be.below(20_000);
    const lines = jsonLines(w1.output());
    expect(lines.some((l) => l.msg === 'job stopped by the shutdown and moved back to its queue')).to.equal(true);
    const back = await queues.get('mailbox-create').getJob(r.jobId);
    expect(await back!.getState()).to.equal('waiting');
    expect(back!.attemptsMade).to.equal(0);
    expect((await env.knex('mail_mailbox_requests').where({ id: r.requestId }).first('status')).status).to.equal(
      'pending',
    );

    // a new worker (the next deploy) runs it again: the panel already has the mailbox, which the
    // job recognises as its own earlier call (panel_called_at), so it completes the request
    panel.hold = false;
    const w2 = worker();
    await expectCreatedOnce(r);
    expect(panel.calls.filter((a) => a === r.email)).to.have.length(2);
    const { logs } = await queues.get('mailbox-create').getJobLogs(r.jobId);
    expect(logs.some((l) => l.includes('worker shutdown: stopped'))).to.equal(true);
    expect(logs.some((l) => l.includes('already exists after an earlier run called the panel'))).to.equal(true);
    w2.signal('SIGTERM');
    expect((await w2.exited).code).to.equal(0);
  });

  it('kill -9 of the worker mid-job: another worker picks the stalled job up, logs it, and creates the mailbox once', async () => {
    panel.hold = true;
    const w1 = worker();
    await w1.waitForLine(/workers started/, 'the first worker to start');
    const r = await enqueueRequest();
    await panelReceived(r.email);

    w1.signal('SIGKILL');
    expect((await w1.exited).signal).to.equal('SIGKILL');
    expect((await env.knex('mail_mailbox_requests').where({ id: r.requestId }).first('status')).status).to.equal(
      'pending',
    );

    panel.hold = false;
    const w2 = worker();
    const job = await expectCreatedOnce(r);
    expect(job.stalledCounter, 'counted as stalled once').to.equal(1);
    const stalled = await w2.waitForLine(/.*"msg":"job stalled.*/, 'the stalled line', 30_000);
    expect(JSON.parse(stalled[0].slice(stalled[0].indexOf('{')))).to.include({
      queue: 'mailbox-create',
      job_id: r.jobId,
    });
    const { logs } = await queues.get('mailbox-create').getJobLogs(r.jobId);
    expect(logs.some((l) => l.includes('stalled: the worker running this job stopped'))).to.equal(true);
    w2.signal('SIGTERM');
    expect((await w2.exited).code).to.equal(0);
  });
});
