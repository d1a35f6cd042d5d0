import { expect } from 'chai';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startRedis, type LocalRedis } from '../../lib/infra/redis.js';
import { env } from '../helpers/env.js';
import { Client, csrfOf } from '../api/mail/dashboard-client.js';
import {
  eventually,
  makeFixtures,
  PASSWORD,
  redisPid,
  signal,
  startServices,
  timed,
  type FaultFixtures,
  type Services,
  type Timed,
} from './services.js';

/**
 * Issue 7 item 2, on a real redis-server of its own (the shared one stays untouched): frozen with
 * SIGSTOP, then killed with SIGKILL, every request of both services answers within 2 s with the
 * right status and body; the login throttles keep counting in memory; an enqueue is 503
 * queue_unavailable and bull-board's API 503 QUEUE_UNAVAILABLE, both with Retry-After.
 * The bound asserted is the 2 s itself: the design needs about 1 s at most (a 500 ms command
 * timeout, then memory; a 1 s enqueue bound), which leaves the rest as slack for a loaded machine.
 */
describe('faults: Redis frozen (SIGSTOP) or killed (SIGKILL): both services answer within 2 s', function () {
  this.timeout(60_000);
  const BOUND_MS = 2000;
  let dir: string;
  let redis: LocalRedis;
  let pid: number;
  let svc: Services;
  let fx: FaultFixtures;

  before(async function () {
    this.timeout(60_000);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-faults-redis-'));
    redis = await startRedis(dir);
    pid = await redisPid(redis.port);
    fx = await makeFixtures(env.knex);
    // LOGIN_IP_LIMIT high: this file counts failures per e-mail; spraying is test/faults/abuse.test.ts
    svc = await startServices({ DATABASE_URL: env.databaseUrl, REDIS_URL: redis.url, LOGIN_IP_LIMIT: '1000' });
  });

  after(async function () {
    this.timeout(20_000);
    signal([pid], 'SIGCONT');
    await svc?.close();
    await redis?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const webGet = () =>
    timed(`${svc.web}/api/external/v1/health`, { headers: { authorization: `Bearer ${fx.integrationToken}` } });
  const webMe = () => timed(`${svc.web}/api/auth/me`, { headers: { authorization: `Bearer ${fx.loginToken}` } });
  const webLogin = (email: string, password: string) =>
    timed(`${svc.web}/api/auth/login`, { method: 'POST', json: { email, password } });
  const mailGet = () => timed(`${svc.mail}/api/v1/mailboxes`, { headers: { authorization: `Bearer ${fx.mailKey}` } });
  const mailCreate = (local: string) =>
    timed(`${svc.mail}/api/v1/domains/${fx.domain}/mailboxes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fx.mailKey}` },
      json: { local_part: local, password: 'Very-long-password-1' },
    });
  const boardApi = () => timed(`${svc.web}/admin/queues/api/queues`, { headers: { cookie: fx.boardCookie } });

  /** Signs in through a form (GET for the CSRF token, then the timed POST). */
  async function formLogin(base: string, page: string, email: string, password: string): Promise<Timed> {
    const c = new Client(base);
    const form = await c.get(page);
    const started = performance.now();
    const res = await c.post(page, { _csrf: csrfOf(form.text), email, password });
    return { status: res.status, body: null, text: res.text, headers: res.headers, ms: performance.now() - started };
  }

  function within(res: Timed, what: string): void {
    if (process.env.FAULTS_TIMES) console.log(`    ${what}: ${res.status} in ${Math.round(res.ms)} ms`);
    expect(res.ms, `${what} took ${res.ms} ms`).to.be.below(BOUND_MS);
  }

  /** The checks of a Redis outage, the same for a frozen and a dead Redis. */
  async function outageChecks(tag: string): Promise<void> {
    const health = await webGet();
    within(health, 'web GET (integration token)');
    expect(health.status).to.equal(200);
    expect(health.headers.get('x-ratelimit-limit'), 'the rate limit still counts (in memory)').to.equal('600');

    const me = await webMe();
    within(me, 'web GET (login token)');
    expect(me.status).to.equal(200);

    const ok = await webLogin(fx.adminEmail, PASSWORD);
    within(ok, 'web login');
    expect(ok.status).to.equal(200);
    expect(ok.body.token).to.be.a('string');

    const mailboxes = await mailGet();
    within(mailboxes, 'mail GET');
    expect(mailboxes.status).to.equal(200);
    expect(mailboxes.body.data).to.be.an('array').with.length(1);

    const local = `q-${tag}`;
    const create = await mailCreate(local);
    within(create, 'mail enqueue');
    expect(create.status).to.equal(503);
    expect(create.body).to.deep.include({ ok: false, error: 'queue_unavailable' });
    expect(Number(create.headers.get('retry-after'))).to.be.greaterThan(0);
    const kept = await env.knex('mail_mailbox_requests').where({ local_part: local }).count({ n: '*' }).first();
    expect(Number(kept!.n), 'nothing kept of a refused create').to.equal(0);

    const board = await boardApi();
    within(board, 'bull-board API');
    expect(board.status).to.equal(503);
    expect(board.body).to.deep.equal({
      message: 'The job queue is unavailable. Retry later.',
      code: 'QUEUE_UNAVAILABLE',
    });
    expect(Number(board.headers.get('retry-after'))).to.be.greaterThan(0);

    const boardForm = await formLogin(svc.web, '/admin/login', fx.adminEmail, 'wrong-password');
    within(boardForm, 'bull-board sign-in');
    expect(boardForm.status, 'a tenant admin is no platform admin').to.equal(401);

    const dash = await formLogin(svc.mail, '/login', fx.operatorEmail, PASSWORD);
    within(dash, 'mail dashboard sign-in');
    expect(dash.status).to.equal(303);

    // the login throttle keeps counting in memory: 10 failures per IP + e-mail, then 429 with Retry-After
    const victim = `victim-${tag}@faults.test`;
    for (let i = 1; i <= 10; i++) {
      const r = await webLogin(victim, 'wrong');
      within(r, `failed login ${i}`);
      expect(r.status, `failed login ${i}`).to.equal(401);
    }
    const blocked = await webLogin(victim, 'wrong');
    within(blocked, 'throttled login');
    expect(blocked.status).to.equal(429);
    expect(blocked.body).to.include({ code: 'RATE_LIMITED' });
    expect(Number(blocked.headers.get('retry-after'))).to.be.within(1, 900);
  }

  it('serves every request normally while Redis is up', async () => {
    expect((await webGet()).status).to.equal(200);
    expect((await webLogin(fx.adminEmail, PASSWORD)).status).to.equal(200);
    expect((await mailGet()).status).to.equal(200);
    const board = await boardApi();
    expect(board.status).to.equal(200);
    expect(board.body.queues).to.be.an('array').with.length.above(0);
  });

  it('SIGSTOP: every request answers within 2 s (rate limits and throttles in memory, enqueue and bull-board 503)', async () => {
    signal([pid], 'SIGSTOP');
    try {
      await outageChecks('stop');
    } finally {
      signal([pid], 'SIGCONT');
    }
  });

  it('after SIGCONT the services use Redis again by themselves', async () => {
    expect(await eventually(async () => (await boardApi()).status === 200, 10_000)).to.equal(true);
    const health = await webGet();
    expect(health.status).to.equal(200);
    expect(Number(health.headers.get('x-ratelimit-remaining'))).to.be.below(600);
  });

  it('SIGKILL: every request answers within 2 s, the same way', async () => {
    signal([pid], 'SIGKILL');
    await eventually(async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 5000);
    await outageChecks('kill');
  });
});
