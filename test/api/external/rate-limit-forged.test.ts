import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createApp } from '../../../api/app.js';
import { createLogger } from '../../../lib/logger.js';
import { createQueues } from '../../../jobs/queues.js';
import { startTestApp, TEST_WEB_APP_KEY, type TestApp } from '../../helpers/http.js';
import { makeIntegrationToken, makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import { env } from '../../helpers/env.js';
import { mintToken } from '../../../lib/token.js';
import { rateLimitBucket } from '../../../api/middleware/rate-limit.js';
import { V1, waitFor } from './world.js';

/**
 * The rate limit is consumed while the token is looked up (api/middleware/auth.ts), keyed by a
 * hash of the presented token: a forged token that carries a real token's id (valid checksum,
 * wrong secret) gets 401, never 429, and never spends the real token's budget.
 */
describe('external v1: rate limit and forged tokens (3 requests a minute)', () => {
  let limited: TestApp;
  let a: TenantFixture;

  before(async () => {
    limited = await startTestApp({ rateLimit: { points: 3, durationSeconds: 60 } });
    a = await makeTenant();
  });

  it('a forged token with a real id gets 401 every time and leaves the real token its whole budget', async () => {
    const real = await makeIntegrationToken(a);
    const forged = mintToken('integration', real.data.id).token;
    expect(forged).not.to.equal(real.token);
    for (let i = 0; i < 5; i++) {
      const res = await limited.request('GET', `${V1}/customers`, { token: forged });
      expect(res.status, `forged request ${i + 1}`).to.equal(401);
      expect(res.body).to.include({ code: 'UNAUTHENTICATED' });
      expect(res.headers.get('x-ratelimit-remaining'), 'no rate headers on a 401').to.equal(null);
    }
    for (let i = 0; i < 3; i++) {
      const ok = await limited.request('GET', `${V1}/health`, { token: real.token });
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('x-ratelimit-remaining')).to.equal(String(2 - i));
    }
    expect((await limited.request('GET', `${V1}/health`, { token: real.token })).status).to.equal(429);
    // the real token's budget is spent: the forged one is still refused as unauthenticated, not limited
    expect((await limited.request('GET', `${V1}/health`, { token: forged })).status).to.equal(401);
  });

  it('deletes the bucket of a token that failed authentication, and keeps the one of a valid token', async () => {
    const real = await makeIntegrationToken(a);
    const forged = mintToken('integration', real.data.id).token;
    expect((await limited.request('GET', `${V1}/health`, { token: forged })).status).to.equal(401);
    expect(
      await waitFor(async () => ((await env.redis.exists(`rl:token:${rateLimitBucket(forged)}`)) === 0 ? true : null)),
    ).to.equal(true);
    expect((await limited.request('GET', `${V1}/health`, { token: real.token })).status).to.equal(200);
    expect(await env.redis.exists(`rl:token:${rateLimitBucket(real.token)}`)).to.equal(1);
    const ttl = await env.redis.pttl(`rl:token:${rateLimitBucket(real.token)}`);
    expect(ttl).to.be.within(1, 60_000);
  });

  it('a revoked token is 401 (not 429) and costs no bucket; a malformed token never reaches Redis', async () => {
    const t = await makeIntegrationToken(a);
    await env.knex('auth_tokens').where({ id: t.data.id }).update({ revoked_at: env.knex.fn.now() });
    for (let i = 0; i < 4; i++)
      expect((await limited.request('GET', `${V1}/health`, { token: t.token })).status).to.equal(401);
    expect(
      await waitFor(async () => ((await env.redis.exists(`rl:token:${rateLimitBucket(t.token)}`)) === 0 ? true : null)),
    ).to.equal(true);
    const garbage = `${t.token.slice(0, -1)}${t.token.endsWith('0') ? '1' : '0'}`; // wrong checksum
    expect((await limited.request('GET', `${V1}/health`, { token: garbage })).status).to.equal(401);
    expect(await env.redis.exists(`rl:token:${rateLimitBucket(garbage)}`)).to.equal(0);
  });

  it('counts in memory when Redis is unreachable (never fails open), still refuses bad tokens, warns once', async () => {
    const logs: string[] = [];
    const logger = createLogger(
      'info',
      new Writable({
        write(chunk, _enc, cb) {
          logs.push(chunk.toString());
          cb();
        },
      }),
    );
    const broken = new Redis({
      host: '127.0.0.1',
      port: 1,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    broken.on('error', () => {
      /* expected: nothing listens on port 1 */
    });
    const queues = createQueues(env.redisUrl, { prefix: `{test-rl-down-${process.pid}}` });
    const { app } = createApp({
      knex: env.knex,
      redis: broken,
      logger,
      queues,
      config: {
        publicBaseUrl: 'http://127.0.0.1',
        rateLimit: { points: 3, durationSeconds: 60 },
        // a cut-over tenant (TEST_TENANT_DB=1) is reached with the APP_KEY of its sealed password
        appKey: TEST_WEB_APP_KEY,
      },
    });
    const server = http.createServer(app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${V1}/health`;
      const real = await makeIntegrationToken(a);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(url, { headers: { authorization: `Bearer ${real.token}` } });
        expect(res.status, `request ${i + 1}`).to.equal(200);
        expect(res.headers.get('x-ratelimit-remaining')).to.equal(String(2 - i));
      }
      const over = await fetch(url, { headers: { authorization: `Bearer ${real.token}` } });
      expect(over.status, 'the in-memory limiter keeps the limit').to.equal(429);
      expect(Number(over.headers.get('retry-after'))).to.be.within(1, 60);
      const forged = await fetch(url, {
        headers: { authorization: `Bearer ${mintToken('integration', real.data.id).token}` },
      });
      expect(forged.status).to.equal(401);
      const warnings = logs.filter((l) => JSON.parse(l).msg === 'rate limiter: Redis unavailable, counting in memory');
      expect(warnings.length, 'one warning, not one per request').to.equal(1);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await queues.close();
      broken.disconnect();
    }
  });
});
