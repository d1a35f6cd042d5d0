import { expect } from 'chai';
import Router from '@koa/router';
import { createMailApp } from '../../../api/mail/app.js';
import { publicPath } from '../../../api/mail/routes.js';
import { mailRoutes } from '../../../api/mail/table.js';
import { buildMailOpenApi } from '../../../api/mail/openapi.js';
import { createQueues } from '../../../jobs/queues.js';
import { structuralProblems } from '../../api/docs/openapi-check.js';
import { env } from '../../helpers/env.js';
import { FakeMailboxClient } from './fake-client.js';
import {
  TEST_APP_KEY,
  captureLogger,
  enc,
  makeDomain,
  makeKey,
  makeMailbox,
  startMailTestApp,
  type MailTestApp,
} from './support.js';

describe('Mailbox API: index, /openapi.json, /docs (document 3)', () => {
  let app: MailTestApp;
  before(async () => {
    app = await startMailTestApp({ mailClient: new FakeMailboxClient() });
  });

  it('GET /api/v1 is public and lists every endpoint of the route table with method, path and scope', async () => {
    const res = await app.request('GET', '/api/v1');
    expect(res.status).to.equal(200);
    expect(res.body).to.include({
      ok: true,
      version: 'v1',
      base_url: 'http://mail.example.test',
      docs: 'http://mail.example.test/docs',
      openapi: 'http://mail.example.test/openapi.json',
    });
    expect(res.body.service).to.be.a('string').and.not.equal('');
    expect(res.body.authentication).to.include('Authorization: Bearer');
    expect(res.body.endpoints).to.deep.equal(
      mailRoutes.map((r) => ({ method: r.method.toUpperCase(), path: publicPath(r.path), scope: r.scope })),
    );
    const byPath = Object.fromEntries(
      res.body.endpoints.map((e: { method: string; path: string; scope: string }) => [
        `${e.method} ${e.path}`,
        e.scope,
      ]),
    );
    expect(byPath).to.include({
      'GET /api/v1': null,
      'GET /api/v1/mailboxes': 'emails:read',
      'GET /api/v1/mailboxes/{mailbox}/emails': 'emails:read',
      'GET /api/v1/mailboxes/{mailbox}/emails/{id}': 'emails:read',
      'POST /api/v1/mailboxes/{mailbox}/emails/{id}/reply': 'emails:reply',
      'POST /api/v1/mailboxes/{mailbox}/send': 'emails:send',
      'POST /api/v1/domains/{domain}/mailboxes': 'mailboxes:create',
    });
  });

  it('every route of the mail router is in /openapi.json, and the document passes the structural checks', async () => {
    const res = await app.request('GET', '/openapi.json');
    expect(res.status).to.equal(200);
    const doc = res.body;
    expect(doc.openapi).to.equal('3.1.0');
    expect(structuralProblems(doc)).to.deep.equal([]);
    const { router } = createMailApp({
      knex: env.knex,
      redis: env.redis,
      logger: captureLogger(),
      queues: createQueues(env.redisUrl),
      mailClient: new FakeMailboxClient(),
      config: { mailBaseUrl: 'http://x.test', appKey: TEST_APP_KEY },
    });
    const layers = (router as Router).stack.filter((l) => l.methods.length > 0);
    expect(layers.length).to.equal(mailRoutes.length);
    for (const layer of layers) {
      const p = publicPath(String(layer.path));
      for (const m of layer.methods.filter((x) => x !== 'HEAD')) {
        expect(doc.paths[p], p).to.be.an('object');
        expect(doc.paths[p][m.toLowerCase()], `${m} ${p}`).to.be.an('object');
      }
    }
  });

  it("documents the API-key scheme, the mailbox password header and document 3's error codes per route", () => {
    const doc = buildMailOpenApi(mailRoutes, 'http://mail.example.test');
    expect(doc.components.securitySchemes).to.have.property('apiKey');
    expect(doc.paths['/api/v1'].get.security).to.deep.equal([]);
    const list = doc.paths['/api/v1/mailboxes/{mailbox}/emails'].get;
    expect(list.security).to.deep.equal([{ apiKey: [] }]);
    expect(list.parameters!.map((p) => `${p.in}:${p.name}`)).to.include.members([
      'path:mailbox',
      'query:limit',
      'query:unseen',
      'header:X-Mailbox-Password',
    ]);
    const limit = list.parameters!.find((p) => p.name === 'limit')!.schema as Record<string, unknown>;
    expect(limit).to.include({ minimum: 1, maximum: 100, default: 20 });
    for (const [status, codes] of Object.entries({
      401: ['unauthorized', 'mailbox_auth_failed'],
      403: ['forbidden', 'mailbox_not_allowed'],
      404: ['mailbox_not_found'],
      422: ['invalid_request', 'mailbox_password_required'],
      429: ['rate_limited'],
      502: ['mail_server_error'],
    })) {
      for (const c of codes) expect(list.responses[status].description, `${status} ${c}`).to.include(c);
    }
    const create = doc.paths['/api/v1/domains/{domain}/mailboxes'].post;
    expect(Object.keys(create.responses)).to.include.members(['201', '202', '403', '404', '409', '422', '502', '503']);
    expect(create.parameters!.some((p) => p.name === 'X-Mailbox-Password')).to.equal(false);
    expect((create.requestBody!.content['application/json'].schema as { required: string[] }).required).to.deep.equal([
      'local_part',
      'password',
    ]);
  });

  it('/docs renders swagger-ui from local assets; other asset names are 404', async () => {
    const page = await app.request('GET', '/docs');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    expect(page.text).to.include('/docs/assets/swagger-ui-bundle.js');
    expect(page.text).not.to.match(/https?:\/\/(?!127\.0\.0\.1)/);
    const js = await app.request('GET', '/docs/assets/swagger-ui-bundle.js');
    expect(js.status).to.equal(200);
    expect(js.text.length).to.be.greaterThan(100000);
    const init = await app.request('GET', '/docs/assets/docs-init.js');
    expect(init.text).to.include('/openapi.json');
    const nope = await app.request('GET', '/docs/assets/package.json');
    expect(nope.status).to.equal(404);
    expect(nope.body).to.deep.include({ ok: false, error: 'not_found' });
  });

  it('a JSON body over 1 MB answers 413 payload_too_large, as JSON; without a key 401 comes first, body unread', async () => {
    const domain = await makeDomain();
    const box = await makeMailbox(domain);
    const { key } = await makeKey(domain, [box.id], ['emails:send']);
    const raw = JSON.stringify({ to: 'a@example.test', subject: 's', body: 'x'.repeat(1_100_000) });
    const anonymous = await app.request('POST', `/api/v1/mailboxes/${enc(box.email)}/send`, { raw });
    expect(anonymous.status).to.equal(401);
    expect(anonymous.headers.get('connection')).to.equal('close');
    const res = await app.request('POST', `/api/v1/mailboxes/${enc(box.email)}/send`, { raw, key });
    expect(res.status).to.equal(413);
    expect(res.body).to.deep.equal({
      ok: false,
      error: 'payload_too_large',
      message: 'The request body is too large.',
    });
  });

  it('unknown routes answer 404 not_found and wrong methods 405 method_not_allowed, as JSON', async () => {
    const a = await app.request('GET', '/api/v1/nothing-here');
    expect(a.status).to.equal(404);
    expect(a.body).to.deep.equal({ ok: false, error: 'not_found', message: 'Route not found.' });
    const b = await app.request('DELETE', '/api/v1/mailboxes');
    expect(b.status).to.equal(405);
    expect(b.body.error).to.equal('method_not_allowed');
    expect(b.headers.get('allow')).to.include('GET');
  });
});
