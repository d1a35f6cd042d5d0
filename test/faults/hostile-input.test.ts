import { expect } from 'chai';
import net from 'node:net';
import { env } from '../helpers/env.js';
import type { TestResponse } from '../helpers/http.js';
import { describeError } from '../../api/http/error-table.js';
import { inspectBody, MAX_BODY_DEPTH } from '../../api/http/hostile-input.js';
import { MAILBOX_PASSWORD_MAX_LENGTH } from '../../api/mail/schemas.js';
import {
  credentials,
  faultWorld,
  fillPath,
  methodRequest,
  rawRequest,
  sampleParam,
  type DocOperation,
  type FaultWorld,
  type RawAnswer,
  type Service,
} from './world.js';

/**
 * One test per class of hostile input of issue 7 item 5 (and the headers of item 6), against both
 * services in-process: each answers 4xx JSON in the service's error format with a request id,
 * changes nothing, and shows no stack or SQL.
 */

type Doc = { paths: Record<string, Record<string, DocOperation>> };
type Op = { service: Service; method: string; path: string; op: DocOperation };

const V1 = '/api/external/v1';
const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

/** Every operation of a document. */
function operations(service: Service, doc: Doc): Op[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ service, method, path, op })),
  );
}

/** Asserts a 4xx answer in the service's error format, with a request id and nothing internal in it. */
function expectServiceError(service: Service, status: number, headers: Headers | Record<string, string>, text: string) {
  const get = (n: string) => (headers instanceof Headers ? headers.get(n) : headers[n]) ?? '';
  expect(status, text).to.be.within(400, 499);
  expect(get('content-type')).to.match(/^application\/json/);
  expect(get('x-request-id')).to.match(/^[A-Za-z0-9._-]{8,64}$/);
  expect(get('x-content-type-options')).to.equal('nosniff');
  const body = JSON.parse(text);
  if (service === 'web') {
    expect(body.message, text).to.be.a('string');
    expect(body.code, text).to.be.a('string');
  } else {
    expect(body.ok, text).to.equal(false);
    expect(body.error, text).to.be.a('string');
    expect(body.message, text).to.be.a('string');
  }
  expect(text).not.to.match(/\bat .+\.(ts|js):\d+|SELECT |INSERT |UPDATE .+ SET|invalid byte sequence/i);
  return body;
}

const validationCode = (s: Service) => (s === 'web' ? 'VALIDATION_FAILED' : 'invalid_request');
const codeOf = (s: Service, body: { code?: string; error?: string }) => (s === 'web' ? body.code : body.error);

/** Rows of the tenant and the (fake) mail server's work: the same before and after = nothing changed. */
async function rowCounts(w: FaultWorld): Promise<string> {
  const t = w.tenant.tenant.id;
  const n = async (table: string, where: Record<string, unknown>) =>
    Number((await env.knex(table).where(where).count({ n: '*' }).first())!.n);
  return JSON.stringify({
    customers: await n('customers', { tenant_id: t }),
    tickets: await n('tickets', { tenant_id: t }),
    tokens: await n('auth_tokens', { tenant_id: t }),
    mailboxes: await env.knex('mail_mailboxes').count({ n: '*' }).first(),
    // what the (fake) mail server was asked to do: reads of an e-mail, and sends
    mailReads: w.client.calls.filter((c) => c.method === 'getEmail').length,
    mailSent: w.client.sent.length,
  });
}

describe('hostile input (issue 7 item 5): 4xx JSON in the service format, nothing changed', function () {
  this.timeout(60_000);
  let w: FaultWorld;
  let ops: Op[];

  before(async () => {
    w = await faultWorld();
    const webDoc = (await w.web.request('GET', '/openapi.json')).body as Doc;
    const mailDoc = (await w.mail.request('GET', '/openapi.json')).body as Doc;
    ops = [...operations('web', webDoc), ...operations('mail', mailDoc)];
  });

  const send = async (o: Op, path: string, init: { raw?: string; headers?: Record<string, string> } = {}) => {
    const app = o.service === 'web' ? w.web : w.mail;
    const creds = await credentials(w, o.service, o.method, o.path, o.op);
    return app.request(o.method.toUpperCase(), path, { raw: init.raw, headers: { ...creds, ...init.headers } });
  };
  const realPath = (o: Op) => fillPath(o.path, (n) => sampleParam(w, o.path, n));

  it('JSON nested 5,000 deep: 422 on every body endpoint of both services, login included', async () => {
    const before = await rowCounts(w);
    const withBody = ops.filter((o) => o.op.requestBody);
    expect(withBody.length).to.be.greaterThan(6);
    expect(withBody.map((o) => o.path)).to.include('/api/auth/login');
    for (const o of withBody) {
      const r = await send(o, realPath(o), { raw: deep(5000) });
      const body = expectServiceError(o.service, r.status, r.headers, r.text);
      expect(r.status, `${o.method} ${o.path}`).to.equal(422);
      expect(codeOf(o.service, body)).to.equal(validationCode(o.service));
      expect(body.errors.body[0]).to.include(`deeper than ${MAX_BODY_DEPTH} levels`);
    }
    // an array nested deeper than the limit inside an otherwise fine body
    const login = withBody.find((o) => o.path === '/api/auth/login')!;
    const r = await send(login, '/api/auth/login', {
      raw: `{"email":"a@b.test","password":"x","device_name":${'['.repeat(70)}${']'.repeat(70)}}`,
    });
    expect(r.status).to.equal(422);
    expect(r.body.errors.body[0]).to.include('deeper than 64');
    expect(await rowCounts(w)).to.equal(before);
  });

  it('the depth limit is exactly 64 levels of objects and arrays; the walk itself never recurses', () => {
    const nest = (n: number): unknown => (n === 0 ? 'x' : { a: nest(n - 1) });
    expect(inspectBody(nest(64))).to.equal(null);
    expect(inspectBody(nest(65))).to.deep.equal({ kind: 'depth' });
    expect(inspectBody(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)))).to.deep.equal({ kind: 'depth' });
    expect(inspectBody({ a: [{ b: 'ok' }, { 'c\u0000': 1 }] })).to.deep.equal({ kind: 'nul', path: 'a.1.c\\u0000' });
  });

  it('NUL in a body string or key, the path or the query: 422 on both services, nothing stored', async () => {
    const before = await rowCounts(w);
    const web = (method: string, path: string, body?: unknown) =>
      w.web.request(method, path, { token: w.integration, ...(body ? { body } : {}) });
    const cases: [string, Promise<TestResponse>, string][] = [
      [
        'body string',
        web('POST', `${V1}/customers`, { name: 'Budi\u0000', phone: '+62811', address: 'Jl. 1' }),
        'name',
      ],
      ['body key', web('POST', `${V1}/tickets`, { type: 'x', 'note\u0000': 'y' }), 'note\\u0000'],
      ['nested body', web('POST', `${V1}/tickets`, { type: 'x', description: 'a\u0000b' }), 'description'],
      ['path', web('GET', `${V1}/customers/1%00`), 'path'],
      ['query', web('GET', `${V1}/customers?search=a%00b`), 'query'],
      [
        'unauthenticated login',
        w.web.request('POST', '/api/auth/login', { body: { email: 'a@b.test', password: 'p\u0000' } }),
        'password',
      ],
    ];
    for (const [name, p, field] of cases) {
      const r = await p;
      const body = expectServiceError('web', r.status, r.headers, r.text);
      expect(r.status, name).to.equal(422);
      expect(body.code, name).to.equal('VALIDATION_FAILED');
      expect(body.errors, name).to.have.property(field);
    }
    const mailHeaders = { 'x-mailbox-password': w.mailboxPassword };
    const send = await w.mail.request('POST', `/api/v1/mailboxes/${encodeURIComponent(w.mailbox)}/send`, {
      key: w.mailKey,
      headers: mailHeaders,
      body: { to: 'x@example.test', subject: 'Hi\u0000', body: 'text' },
    });
    expect(expectServiceError('mail', send.status, send.headers, send.text).errors).to.have.property('subject');
    const path = await w.mail.request('GET', `/api/v1/mailboxes/a%00b/emails`, { key: w.mailKey });
    expect(expectServiceError('mail', path.status, path.headers, path.text).error).to.equal('invalid_request');
    expect(path.status).to.equal(422);
    const create = await w.mail.request('POST', `/api/v1/domains/${w.domain}/mailboxes`, {
      key: w.mailKey,
      body: { local_part: 'nul', password: 'long enough password\u0000' },
    });
    expect(create.status).to.equal(422);
    expect(create.body.errors).to.have.property('password');
    // the sign-in forms (urlencoded): the board through the body factory, the mail dashboard through its kit
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const board = await w.web.request('POST', '/admin/login', { raw: 'email=a%00b&password=x', headers: form });
    expect(board.status).to.equal(422);
    expect(board.body.errors).to.have.property('email');
    const dash = await w.mail.request('POST', '/login', { raw: 'email=a%00b&password=x', headers: form });
    expect(dash.status).to.equal(422);
    expect(dash.text).to.include('Bad request');
    expect(await rowCounts(w)).to.equal(before);
  });

  it('control characters in names and identifiers: 422 naming the field (schema pattern)', async () => {
    const before = await rowCounts(w);
    const token = await w.web.request('POST', '/api/integrations/api-tokens', {
      token: w.login,
      body: { name: 'line one\nline two' },
    });
    expect(token.status).to.equal(422);
    expect(token.body.errors.name).to.deep.equal(['The name field must be one line without control characters.']);
    const customer = await w.web.request('POST', `${V1}/customers`, {
      token: w.integration,
      body: { name: 'Budi\u0007', phone: '+62811', address: 'Jl. 1' },
    });
    expect(customer.status).to.equal(422);
    expect(customer.body.errors).to.have.property('name');
    const create = await w.mail.request('POST', `/api/v1/domains/${w.domain}/mailboxes`, {
      key: w.mailKey,
      body: { local_part: 'ctl', password: 'long enough password', real_name: 'Tab\there' },
    });
    expect(create.status).to.equal(422);
    expect(create.body.error).to.equal('invalid_request');
    expect(create.body.errors).to.have.property('real_name');
    expect(await rowCounts(w)).to.equal(before);
  });

  it("PostgreSQL's own refusal of NUL (22021) is a 422 in the error table, never a 500", async () => {
    const err = await env.knex.raw('SELECT ?::text AS t', ['a\u0000b']).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as { code?: string }).code).to.equal('22021');
    const d = describeError(err);
    expect(d.status).to.equal(422);
    expect(d.code).to.equal('VALIDATION_FAILED');
    expect(JSON.stringify(d)).not.to.include('byte sequence');
  });

  it('unknown methods (TRACE, PROPFIND, MKCOL): 405 JSON with Allow on a known path, 404 JSON elsewhere', async () => {
    const cases: [Service, string, string, string][] = [
      ['web', `${V1}/customers`, 'GET', w.integration],
      ['web', '/api/auth/login', 'POST', ''],
      ['mail', '/api/v1/mailboxes', 'GET', w.mailKey],
      ['mail', '/api/v1', 'GET', ''],
    ];
    for (const [service, path, allowed, token] of cases) {
      const base = service === 'web' ? w.web.url : w.mail.url;
      for (const method of ['TRACE', 'PROPFIND', 'MKCOL']) {
        const r = await methodRequest(base, method, path, token ? { authorization: `Bearer ${token}` } : {});
        const body = expectServiceError(service, r.status, r.headers, r.body);
        expect(r.status, `${method} ${path}`).to.equal(405);
        expect(codeOf(service, body)).to.equal(service === 'web' ? 'METHOD_NOT_ALLOWED' : 'method_not_allowed');
        expect(r.headers.allow.split(/,\s*/)).to.include(allowed);
      }
    }
    const nowhere = await methodRequest(w.web.url, 'PROPFIND', '/no/such/path');
    expect(expectServiceError('web', nowhere.status, nowhere.headers, nowhere.body).code).to.equal('NOT_FOUND');
    expect(nowhere.status).to.equal(404);
  });

  it("Node's own rejections answer JSON: 431 headers or URL over 16 KB, 400 bad framing", async () => {
    const big = 'x'.repeat(20_000);
    const requests: [string, number, string][] = [
      [`GET /api/v1 HTTP/1.1\r\nHost: a\r\nX-Big: ${big}\r\n\r\n`, 431, 'headers'],
      [`GET /api/v1?q=${big} HTTP/1.1\r\nHost: a\r\n\r\n`, 431, 'URL'],
      [
        'POST /api/auth/login HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n' +
          'Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}',
        400,
        'duplicated Content-Length',
      ],
      [
        'POST /api/auth/login HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n' +
          'Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
        400,
        'Transfer-Encoding with Content-Length',
      ],
    ];
    for (const service of ['web', 'mail'] as const) {
      const base = service === 'web' ? w.web.url : w.mail.url;
      for (const [bytes, status, what] of requests) {
        const r: RawAnswer = await rawRequest(base, bytes);
        expect(r.status, `${service} ${what}`).to.equal(status);
        expect(r.headers['cache-control']).to.equal('no-store');
        const body = expectServiceError(service, r.status, r.headers, r.body);
        const expected =
          service === 'web'
            ? status === 431
              ? 'HEADERS_TOO_LARGE'
              : 'BAD_REQUEST'
            : status === 431
              ? 'headers_too_large'
              : 'bad_request';
        expect(codeOf(service, body), what).to.equal(expected);
        expect(body.request_id).to.equal(r.headers['x-request-id']);
      }
    }
  });

  it('a client error on a kept-alive connection whose earlier response is done is answered too', async () => {
    for (const [service, base] of [
      ['web', w.web.url],
      ['mail', w.mail.url],
    ] as const) {
      const { hostname, port } = new URL(base);
      const socket = net.connect(Number(port), hostname);
      let received = '';
      socket.on('data', (c) => (received += c.toString('utf8')));
      const closed = new Promise<void>((r) => socket.on('close', () => r()));
      socket.write('GET /no-such-page HTTP/1.1\r\nHost: a\r\n\r\n');
      // the first answer (404 JSON) is complete when its Content-Length bytes have arrived
      let first = '';
      for (let i = 0; i < 500 && !first; i++) {
        const [head, body = ''] = received.split('\r\n\r\n');
        const len = /content-length: (\d+)/i.exec(head ?? '')?.[1];
        if (len && Buffer.byteLength(body) >= Number(len)) first = received;
        else await new Promise((r) => setTimeout(r, 10));
      }
      expect(first, service).to.match(/^HTTP\/1\.1 404 /);
      socket.write('POST /api/v1 HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n{}');
      await closed;
      const second = received.slice(first.length);
      expect(second, service).to.match(/^HTTP\/1\.1 400 /);
      const body = JSON.parse(second.split('\r\n\r\n')[1]);
      expect(service === 'web' ? body.code : body.error).to.equal(service === 'web' ? 'BAD_REQUEST' : 'bad_request');
    }
  });

  it('loose ids: 0x1, 239.0, %20114, 1e3, +1, -1 are 404 on every id route of the web service', async () => {
    const before = await rowCounts(w);
    const idRoutes = ops.filter((o) => o.service === 'web' && o.path.includes('{id}'));
    expect(idRoutes.map((o) => `${o.method} ${o.path}`)).to.include.members([
      `get ${V1}/customers/{id}`,
      `get ${V1}/tickets/{id}`,
      `get ${V1}/invoices/{id}`,
      'patch /api/tickets/{id}',
      'delete /api/integrations/api-tokens/{id}',
    ]);
    for (const o of idRoutes) {
      const real = Number(sampleParam(w, o.path, 'id'));
      for (const bad of [`0x${real.toString(16)}`, `${real}.0`, `%20${real}`, `${real}e0`, `+${real}`, `-${real}`]) {
        const r = await send(o, o.path.replace('{id}', bad), {
          raw: o.op.requestBody ? '{"status":"closed"}' : undefined,
        });
        const body = expectServiceError('web', r.status, r.headers, r.text);
        expect(r.status, `${o.method} ${o.path} ${bad}`).to.equal(404);
        expect(body).to.deep.include({ code: 'NOT_FOUND', message: 'Route not found.' });
      }
    }
    // the Mailbox API's {id} is an IMAP UID string: 422 invalid_request (docs/mailbox-api.md), never the e-mail
    for (const bad of ['0x1', '1.0', '%201', '1e0', '+1']) {
      const r = await w.mail.request('GET', `/api/v1/mailboxes/${encodeURIComponent(w.mailbox)}/emails/${bad}`, {
        key: w.mailKey,
        password: w.mailboxPassword,
      });
      expect(r.status, bad).to.equal(422);
      expect(expectServiceError('mail', r.status, r.headers, r.text).errors).to.have.property('id');
    }
    expect(await rowCounts(w)).to.equal(before);
  });

  it('query numbers: only plain digits (per_page=0x10, page=1e3, " 5", 1.0, +2 -> 422; 16 -> 200)', async () => {
    const lists = ops.filter((o) => o.service === 'web' && o.op.parameters?.some((p) => p.name === 'per_page'));
    expect(lists.length).to.be.greaterThan(6);
    for (const o of lists) {
      for (const [q, field] of [
        ['per_page=0x10', 'per_page'],
        ['page=1e3', 'page'],
        ['page=%205', 'page'],
        ['per_page=1.0', 'per_page'],
        ['page=%2B2', 'page'],
        ['page=1&page=2', 'page'],
      ]) {
        const r = await send(o, `${realPath(o)}?${q}`);
        expect(r.status, `${o.path}?${q}`).to.equal(422);
        expect(expectServiceError('web', r.status, r.headers, r.text).errors).to.have.property(field);
      }
      const ok = await send(o, `${realPath(o)}?per_page=16&page=1`);
      expect(ok.status, o.path).to.equal(200);
      expect(ok.body.per_page).to.equal(16);
    }
    const box = `/api/v1/mailboxes/${encodeURIComponent(w.mailbox)}/emails`;
    for (const q of ['limit=0x10', 'limit=1e1', 'limit=%205', 'limit=2.0']) {
      const r = await w.mail.request('GET', `${box}?${q}`, { key: w.mailKey, password: w.mailboxPassword });
      expect(r.status, q).to.equal(422);
      expect(expectServiceError('mail', r.status, r.headers, r.text).errors).to.have.property('limit');
    }
    const ok = await w.mail.request('GET', `${box}?limit=5`, { key: w.mailKey, password: w.mailboxPassword });
    expect(ok.status).to.equal(200);
  });

  it('unknown body fields: 422 naming them, as additionalProperties:false in both OpenAPI documents says', async () => {
    for (const o of ops.filter((x) => x.op.requestBody)) {
      // JSON bodies, and the multipart bodies of uploads (one file field, nothing else: api/http/multipart.ts)
      const content = o.op.requestBody!.content;
      const schema = (content['application/json'] ?? content['multipart/form-data']).schema;
      expect(schema.additionalProperties, o.path).to.equal(false);
    }
    const before = await rowCounts(w);
    const customer = await w.web.request('POST', `${V1}/customers`, {
      token: w.integration,
      body: { name: 'Budi', phone: '+62811', address: 'Jl. 1', is_admin: true },
    });
    expect(customer.status).to.equal(422);
    expect(customer.body.errors).to.deep.equal({ is_admin: ['The is admin field is not allowed.'] });
    const login = await w.web.request('POST', '/api/auth/login', {
      body: { email: w.tenant.admin.email, password: 'x', remember: true },
    });
    expect(login.status).to.equal(422);
    expect(login.body.errors).to.have.property('remember');
    const send = await w.mail.request('POST', `/api/v1/mailboxes/${encodeURIComponent(w.mailbox)}/send`, {
      key: w.mailKey,
      password: w.mailboxPassword,
      body: { to: 'x@example.test', subject: 'Hi', body: 'text', bcc: 'spy@example.test' },
    });
    expect(send.status).to.equal(422);
    expect(send.body).to.deep.include({ ok: false, error: 'invalid_request' });
    expect(send.body.errors).to.have.property('bcc');
    expect(await rowCounts(w)).to.equal(before);
  });

  it(`mailbox password over ${MAILBOX_PASSWORD_MAX_LENGTH} characters: 422 invalid_request, no login`, async () => {
    const path = `/api/v1/mailboxes/${encodeURIComponent(w.mailbox)}/emails`;
    const calls = w.client.calls.length;
    const header = await w.mail.request('GET', path, { key: w.mailKey, password: 'p'.repeat(8192) });
    expect(expectServiceError('mail', header.status, header.headers, header.text).error).to.equal('invalid_request');
    expect(header.status).to.equal(422);
    expect(header.body.errors).to.have.property('X-Mailbox-Password');
    const body = await w.mail.request('POST', `${path.replace('/emails', '')}/send`, {
      key: w.mailKey,
      body: { to: 'x@example.test', subject: 'Hi', body: 'text', mailbox_password: 'p'.repeat(8192) },
    });
    expect(body.status).to.equal(422);
    expect(body.body.errors).to.have.property('mailbox_password');
    expect(w.client.calls.length).to.equal(calls);
    expect(header.text + body.text).not.to.include('pppppppp');
    // at the bound the password reaches the mail server, which decides
    const edge = await w.mail.request('GET', path, {
      key: w.mailKey,
      password: 'p'.repeat(MAILBOX_PASSWORD_MAX_LENGTH),
    });
    expect(edge.status).to.equal(401);
    expect(edge.body.error).to.equal('mailbox_auth_failed');
  });

  it('headers: no-store on /api answers and every secret (login, token creation), nosniff everywhere', async () => {
    const login = await w.web.request('POST', '/api/auth/login', {
      body: { email: w.tenant.admin.email, password: 'correct horse battery' },
    });
    expect(login.status).to.equal(200);
    const created = await w.web.request('POST', '/api/integrations/api-tokens', {
      token: w.login,
      body: { name: 'headers test' },
    });
    expect(created.status).to.equal(201);
    const answers = [
      login,
      created,
      await w.web.request('GET', `${V1}/customers`, { token: w.integration }),
      await w.web.request('GET', `${V1}/customers/0`, { token: w.integration }),
      await w.web.request('GET', '/api/no-such-route'),
      await w.mail.request('GET', '/api/v1'),
      await w.mail.request('GET', '/api/v1/mailboxes', { key: w.mailKey }),
    ];
    for (const r of answers) {
      expect(r.headers.get('cache-control'), r.text.slice(0, 80)).to.equal('no-store');
      expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
    }
    for (const r of [
      await w.web.request('GET', '/openapi.json'),
      await w.web.request('GET', '/docs'),
      await w.mail.request('GET', '/docs'),
      await w.mail.request('GET', '/login'),
      await w.web.request('GET', '/admin/login'),
    ]) {
      expect(r.headers.get('x-content-type-options')).to.equal('nosniff');
    }
  });

  it("bull-board and the dashboard: frame-ancestors 'none'; Secure cookies behind https (TRUST_PROXY)", async () => {
    const board = await w.web.request('GET', '/admin/queues');
    expect(board.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    expect(board.headers.get('x-frame-options')).to.equal('DENY');
    const api = await w.web.request('GET', '/admin/queues/api/queues');
    expect(api.status).to.equal(401);
    expect(api.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    expect((await w.web.request('GET', '/admin/login')).headers.get('content-security-policy')).to.include(
      "frame-ancestors 'none'",
    );
    expect((await w.mail.request('GET', '/login')).headers.get('content-security-policy')).to.include(
      "frame-ancestors 'none'",
    );
    // behind a TLS-terminating proxy: Secure only when the app trusts the proxy's X-Forwarded-Proto
    const { startTestApp } = await import('../helpers/http.js');
    const { startMailTestApp } = await import('../api/mail/support.js');
    const proxied = { 'x-forwarded-proto': 'https' };
    const webTrusting = await startTestApp({ trustProxy: true });
    const mailTrusting = await startMailTestApp({ mailClient: w.client, config: { trustProxy: true } });
    const cookies = async (r: Promise<{ headers: Headers }>) => (await r).headers.getSetCookie();
    for (const c of await cookies(webTrusting.request('GET', '/admin/login', { headers: proxied })))
      expect(c).to.match(/;\s*secure/i);
    for (const c of await cookies(mailTrusting.request('GET', '/login', { headers: proxied })))
      expect(c).to.match(/;\s*Secure/);
    expect(await cookies(mailTrusting.request('GET', '/login', { headers: proxied }))).to.have.length.greaterThan(0);
    for (const c of await cookies(w.mail.request('GET', '/login', { headers: proxied })))
      expect(c).not.to.match(/Secure/);
    for (const c of await cookies(w.web.request('GET', '/admin/login', { headers: proxied })))
      expect(c).not.to.match(/secure/i);
  });
});
