import { expect } from 'chai';
import { startTestApp, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { tenantKnex } from '../../helpers/tenant-db-mode.js';
import { countRows, makeWorld, V1, waitFor, type World } from './world.js';

/** knex's pool (tarn) as far as poolIdle needs it. */
interface PoolCounts {
  numUsed(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

/**
 * Resolves once the test knex pool has no connection in use and none being acquired, i.e. every
 * query issued so far (a fire-and-forget write included) has finished. No fixed sleep.
 * @throws Error when the pool is still busy after `ms` (10 s)
 */
async function poolIdle(ms = 10_000): Promise<void> {
  const pool = (env.knex.client as { pool: PoolCounts }).pool;
  const idle = () => pool.numUsed() === 0 && pool.numPendingAcquires() === 0 && pool.numPendingCreates() === 0;
  for (const end = Date.now() + ms; !idle();) {
    if (Date.now() > end) throw new Error('the knex pool is still busy');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('external v1: token lifecycle and per-token rate limit (DESIGN.md §5, §6)', () => {
  let app: TestApp;
  let a: World;

  before(async () => {
    app = await startTestApp();
    a = await makeWorld();
  });

  it('keeps the plain token out of the database, Redis, the logs and every later response', async () => {
    const created = await app.request('POST', '/api/integrations/api-tokens', {
      token: a.adminToken,
      body: { name: 'Secret keeper', access: 'read_write' },
    });
    expect(created.status).to.equal(201);
    const plain: string = created.body.token;
    const secret = plain.split('_')[2];
    expect(secret).to.have.length(72);
    const later: string[] = [];
    for (const [m, p, body] of [
      ['GET', `${V1}/health`],
      ['GET', `${V1}/me`],
      ['GET', `${V1}/customers`],
      ['GET', `${V1}/customers/${a.ids.customerId}`],
      ['POST', `${V1}/tickets`, { type: 'leak check' }],
      ['POST', `${V1}/customers`, { name: 'x', phone: '1', address: 'a', service_type: 'dhcp' }],
      ['GET', `${V1}/tickets/999999999`],
    ] as [string, string, unknown?][]) {
      const res = await app.request(m, p, { token: plain, body });
      expect(res.status, p).to.be.oneOf([200, 201, 404, 422]);
      later.push(res.text, JSON.stringify([...res.headers]));
    }
    later.push((await app.request('GET', '/api/integrations/api-tokens', { token: a.adminToken })).text);
    for (const text of later) {
      expect(text).not.to.include(plain);
      expect(text).not.to.include(secret);
    }

    // the shared database and (TEST_TENANT_DB=1) the tenant's own database
    for (const db of new Set([env.knex, tenantKnex(a.tenant.id)])) {
      const tables: string[] = await db('information_schema.tables')
        .where({ table_schema: 'public', table_type: 'BASE TABLE' })
        .pluck('table_name');
      expect(tables).to.include.members(['auth_tokens', 'customers', 'idempotency_keys']);
      for (const t of tables) {
        const dump = JSON.stringify(await db(t).select('*'));
        expect(dump, t).not.to.include(plain);
        expect(dump, t).not.to.include(secret);
      }
    }
    const keys = (await env.redis.keys('*')).join('\n');
    expect(keys).not.to.include(secret);
    await waitFor(async () => app.logs.length > 0);
    const logs = app.logs.join('');
    expect(logs).to.include(`${V1}/health`);
    expect(logs).not.to.include(plain);
    expect(logs).not.to.include(secret);
  });

  it('refuses a token whose expires_at has passed with 401, and accepts it again when moved to the future', async () => {
    const t = await makeIntegrationToken(a, 'read', new Date(Date.now() + 3600_000).toISOString());
    expect((await app.request('GET', `${V1}/health`, { token: t.token })).status).to.equal(200);
    await env
      .knex('auth_tokens')
      .where({ id: t.data.id })
      .update({ expires_at: new Date(Date.now() - 3600_000) });
    const res = await app.request('GET', `${V1}/customers`, { token: t.token });
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal({ message: 'Unauthenticated.', code: 'UNAUTHENTICATED' });
    await env
      .knex('auth_tokens')
      .where({ id: t.data.id })
      .update({ expires_at: new Date(Date.now() + 3600_000) });
    expect((await app.request('GET', `${V1}/customers`, { token: t.token })).status).to.equal(200);
  });

  it('sets last_used_at on use and does not rewrite it within a minute', async () => {
    const t = await makeIntegrationToken(a);
    const lastUsed = async () =>
      (await env.knex('auth_tokens').where({ id: t.data.id }).first()).last_used_at as Date | null;
    expect(await lastUsed()).to.equal(null);
    const before = Date.now();
    await app.request('GET', `${V1}/health`, { token: t.token });
    const first = await waitFor(lastUsed);
    expect(first).to.be.instanceOf(Date);
    expect(first!.getTime()).to.be.at.least(before - 5000);
    const recent = new Date(Date.now() - 30_000);
    await env.knex('auth_tokens').where({ id: t.data.id }).update({ last_used_at: recent });
    for (let i = 0; i < 3; i++) await app.request('GET', `${V1}/me`, { token: t.token });
    // a rewrite, if any, is issued while a request runs: once the pool is idle it has landed
    await poolIdle();
    expect((await lastUsed())!.getTime()).to.equal(recent.getTime());
    const old = new Date(Date.now() - 120_000);
    await env.knex('auth_tokens').where({ id: t.data.id }).update({ last_used_at: old });
    await app.request('GET', `${V1}/me`, { token: t.token });
    const rewritten = await waitFor(async () => ((await lastUsed())!.getTime() !== old.getTime() ? lastUsed() : null));
    expect(rewritten!.getTime()).to.be.above(old.getTime() + 60_000);
  });

  describe('rate limit (startTestApp with 3 requests a minute)', () => {
    let limited: TestApp;
    before(async () => {
      limited = await startTestApp({ rateLimit: { points: 3, durationSeconds: 60 } });
    });

    it('answers 429 RATE_LIMITED with Retry-After and X-RateLimit-* on the 4th request of one token; another token still passes', async () => {
      const one = await makeIntegrationToken(a);
      const two = await makeIntegrationToken(a);
      for (let i = 0; i < 3; i++) {
        const ok = await limited.request('GET', `${V1}/customers`, { token: one.token });
        expect(ok.status).to.equal(200);
        expect(ok.headers.get('x-ratelimit-limit')).to.equal('3');
        expect(ok.headers.get('x-ratelimit-remaining')).to.equal(String(2 - i));
      }
      const res = await limited.request('GET', `${V1}/health`, { token: one.token });
      expect(res.status).to.equal(429);
      expect(res.body).to.include({ code: 'RATE_LIMITED' });
      expect(res.body.message).to.be.a('string');
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).to.be.within(1, 60);
      expect(res.headers.get('x-ratelimit-limit')).to.equal('3');
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('0');
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(reset).to.be.within(Math.floor(Date.now() / 1000), Math.ceil(Date.now() / 1000) + 61);
      const other = await limited.request('GET', `${V1}/health`, { token: two.token });
      expect(other.status).to.equal(200);
      expect(other.headers.get('x-ratelimit-remaining')).to.equal('2');
    });

    it('limits writes too: the 4th request, a POST, is refused and creates nothing', async () => {
      const t = await makeIntegrationToken(a, 'read_write');
      for (let i = 0; i < 3; i++)
        expect((await limited.request('GET', `${V1}/me`, { token: t.token })).status).to.equal(200);
      const before = await countRows('tickets', a.tenant.id);
      const res = await limited.request('POST', `${V1}/tickets`, { token: t.token, body: { type: 'x' } });
      expect(res.status).to.equal(429);
      expect(await countRows('tickets', a.tenant.id)).to.equal(before);
    });

    it('counts per token, not per tenant or per address: tokens of other tenants are unaffected', async () => {
      const b: World = await makeWorld();
      const t = await makeIntegrationToken(a);
      for (let i = 0; i < 4; i++) await limited.request('GET', `${V1}/health`, { token: t.token });
      expect((await limited.request('GET', `${V1}/health`, { token: t.token })).status).to.equal(429);
      expect((await limited.request('GET', `${V1}/health`, { token: b.read })).status).to.equal(200);
    });
  });
});
