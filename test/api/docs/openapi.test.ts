import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import type Router from '@koa/router';
import { createApp } from '../../../api/app.js';
import { createLogger } from '../../../lib/logger.js';
import { createQueues } from '../../../jobs/queues.js';
import { webRoutes } from '../../../api/routes.js';
import { toOpenApiPath } from '../../../api/http/openapi.js';
import { isNonApiRoute, NON_API_ROUTES } from '../../../api/docs/non-api-routes.js';
import { DOC_ASSETS } from '../../../api/docs/routes.js';
import { env, registerCleanup } from '../../helpers/env.js';
import { structuralProblems } from './openapi-check.js';

/** Every (method, path) the router serves, from router.stack (HEAD is implied by GET). */
function routerOperations(router: Router): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  for (const layer of router.stack) {
    for (const m of layer.methods) {
      if (m === 'HEAD') continue;
      out.push({ method: m.toLowerCase(), path: String(layer.path) });
    }
  }
  return out;
}

describe('OpenAPI document and /docs (issue 2 item 11)', () => {
  let router: Router;
  let url: string;
  let doc: any;

  before(async () => {
    const queues = createQueues(env.redisUrl, { prefix: `{test-docs-${process.pid}}` });
    const logger = createLogger(
      'silent',
      new Writable({
        write(_c, _e, cb) {
          cb();
        },
      }),
    );
    const built = createApp({
      knex: env.knex,
      redis: env.redis,
      logger,
      queues,
      config: { publicBaseUrl: 'http://api.example.test', rateLimit: { points: 100000, durationSeconds: 60 } },
    });
    router = built.router;
    const server = http.createServer(built.app.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    registerCleanup(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await queues.close();
    });
    const res = await fetch(`${url}/openapi.json`);
    doc = await res.json();
  });

  it('GET /openapi.json answers 200 application/json with an OpenAPI 3.1.0 document', async () => {
    const res = await fetch(`${url}/openapi.json`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    const body = await res.json();
    expect(body.openapi).to.equal('3.1.0');
    expect(body.info.title).to.be.a('string').and.not.equal('');
    expect(body.servers).to.deep.equal([{ url: 'http://api.example.test' }]);
  });

  it('passes the structural checks (fields, responses, path parameters, unique operationIds, $refs, schemas)', () => {
    expect(structuralProblems(doc)).to.deep.equal([]);
  });

  it('documents every route the router serves (a route missing from the doc fails here)', () => {
    const ops = routerOperations(router);
    expect(ops.length).to.be.greaterThan(0);
    const missing = ops
      .filter((o) => !isNonApiRoute(o.path))
      .filter((o) => !doc.paths[toOpenApiPath(o.path)]?.[o.method])
      .map((o) => `${o.method.toUpperCase()} ${o.path}`);
    expect(missing).to.deep.equal([]);
  });

  it('documents no route the router lacks', () => {
    const served = new Set(routerOperations(router).map((o) => `${o.method} ${toOpenApiPath(o.path)}`));
    const extra: string[] = [];
    for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(item))
        if (!served.has(`${method} ${path}`)) extra.push(`${method.toUpperCase()} ${path}`);
    }
    expect(extra).to.deep.equal([]);
  });

  it('keeps the route table order: document 1 and login endpoints first', () => {
    const documented = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([p, item]) =>
      Object.keys(item).map((m) => `${m} ${p}`),
    );
    const table = [...new Set(webRoutes.map((r) => toOpenApiPath(r.path)))];
    expect(Object.keys(doc.paths)).to.deep.equal(table);
    expect(documented.length).to.equal(webRoutes.length);
    const firstNonDoc1 = webRoutes.findIndex((r) => !['external', 'integrations', 'auth'].includes(r.tag));
    const lastDoc1 = webRoutes.map((r) => ['external', 'integrations', 'auth'].includes(r.tag)).lastIndexOf(true);
    if (firstNonDoc1 !== -1) expect(lastDoc1).to.be.lessThan(firstNonDoc1);
    expect(doc.paths['/api/auth/login'].post.security).to.deep.equal([]);
    expect(doc.paths['/api/integrations/api-tokens/{id}'].delete.parameters[0]).to.include({
      name: 'id',
      in: 'path',
      required: true,
    });
  });

  it("states each route's auth, and the error responses its flags imply", () => {
    for (const def of webRoutes) {
      const op = doc.paths[toOpenApiPath(def.path)][def.method];
      const where = `${def.method} ${def.path}`;
      const expected =
        def.auth === 'public'
          ? []
          : [
              {
                [def.auth === 'integration' ? 'integrationToken' : def.auth === 'pilot' ? 'pilotToken' : 'loginToken']:
                  [],
              },
            ];
      expect(op.security, where).to.deep.equal(expected);
      expect(Object.hasOwn(op.responses, '401'), where).to.equal(def.auth !== 'public' || !!def.responses[401]);
      expect(op.responses['500'].content['application/json'].schema, where).to.deep.equal({
        $ref: '#/components/schemas/Error',
      });
      if (def.params || def.query || def.body) expect(op.responses, where).to.have.property('422');
      if (def.rateLimited)
        expect(op.responses['429'].headers, where).to.have.all.keys(
          'X-Request-Id',
          'Retry-After',
          'X-RateLimit-Limit',
          'X-RateLimit-Remaining',
          'X-RateLimit-Reset',
        );
      if (def.idempotent)
        expect(
          op.parameters.map((p: any) => p.name),
          where,
        ).to.include('Idempotency-Key');
      if (def.body) expect(op.requestBody.content['application/json'].schema, where).to.be.an('object');
    }
    expect(doc.components.securitySchemes.integrationToken).to.include({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.loginToken).to.include({ type: 'http', scheme: 'bearer' });
  });

  it('GET /docs answers an HTML page that loads swagger-ui from local asset URLs only', async () => {
    const res = await fetch(`${url}/docs`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    const html = await res.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    for (const name of ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'docs-init.js']) {
      expect(
        refs.some((r) => r.split('?')[0] === `/docs/assets/${name}`),
        name,
      ).to.equal(true);
    }
    for (const ref of refs) expect(ref, 'no CDN').to.match(/^\/docs\/assets\//);
    const init = await (await fetch(`${url}/docs/assets/docs-init.js`)).text();
    expect(init).to.include("url: '/openapi.json'");
    expect(init).to.include('validatorUrl: null');
  });

  it('serves each asset the page references with its content type and caching headers', async () => {
    const html = await (await fetch(`${url}/docs`)).text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    const types: Record<string, RegExp> = { '.css': /^text\/css/, '.js': /^text\/javascript/, '.png': /^image\/png/ };
    for (const ref of refs) {
      const res = await fetch(url + ref);
      expect(res.status, ref).to.equal(200);
      const ext = ref.replace(/\?.*$/, '').match(/\.[a-z]+$/)![0];
      expect(res.headers.get('content-type'), ref).to.match(types[ext]);
      expect(res.headers.get('cache-control'), ref).to.match(/max-age=\d+/);
      const etag = res.headers.get('etag');
      expect(etag, ref).to.be.a('string');
      expect((await res.arrayBuffer()).byteLength, ref).to.be.greaterThan(0);
      // fetch() adds Cache-Control: no-cache to conditional requests unless told otherwise (Fetch spec)
      const again = await fetch(url + ref, { headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' } });
      expect(again.status, `${ref} revalidation`).to.equal(304);
    }
    const bundle = await (await fetch(`${url}/docs/assets/swagger-ui-bundle.js`)).text();
    expect(bundle).to.include('SwaggerUIBundle');
  });

  it('serves nothing outside the asset allow-list (path traversal answers 404)', async () => {
    const attempts = [
      '/docs/assets/..%2fpackage.json',
      '/docs/assets/..%2F..%2F..%2Fpackage.json',
      '/docs/assets/%2e%2e%2fpackage.json',
      '/docs/assets/package.json',
      '/docs/assets/index.html',
      '/docs/assets/swagger-initializer.js',
      '/docs/assets/swagger-ui-bundle.js.map',
      '/docs/assets/constructor',
      '/docs/assets/__proto__',
      '/docs/assets/..%5cpackage.json',
    ];
    for (const path of attempts) {
      const res = await fetch(url + path);
      expect(res.status, path).to.equal(404);
      const body = await res.json();
      expect(body.code, path).to.equal('NOT_FOUND');
    }
    expect(Object.keys(DOC_ASSETS)).to.include('swagger-ui-bundle.js');
  });

  it('keeps the non-API allow-list to browser pages and static files', () => {
    expect(NON_API_ROUTES.map((r) => r.path)).to.include.members(['/openapi.json', '/docs', '/docs/assets/']);
    for (const r of NON_API_ROUTES) expect(r.path, r.reason).not.to.match(/^\/api\//);
    expect(isNonApiRoute('/docs/assets/:file')).to.equal(true);
    expect(isNonApiRoute('/docsx')).to.equal(false);
  });
});
