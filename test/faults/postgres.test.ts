import { expect } from 'chai';
import path from 'node:path';
import type { Knex } from 'knex';
import { startEmbeddedPostgres, type EmbeddedPg } from '../../lib/infra/postgres.js';
import { createKnex, migrateLatest } from '../../db/knex.js';
import { ensureCatalog } from '../../api/tenants/service.js';
import { env } from '../helpers/env.js';
import {
  eventually,
  makeFixtures,
  PASSWORD,
  postgresPids,
  signal,
  startServices,
  timed,
  type FaultFixtures,
  type Services,
  type Timed,
} from './services.js';

/**
 * Issue 7 item 3, on a PostgreSQL cluster of its own (the shared one stays untouched): every
 * process of the cluster frozen with SIGSTOP, then resumed; a backend killed with -9 (the server
 * restarts all backends and runs crash recovery, answering "in recovery mode" meanwhile); backends
 * terminated with pg_terminate_backend. Both services answer 503 DATABASE_UNAVAILABLE (Mailbox API:
 * service_unavailable) with Retry-After within 5 s, never 500, and recover by themselves. The bound
 * asserted is the 5 s itself; the design needs about 3.5 s (DB_QUERY_TIMEOUT_MS 3000 + 500).
 */
describe('faults: PostgreSQL frozen (SIGSTOP), crashed or terminated: 503 within 5 s, then recovery', function () {
  this.timeout(90_000);
  const BOUND_MS = 5000;
  let pg: EmbeddedPg;
  let knex: Knex;
  let svc: Services;
  let fx: FaultFixtures;
  let frozen: number[] = [];

  before(async function () {
    this.timeout(90_000);
    pg = await startEmbeddedPostgres(path.join(env.dir, 'faults-postgres'), 'isp_faults', { temporary: true });
    knex = createKnex(pg.url, { min: 0, max: 2 });
    await migrateLatest(knex);
    await ensureCatalog(knex);
    fx = await makeFixtures(knex);
    // limits raised: the crash test sends requests in a loop
    svc = await startServices({
      DATABASE_URL: pg.url,
      REDIS_URL: env.redisUrl,
      EXTERNAL_RATE_LIMIT: '100000',
      MAIL_RATE_LIMIT: '100000',
    });
  });

  after(async function () {
    this.timeout(30_000);
    signal(frozen, 'SIGCONT');
    await svc?.close();
    await knex?.destroy();
    await pg?.stop();
  });

  const webGet = () =>
    timed(`${svc.web}/api/external/v1/health`, { headers: { authorization: `Bearer ${fx.integrationToken}` } });
  const webMe = () => timed(`${svc.web}/api/auth/me`, { headers: { authorization: `Bearer ${fx.loginToken}` } });
  const webLogin = () =>
    timed(`${svc.web}/api/auth/login`, { method: 'POST', json: { email: fx.adminEmail, password: PASSWORD } });
  const mailGet = () => timed(`${svc.mail}/api/v1/mailboxes`, { headers: { authorization: `Bearer ${fx.mailKey}` } });
  const boardApi = () => timed(`${svc.web}/admin/queues/api/queues`, { headers: { cookie: fx.boardCookie } });
  const dashboard = () => timed(`${svc.mail}/login`, { headers: { accept: 'text/html' } });

  /** FAULTS_TIMES=1 prints each answer's status and time (the figures of docs/decisions.md). */
  const show = (what: string, r: Timed) => {
    if (process.env.FAULTS_TIMES) console.log(`    ${what}: ${r.status} in ${r.ms} ms`);
  };

  function webUnavailable(res: Timed, what: string): void {
    show(what, res);
    expect(res.ms, `${what} took ${res.ms} ms`).to.be.below(BOUND_MS);
    expect(res.status, what).to.equal(503);
    expect(res.body, what).to.deep.equal({
      message: 'The database is unavailable. Retry later.',
      code: 'DATABASE_UNAVAILABLE',
    });
    expect(Number(res.headers.get('retry-after')), what).to.be.greaterThan(0);
    expect(res.headers.get('x-request-id'), what).to.be.a('string');
  }

  it('serves every request normally while PostgreSQL is up', async () => {
    for (const [what, call] of Object.entries({ webGet, webMe, webLogin, mailGet, boardApi })) {
      expect((await call()).status, what).to.equal(200);
    }
  });

  it('SIGSTOP of every PostgreSQL process: 503 DATABASE_UNAVAILABLE / service_unavailable with Retry-After within 5 s, also for a burst beyond the pool', async () => {
    frozen = await postgresPids(pg.clusterDir);
    signal(frozen, 'SIGSTOP');
    try {
      const [get, me, login, mail, board] = await Promise.all([webGet(), webMe(), webLogin(), mailGet(), boardApi()]);
      webUnavailable(get, 'web GET (integration token)');
      webUnavailable(me, 'web GET (login token)');
      webUnavailable(login, 'web login');
      webUnavailable(board, 'bull-board API');
      show('mail GET', mail);
      expect(mail.ms, `mail GET took ${mail.ms} ms`).to.be.below(BOUND_MS);
      expect(mail.status).to.equal(503);
      expect(mail.body).to.deep.equal({
        ok: false,
        error: 'service_unavailable',
        message: 'The service is temporarily unavailable (database). Retry later.',
      });
      expect(Number(mail.headers.get('retry-after'))).to.be.greaterThan(0);

      // 14 at once: more than the pool's 10 connections, so some wait for a connection (acquire bound)
      const burst = await Promise.all(Array.from({ length: 14 }, () => webGet()));
      burst.forEach((r, i) => webUnavailable(r, `burst request ${i + 1}`));

      const page = await dashboard();
      expect(page.ms).to.be.below(BOUND_MS);
      expect(page.status, 'the dashboard sign-in page needs no database').to.equal(200);
    } finally {
      signal(frozen, 'SIGCONT');
      frozen = [];
    }
  });

  it('after SIGCONT both services answer 200 again by themselves (the pool dropped the dead connections)', async () => {
    const started = Date.now();
    expect(await eventually(async () => (await webGet()).status === 200, 10_000)).to.equal(true);
    expect(Date.now() - started, 'recovered within 10 s').to.be.below(10_000);
    expect((await mailGet()).status).to.equal(200);
    expect((await webMe()).status).to.equal(200);
    expect((await webLogin()).status).to.equal(200);
    expect((await boardApi()).status).to.equal(200);
  });

  it('pg_terminate_backend of the services\u2019 connections: 200 or 503, never 500, then 200', async () => {
    const killed = await knex.raw(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    );
    expect(killed.rows.length, 'the services held connections').to.be.greaterThan(0);
    const answers: Timed[] = [];
    for (let i = 0; i < 4; i++) answers.push(await webGet(), await mailGet(), await webMe());
    for (const a of answers) {
      expect([200, 503], a.text).to.include(a.status);
      expect(a.ms).to.be.below(BOUND_MS);
    }
    expect(answers.slice(-3).map((a) => a.status)).to.deep.equal([200, 200, 200]);
  });

  it('a backend killed with -9 (crash recovery, "in recovery mode"): 200 or 503, never 500, then 200', async () => {
    const { rows } = await knex.raw(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
       AND backend_type = 'client backend' LIMIT 1`,
    );
    const victim = rows[0]?.pid ?? (await knex.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    signal([Number(victim)], 'SIGKILL');
    const statuses: number[] = [];
    const until = Date.now() + 3000;
    // until 3 s passed, or the services answered 200 three times in a row after the crash
    while (Date.now() < until && statuses.slice(-6).filter((s) => s === 200).length < 6) {
      const [a, b] = await Promise.all([webGet(), mailGet()]);
      for (const r of [a, b]) {
        expect(r.ms).to.be.below(BOUND_MS);
        expect([200, 503], `${r.status} ${r.text}`).to.include(r.status);
        if (r.status === 503) expect(r.headers.get('retry-after')).to.be.a('string');
        statuses.push(r.status);
      }
    }
    if (process.env.FAULTS_TIMES) console.log(`    statuses after kill -9: ${statuses.join(' ')}`);
    expect(await eventually(async () => (await webGet()).status === 200, 10_000)).to.equal(true);
    expect((await mailGet()).status).to.equal(200);
    expect(statuses.length).to.be.greaterThan(2);
  });
});
