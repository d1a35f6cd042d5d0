import { expect } from 'chai';
import type { AnyWebRoute } from '../../../api/http/web-route.js';
import { buildOpenApi, operationIdOf, toOpenApiPath } from '../../../api/http/openapi.js';
import { toOpenApiSchema } from '../../../api/http/openapi-schema.js';
import { DEMO_BLOCKED_ACTIONS } from '../../../api/middleware/demo-guard.js';
import { idParams, pageQuery } from '../../../api/shared/schemas.js';
import { structuralProblems } from './openapi-check.js';

const info = { title: 'Test API', version: '9.9.9', serverUrl: 'http://x.test' };
const noop = () => undefined;

function route(over: Partial<AnyWebRoute>): AnyWebRoute {
  return {
    method: 'get',
    path: '/api/things',
    summary: 'Things',
    tag: 'things',
    auth: 'login',
    responses: { 200: { description: 'OK' } },
    handler: noop,
    ...over,
  };
}

describe('buildOpenApi (api/http/openapi.ts)', () => {
  it('converts Koa paths to templates and derives stable operationIds', () => {
    expect(toOpenApiPath('/api/external/v1/customers/:id')).to.equal('/api/external/v1/customers/{id}');
    expect(toOpenApiPath('/a/:tenant_id/b/:id')).to.equal('/a/{tenant_id}/b/{id}');
    expect(operationIdOf('get', '/api/external/v1/customers/:id')).to.equal('getApiExternalV1CustomersById');
    expect(operationIdOf('delete', '/api/integrations/api-tokens/:id')).to.equal('deleteApiIntegrationsApiTokensById');
    expect(() => toOpenApiPath('/a{/:id}')).to.throw(/optional/);
  });

  it('turns params and query schemas into parameters with schema, required flag and description', () => {
    const query = pageQuery(15, {
      status: { type: 'string', enum: ['active', 'suspended'], description: 'Filter by status' },
    });
    const doc = buildOpenApi([route({ path: '/api/things/:id', params: idParams, query })], info);
    const op = doc.paths['/api/things/{id}'].get;
    expect(op.parameters).to.deep.equal([
      { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1, maximum: 2147483647 } },
      {
        name: 'page',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 1000000, default: 1 },
      },
      {
        name: 'per_page',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: 100, default: 15 },
      },
      {
        name: 'status',
        in: 'query',
        required: false,
        description: 'Filter by status',
        schema: { type: 'string', enum: ['active', 'suspended'] },
      },
    ]);
    expect(structuralProblems(doc)).to.deep.equal([]);
  });

  it('adds a path parameter the params schema lacks, and rejects params that are not in the path', () => {
    const doc = buildOpenApi([route({ path: '/api/things/:slug' })], info);
    expect(doc.paths['/api/things/{slug}'].get.parameters).to.deep.equal([
      { name: 'slug', in: 'path', required: true, schema: { type: 'string' } },
    ]);
    expect(() => buildOpenApi([route({ path: '/api/things', params: idParams })], info)).to.throw(/params property id/);
  });

  it('rejects duplicate routes', () => {
    expect(() => buildOpenApi([route({}), route({})], info)).to.throw(/defined twice/);
  });

  it('derives the common error responses from the route flags', () => {
    const body = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
    const blocked = DEMO_BLOCKED_ACTIONS[0];
    const doc = buildOpenApi(
      [
        route({ path: '/pub', auth: 'public' }),
        route({ path: '/ext/:id', auth: 'integration', params: idParams, rateLimited: true }),
        route({
          method: 'post',
          path: '/ext',
          auth: 'integration',
          access: 'write',
          body,
          idempotent: true,
          demoAction: blocked,
          rateLimited: true,
          responses: { 201: { description: 'Created', schema: body } },
        }),
        route({ path: '/adm', auth: 'login', permission: 'sales.view' }),
      ],
      info,
    );
    const codes = (p: string, m = 'get') => Object.keys(doc.paths[p][m].responses);
    expect(codes('/pub')).to.deep.equal(['200', '431', '500']);
    expect(codes('/ext/{id}')).to.deep.equal(['200', '401', '403', '404', '422', '429', '431', '500']);
    expect(codes('/ext', 'post')).to.deep.equal(['201', '401', '403', '409', '413', '422', '429', '431', '500']);
    expect(codes('/adm')).to.deep.equal(['200', '401', '403', '431', '500']);
    const post = doc.paths['/ext'].post;
    expect(post.responses['403'].description).to.include('demo_guard_blocked').and.include('read_write');
    expect(doc.paths['/adm'].get.responses['403'].description)
      .to.include('sales.view')
      .and.not.include('demo_guard_blocked');
    expect(post.responses['429'].headers).to.have.all.keys(
      'X-Request-Id',
      'Retry-After',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    );
    expect(post.responses['201'].headers).to.have.all.keys(
      'X-Request-Id',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Idempotent-Replayed',
    );
    expect(post.responses['422'].content!['application/json'].schema).to.deep.equal({
      $ref: '#/components/schemas/Error',
    });
    expect(post.requestBody).to.deep.equal({ required: true, content: { 'application/json': { schema: body } } });
    expect(post.parameters!.map((p) => `${p.in}:${p.name}`)).to.deep.equal(['header:Idempotency-Key']);
    expect(post.security).to.deep.equal([{ integrationToken: [] }]);
    expect(doc.paths['/adm'].get.security).to.deep.equal([{ loginToken: [] }]);
    expect(doc.paths['/pub'].get.security).to.deep.equal([]);
    expect(doc.components.schemas.Error).to.have.nested.property('properties.code.type', 'string');
    expect(structuralProblems(doc)).to.deep.equal([]);
  });

  it("lets a route's own response override a common one by status, keeping the error schema", () => {
    const doc = buildOpenApi(
      [
        route({
          method: 'post',
          path: '/login',
          auth: 'public',
          responses: { 200: { description: 'OK' }, 401: { description: 'Wrong e-mail or password' } },
        }),
      ],
      info,
    );
    const r401 = doc.paths['/login'].post.responses['401'];
    expect(r401.description).to.equal('Wrong e-mail or password');
    expect(r401.content!['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Error' });
    expect(doc.paths['/login'].post.responses['200']).not.to.have.property('content');
  });

  it('orders tags and paths as the route table does', () => {
    const doc = buildOpenApi(
      [
        route({ path: '/b', tag: 'external' }),
        route({ path: '/a', tag: 'auth' }),
        route({ path: '/c', tag: 'external' }),
      ],
      info,
      { tagDescriptions: { auth: 'Login' } },
    );
    expect(doc.tags).to.deep.equal([{ name: 'external' }, { name: 'auth', description: 'Login' }]);
    expect(Object.keys(doc.paths)).to.deep.equal(['/b', '/a', '/c']);
  });
});

describe('toOpenApiSchema (api/http/openapi-schema.ts)', () => {
  it('drops ajv-only keywords and $data references at any depth, keeping property names that look like keywords', () => {
    const s = {
      $id: 'x',
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      errorMessage: 'bad',
      properties: {
        $id: { type: 'string' },
        typeof: { type: 'string', default: 'a' },
        n: { type: 'integer', maximum: { $data: '1/max' }, instanceof: 'Date' },
      },
      additionalProperties: { type: 'string', transform: ['trim'] },
    };
    expect(toOpenApiSchema(s)).to.deep.equal({
      type: 'object',
      properties: { $id: { type: 'string' }, typeof: { type: 'string', default: 'a' }, n: { type: 'integer' } },
      additionalProperties: { type: 'string' },
    });
    expect(s.properties.n).to.have.property('instanceof', 'Date');
  });

  it('rewrites draft-07 and OpenAPI 3.0 forms into 2020-12', () => {
    expect(
      toOpenApiSchema({ type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false }),
    ).to.deep.equal({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], items: false });
    expect(toOpenApiSchema({ type: 'string', nullable: true, example: 'AA:BB:CC:DD:EE:FF' })).to.deep.equal({
      type: ['string', 'null'],
      examples: ['AA:BB:CC:DD:EE:FF'],
    });
    expect(
      toOpenApiSchema({
        type: 'object',
        dependencies: { a: ['b'], c: { required: ['d'] } },
        definitions: { x: { type: 'string', $async: true } },
      }),
    ).to.deep.equal({
      type: 'object',
      $defs: { x: { type: 'string' } },
      dependentRequired: { a: ['b'] },
      dependentSchemas: { c: { required: ['d'] } },
    });
    expect(
      toOpenApiSchema({
        if: { properties: { t: { const: 'dhcp' } } },
        then: { required: ['mac_address'] },
        anyOf: [{ regexp: '/a/' }],
      }),
    ).to.deep.equal({ if: { properties: { t: { const: 'dhcp' } } }, then: { required: ['mac_address'] }, anyOf: [{}] });
  });
});
