import { expect } from 'chai';
import type { Knex } from 'knex';
import { env } from '../helpers/env.js';
import { makeIntegrationToken, makeTenant } from '../helpers/fixtures.js';
import { freePort } from '../../lib/infra/free-port.js';
import { appKey, jsonLines, killAll, since, startProcfile, waitFor, type Proc } from './support.js';

/**
 * Issue 7 item 1 on the real `web` process (Procfile entry, own process group): SIGTERM of the
 * group while a write is in flight. The request is made slow by a real lock: the test holds
 * `LOCK TABLE customers IN SHARE MODE`, so the request's INSERT waits in PostgreSQL until the test
 * lets go, after the signal. The request must complete 2xx with its row committed, the process must
 * stop listening at once, absorb the repeated signal, and exit 0 once the request is answered.
 */
describe('stopping the web process with a request in flight (real process, SIGTERM of its group)', function () {
  this.timeout(180_000);
  const procs: Proc[] = [];
  let release: () => void = () => undefined;
  after(async () => {
    release();
    await killAll(procs);
  });

  it('answers the in-flight request 201 with the row committed, refuses new connections, exits 0', async () => {
    const port = await freePort();
    const web = startProcfile('web', {
      DATABASE_URL: env.databaseUrl,
      REDIS_URL: env.redisUrl,
      APP_KEY: appKey(),
      PORT: String(port),
      SHUTDOWN_GRACE_MS: '30000',
    });
    procs.push(web);
    await web.waitForLine(/web listening/, 'web to listen');

    const f = await makeTenant();
    const { token } = await makeIntegrationToken(f, 'read_write');
    const name = `Stop test ${Date.now()}`;

    // hold a lock the request's INSERT must wait for
    const released = new Promise<void>((r) => {
      release = r;
    });
    let locked!: () => void;
    const lockTaken = new Promise<void>((r) => {
      locked = r;
    });
    const holder = env.knex.transaction(async (trx: Knex.Transaction) => {
      await trx.raw('LOCK TABLE customers IN SHARE MODE');
      locked();
      await released;
    });
    await lockTaken;

    const t0 = Date.now();
    const response = fetch(`http://127.0.0.1:${port}/api/external/v1/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, phone: '+6281200000001', address: 'Jl. Berhenti 7' }),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as { data?: { id: number } } }));
    response.catch(() => undefined);

    // the request is in flight: its INSERT waits for our lock
    await waitFor('the INSERT to wait for the lock', async () => {
      const { rows } = await env.knex.raw(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE wait_event_type = 'Lock' AND query ILIKE 'insert into "customers"%'`,
      );
      return rows[0].n > 0;
    });

    // SIGTERM to the group, then again (what tsx and npm relays do): the second one is absorbed
    web.signal('SIGTERM');
    await web.waitForLine(/SIGTERM: stopping/, 'the web process to start stopping', 30_000);
    web.signal('SIGTERM');
    await web.waitForLine(/SIGTERM again: already stopping, signal absorbed/, 'the repeated signal', 30_000);

    // stopped listening: a new connection is refused, while the old request still waits
    const fresh = await fetch(`http://127.0.0.1:${port}/openapi.json`).then(
      (r) => `answered ${r.status}`,
      (e: Error & { cause?: { code?: string } }) => e.cause?.code ?? e.message,
    );
    expect(fresh).to.equal('ECONNREFUSED');
    expect(web.running(), 'still running while the request waits').to.equal(true);

    release();
    await holder;
    const res = await response;
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const id = res.body.data!.id;
    const row = await env.knex('customers').where({ id, tenant_id: f.tenant.id }).first('name');
    expect(row).to.deep.equal({ name });

    const exit = await web.exited;
    expect(exit, web.output().slice(-3000)).to.deep.equal({ name: 'web', code: 0, signal: null });
    expect(since(t0)).to.be.below(60_000);
    const lines = jsonLines(web.output());
    const logged = lines.find((l) => l.msg === 'request' && l.method === 'POST');
    expect(logged, 'the request was logged as answered').to.include({ status: 201 });
    expect(lines.some((l) => l.msg === 'web stopped')).to.equal(true);
    expect(lines.some((l) => l.msg === 'requests cut after the grace period')).to.equal(false);
  });
});
