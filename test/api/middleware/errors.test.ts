import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import knexPkg from 'knex';
import type { Knex } from 'knex';
import { Model } from 'objection';
import { createApp } from '../../../api/app.js';
import { mountWebRoutes, type AnyWebRoute } from '../../../api/http/web-route.js';
import { createLogger } from '../../../lib/logger.js';
import { createQueues } from '../../../jobs/queues.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { makeIntegrationToken, makeTenant, type TenantFixture } from '../../helpers/fixtures.js';
import type { AppContext } from '../../../api/context.js';

const { knex: makeKnex } = knexPkg;

/** An Objection model over a temporary table (to see Objection-wrapped database errors). */
class TempThing extends Model {
  static override tableName = 'tmp_things';
  declare code: string;
  declare name: string | null;
  declare qty: number;
}

/** Runs `fn` in a transaction holding a temp table with a unique, a not-null and a check column. */
function withTempTable(fn: (trx: Knex.Transaction) => Promise<unknown>) {
  return env.knex.transaction(async (trx) => {
    await trx.raw(
      `CREATE TEMP TABLE tmp_things (id serial PRIMARY KEY, code text UNIQUE, name text NOT NULL, qty int CHECK (qty > 0)) ON COMMIT DROP`,
    );
    await trx('tmp_things').insert({ code: 'secret-code-1', name: 'first', qty: 1 });
    await fn(trx);
  });
}

const route = (path: string, handler: (ctx: AppContext) => Promise<void>): AnyWebRoute => ({
  method: 'get',
  path,
  summary: 'test',
  tag: 'test',
  auth: 'public',
  responses: { 200: { description: 'ok' } },
  handler,
});

/** Routes registered only in this test's app, on the real app's router (after createApp). */
const TEST_ROUTES: AnyWebRoute[] = [
  route('/test/throws', async () => {
    throw new Error('boom: SELECT password_hash FROM users WHERE id = 1');
  }),
  route('/test/bad-sql', async (ctx) => {
    await ctx.deps.knex.raw('SELECT secret_column FROM no_such_table_xyz');
  }),
  route('/test/unique', async () => {
    await withTempTable((trx) => trx('tmp_things').insert({ code: 'secret-code-1', name: 'dup', qty: 1 }));
  }),
  route('/test/not-null', async () => {
    await withTempTable((trx) => trx('tmp_things').insert({ code: 'x2', name: null, qty: 1 }));
  }),
  route('/test/check', async () => {
    await withTempTable((trx) => trx('tmp_things').insert({ code: 'x3', name: 'n', qty: -5 }));
  }),
  route('/test/foreign-key', async (ctx) => {
    await ctx.deps.knex('customers').insert({ tenant_id: 2147483000, code: 'X', name: 'x', phone: '1', address: 'a' });
  }),
  route('/test/objection-unique', async () => {
    await withTempTable(async (trx) => {
      await TempThing.query(trx).insert({ code: 'secret-code-1', name: 'dup', qty: 2 });
    });
  }),
];

/** Starts the real web app (createApp) with extra test routes and a log capture. */
async function start(knex: Knex = env.knex) {
  const logs: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(c, _e, cb) {
        logs.push(c.toString());
        cb();
      },
    }),
  );
  const queues = createQueues(env.redisUrl, { prefix: `{test-errors-${process.pid}}` });
  const { app, router } = createApp({
    knex,
    redis: env.redis,
    logger,
    queues,
    config: { publicBaseUrl: 'http://127.0.0.1', rateLimit: { points: 100000, durationSeconds: 60 } },
  });
  mountWebRoutes(router, TEST_ROUTES);
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  registerCleanup(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await queues.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request = async (
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: string } = {},
  ) => {
    const res = await fetch(url + path, {
      method,
      headers: { accept: 'application/json', ...init.headers },
      body: init.body,
      redirect: 'manual',
    });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: res.status, headers: res.headers, text, body };
  };
  return { request, logs };
}

/** Words that must never reach a client: SQL, table and column names, stack frames. */
const LEAKS = [
  /select/i,
  /insert/i,
  /from /i,
  /violates/i,
  /constraint/i,
  /relation/i,
  /tmp_things/,
  /no_such_table/,
  /secret/,
  /password_hash/,
  /\bat \S+ \(/,
  /\.ts\b/,
  /boom/,
];

function expectNoLeak(text: string, where: string) {
  for (const re of LEAKS) expect(text, `${where}: ${re}`).not.to.match(re);
}

describe('errors and request log (api/middleware/errors.ts, DESIGN.md §4)', () => {
  let app: Awaited<ReturnType<typeof start>>;
  let a: TenantFixture;

  before(async () => {
    app = await start();
    a = await makeTenant();
  });

  for (const path of ['/test/throws', '/test/bad-sql']) {
    it(`answers an unknown failure (${path}) with 500 {message, code: SERVER_ERROR, request_id}, logged with that request id and the stack`, async () => {
      const res = await app.request('GET', path);
      expect(res.status).to.equal(500);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(Object.keys(res.body).sort()).to.deep.equal(['code', 'message', 'request_id']);
      expect(res.body.code).to.equal('SERVER_ERROR');
      expect(res.body.request_id).to.be.a('string').and.equal(res.headers.get('x-request-id'));
      expectNoLeak(res.text, path);
      const line = app.logs.map((l) => JSON.parse(l)).find((l) => l.request_id === res.body.request_id);
      expect(line, 'log line of the request').to.not.equal(undefined);
      expect(line).to.include({ level: 50, status: 500, path, method: 'GET' });
      expect(line.err.stack).to.be.a('string').and.not.equal('');
      expect(line.err.message).to.match(path === '/test/throws' ? /boom/ : /no_such_table_xyz/);
    });
  }

  it('logs one line per request with request id, tenant id, user id, status and ms (DESIGN.md §4 "Logging")', async () => {
    const t = await makeIntegrationToken(a, 'read');
    const res = await app.request('GET', '/api/external/v1/health', {
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(res.status).to.equal(200);
    const id = res.headers.get('x-request-id');
    const lines = app.logs.map((l) => JSON.parse(l)).filter((l) => l.request_id === id);
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({
      level: 30,
      method: 'GET',
      path: '/api/external/v1/health',
      status: 200,
      tenant_id: a.tenant.id,
      user_id: a.admin.id,
    });
    expect(lines[0].ms).to.be.a('number').and.at.least(0);
    expect(JSON.stringify(lines[0])).not.to.include(t.token);
  });

  it('keeps a valid incoming X-Request-Id and replaces an unsafe one', async () => {
    const kept = await app.request('GET', '/test/throws', { headers: { 'x-request-id': 'req-12345678' } });
    expect(kept.body.request_id).to.equal('req-12345678');
    const replaced = await app.request('GET', '/test/throws', { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(replaced.body.request_id).to.match(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown routes with 404 NOT_FOUND and a known path with another method with 405 METHOD_NOT_ALLOWED, both JSON', async () => {
    const missing = await app.request('GET', '/api/no/such/route');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ message: 'Route not found.', code: 'NOT_FOUND' });
    const wrong = await app.request('PUT', '/api/external/v1/health');
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.match(/GET/);
    expect(wrong.headers.get('content-type')).to.match(/^application\/json/);
    expect(wrong.body.code).to.equal('METHOD_NOT_ALLOWED');
  });

  const mapped: [string, number, string, string | null][] = [
    ['/test/unique', 409, 'CONFLICT', null],
    ['/test/objection-unique', 409, 'CONFLICT', null],
    ['/test/not-null', 422, 'VALIDATION_FAILED', 'name'],
    ['/test/check', 422, 'VALIDATION_FAILED', 'body'],
    ['/test/foreign-key', 422, 'VALIDATION_FAILED', 'body'],
  ];
  for (const [path, status, code, field] of mapped) {
    it(`maps the database error of ${path} to ${status} ${code} without SQL`, async () => {
      const res = await app.request('GET', path);
      expect(res.status).to.equal(status);
      expect(res.body.code).to.equal(code);
      expect(res.body.message).to.be.a('string').and.not.equal('');
      if (field) expect(Object.keys(res.body.errors)).to.deep.equal([field]);
      else expect(res.body).not.to.have.property('errors');
      expectNoLeak(res.text, path);
    });
  }

  it('answers a malformed JSON body with 422 VALIDATION_FAILED on any route and creates nothing', async () => {
    const t = await makeIntegrationToken(a, 'read_write');
    const count = async () =>
      Number((await env.knex('tickets').where({ tenant_id: a.tenant.id }).count({ n: '*' }))[0].n);
    const before = await count();
    for (const [path, headers] of [
      ['/api/auth/login', {}],
      ['/api/external/v1/tickets', { authorization: `Bearer ${t.token}` }],
      ['/api/integrations/api-tokens', { authorization: `Bearer ${a.adminToken}` }],
    ] as [string, Record<string, string>][]) {
      const res = await app.request('POST', path, {
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"type": "x",',
      });
      expect(res.status, path).to.equal(422);
      expect(res.body, path).to.deep.equal({
        message: 'The request body is not valid JSON.',
        code: 'VALIDATION_FAILED',
        errors: { body: ['The request body is not valid JSON.'] },
      });
    }
    expect(await count()).to.equal(before);
  });

  it('answers a body over 1 MB with 413 PAYLOAD_TOO_LARGE JSON and creates nothing', async () => {
    const t = await makeIntegrationToken(a, 'read_write');
    const count = async () =>
      Number((await env.knex('tickets').where({ tenant_id: a.tenant.id }).count({ n: '*' }))[0].n);
    const before = await count();
    const big = JSON.stringify({ type: 'x', description: 'a'.repeat(1024 * 1024 + 10) });
    for (const [path, headers] of [
      ['/api/auth/login', {}],
      ['/api/external/v1/tickets', { authorization: `Bearer ${t.token}` }],
    ] as [string, Record<string, string>][]) {
      const res = await app.request('POST', path, {
        headers: { 'content-type': 'application/json', ...headers },
        body: big,
      });
      expect(res.status, path).to.equal(413);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.body, path).to.deep.equal({ message: 'The request body is too large.', code: 'PAYLOAD_TOO_LARGE' });
    }
    expect(await count()).to.equal(before);
  });

  it("answers 500 SERVER_ERROR (not 401) when the database is down for a request, without the driver's message", async () => {
    const broken = makeKnex({
      client: 'pg',
      connection: env.databaseUrl.replace(/\/[^/?]+(\?|$)/, '/no_such_database_xyz$1'),
      pool: { min: 0, max: 1 },
      log: { warn: () => {}, error: () => {}, debug: () => {}, deprecate: () => {} },
    });
    registerCleanup(() => broken.destroy());
    const down = await start(broken);
    const t = await makeIntegrationToken(a, 'read');
    const res = await down.request('GET', '/api/external/v1/customers', {
      headers: { authorization: `Bearer ${t.token}` },
    });
    expect(res.status).to.equal(500);
    expect(res.body.code).to.equal('SERVER_ERROR');
    expect(res.body.request_id).to.equal(res.headers.get('x-request-id'));
    expect(res.text).not.to.include('no_such_database_xyz');
    expectNoLeak(res.text, 'database down');
    const line = down.logs.map((l) => JSON.parse(l)).find((l) => l.request_id === res.body.request_id);
    expect(line.err.message).to.include('no_such_database_xyz');
    expect(JSON.stringify(line)).not.to.include(t.token);
  });
});
