import type { AnyRoute } from './route.js';
import type { AnyWebRoute } from './web-route.js';
import type { Schema } from './validation.js';
import { objectProperties, toOpenApiSchema } from './openapi-schema.js';
import { RATE_LIMIT_HEADERS, webCommonErrors, type CommonErrorDef, type HeaderDef } from './openapi-errors.js';
import { errorBody } from '../shared/schemas.js';

/**
 * OpenAPI 3.1 document built from a route table (DESIGN.md §4 "OpenAPI"; issue 2 item 11). The same
 * RouteDef objects build the Koa router (api/http/route.ts), so a route cannot exist without being
 * documented. Reused by the Mailbox API service with its own route table and options.
 */

/** What the document says about the service. */
export interface OpenApiInfo {
  title: string;
  version: string;
  /** Base URL the service announces (PUBLIC_BASE_URL / MAIL_BASE_URL). */
  serverUrl: string;
  description?: string;
}

/** Any route of any service (the builder reads only the shared RouteDef fields). */
type DocRoute = AnyRoute<never>;

/**
 * Options of the builder; D is the service's route type (its guard fields decide the common errors
 * and the security scheme). The defaults are the web service's.
 */
export interface OpenApiOptions<D extends DocRoute = AnyWebRoute> {
  /** Error body schema, published as components.schemas.Error (default: api/shared/schemas.ts errorBody). */
  errorSchema?: Schema;
  /** The common error responses of a route (default: webCommonErrors). Schemas may be errorSchema. */
  commonErrors?: (def: D, hasPathParams: boolean) => Record<number, CommonErrorDef>;
  /** Security schemes (default: integrationToken and loginToken, both bearer). */
  securitySchemes?: Record<string, Record<string, unknown>>;
  /** Name of the security scheme a route needs, or null for a public route (default: by def.auth). */
  securityFor?: (def: D) => string | null;
  /** Whether a route is rate limited (documents X-RateLimit-* and 429; default: its rateLimited flag). */
  rateLimitedFor?: (def: D) => boolean;
  /** Descriptions of tags, by tag name. */
  tagDescriptions?: Record<string, string>;
}

/** An OpenAPI 3.1 operation as this builder writes it. */
export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: {
    name: string;
    in: 'path' | 'query' | 'header';
    required: boolean;
    description?: string;
    schema: unknown;
  }[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<
    string,
    { description: string; headers: Record<string, unknown>; content?: Record<string, { schema: unknown }> }
  >;
}

/** The document served at /openapi.json. */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
    headers: Record<string, unknown>;
  };
}

const PARAM = /[:*]([A-Za-z_$][A-Za-z0-9_$]*)/g;

/**
 * Names of the parameters of a Koa (path-to-regexp v8) path, in order.
 * @throws Error for optional groups (`{...}`), which OpenAPI paths cannot express
 */
export function pathParamNames(koaPath: string): string[] {
  if (/[{}()]/.test(koaPath))
    throw new Error(`OpenAPI: path ${koaPath} uses optional or regex segments; define one route per form`);
  return [...koaPath.matchAll(PARAM)].map((m) => m[1]);
}

/** Koa path -> OpenAPI path template: `/x/:id` -> `/x/{id}`, wildcard `/x/*rest` -> `/x/{rest}`. */
export function toOpenApiPath(koaPath: string): string {
  pathParamNames(koaPath);
  return koaPath.replace(PARAM, '{$1}');
}

function pascal(word: string): string {
  return word
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');
}

/** Stable operationId from method and path: `get /api/tokens/:id` -> `getApiTokensById`. */
export function operationIdOf(method: string, koaPath: string): string {
  const parts = koaPath
    .split('/')
    .filter(Boolean)
    .map((seg) => {
      const p = /^[:*]([A-Za-z_$][A-Za-z0-9_$]*)$/.exec(seg);
      return p ? `By${pascal(p[1])}` : pascal(seg);
    });
  return method.toLowerCase() + parts.join('');
}

const DEFAULT_SCHEMES: Record<string, Record<string, unknown>> = {
  integrationToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'ispi_<id>_<secret><checksum>',
    description:
      'Integration token issued by a tenant admin (POST /api/integrations/api-tokens). Send `Authorization: Bearer <token>`.',
  },
  loginToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'ispl_<id>_<secret><checksum>',
    description: "Login token from POST /api/auth/login. Platform routes need a platform admin's login token.",
  },
  pilotToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'ispp_<id>_<secret><checksum>',
    description:
      'Pilot token of a tenant database (POST /api/platform/tenants/{tenant}/provisioning/tenant-db/pilot-login, 60 minutes); only the /api/tenant-db-pilot smoke routes take it.',
  },
};

function defaultSecurityFor(def: AnyWebRoute): string | null {
  if (def.auth === 'public') return null;
  if (def.auth === 'pilot') return 'pilotToken';
  return def.auth === 'integration' ? 'integrationToken' : 'loginToken';
}

function describe(s: Schema): { schema: Schema; description?: string } {
  const schema = toOpenApiSchema(s) as Schema;
  const description = typeof schema.description === 'string' ? schema.description : undefined;
  if (description !== undefined) delete schema.description;
  return { schema, description };
}

/**
 * Builds the OpenAPI 3.1 document of a route table. Order of paths and tags follows the table.
 * Per route: path (Koa -> template), operationId (method + path), summary, description, tag,
 * security (by auth), parameters (path from `params` plus any path name it lacks; query from
 * `query`; the Idempotency-Key header when idempotent), requestBody (application/json from `body`,
 * multipart/form-data from `upload`),
 * responses (the route's own, then the common errors of options.commonErrors, with the error body
 * schema and the rate-limit headers on rate-limited routes).
 * @param routes the route table (e.g. api/routes.ts webRoutes)
 * @param info title, version, server URL and description
 * @returns the document (plain JSON)
 * @throws Error when two routes share method+path or operationId, or a params property is not in the path
 */
export function buildOpenApi<D extends DocRoute>(
  routes: readonly D[],
  info: OpenApiInfo,
  options: OpenApiOptions<D> & Required<Pick<OpenApiOptions<D>, 'commonErrors' | 'securityFor'>>,
): OpenApiDocument;
export function buildOpenApi(
  routes: readonly AnyWebRoute[],
  info: OpenApiInfo,
  options?: OpenApiOptions<AnyWebRoute>,
): OpenApiDocument;
export function buildOpenApi(
  routes: readonly AnyWebRoute[],
  info: OpenApiInfo,
  options: OpenApiOptions<AnyWebRoute> = {},
): OpenApiDocument {
  const errorSchema = options.errorSchema ?? errorBody;
  const commonErrors = options.commonErrors ?? webCommonErrors;
  const securityFor = options.securityFor ?? defaultSecurityFor;
  const rateLimitedFor = options.rateLimitedFor ?? ((d: AnyWebRoute) => !!d.rateLimited);
  const headers: Record<string, HeaderDef> = {
    'X-Request-Id': {
      description: 'Request id; also in the server log line of this request.',
      schema: { type: 'string' },
    },
    'Idempotent-Replayed': {
      description: '`true` when the response replays the first request with this Idempotency-Key.',
      schema: { type: 'string', enum: ['true'] },
    },
    ...RATE_LIMIT_HEADERS,
  };
  const used = new Set<string>();
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
    servers: [{ url: info.serverUrl }],
    tags: [],
    paths: {},
    components: {
      schemas: { Error: toOpenApiSchema(errorSchema) },
      securitySchemes: options.securitySchemes ?? DEFAULT_SCHEMES,
      headers: {},
    },
  };
  const opIds = new Set<string>();
  for (const def of routes) {
    const path = toOpenApiPath(def.path);
    const names = pathParamNames(def.path);
    const operationId = operationIdOf(def.method, def.path);
    const item = (doc.paths[path] ??= {});
    if (item[def.method]) throw new Error(`OpenAPI: ${def.method.toUpperCase()} ${def.path} is defined twice`);
    if (opIds.has(operationId))
      throw new Error(`OpenAPI: operationId ${operationId} (${def.method.toUpperCase()} ${def.path}) is not unique`);
    opIds.add(operationId);
    if (!doc.tags.some((t) => t.name === def.tag)) {
      const description = options.tagDescriptions?.[def.tag];
      doc.tags.push(description ? { name: def.tag, description } : { name: def.tag });
    }

    const parameters: NonNullable<OpenApiOperation['parameters']> = [];
    const pathProps = def.params ? objectProperties(def.params).properties : {};
    for (const name of Object.keys(pathProps)) {
      if (!names.includes(name))
        throw new Error(
          `OpenAPI: params property ${name} of ${def.method.toUpperCase()} ${def.path} is not in the path`,
        );
    }
    for (const name of names) {
      const { schema, description } = pathProps[name]
        ? describe(pathProps[name])
        : { schema: { type: 'string' }, description: undefined };
      parameters.push({ name, in: 'path', required: true, ...(description ? { description } : {}), schema });
    }
    if (def.query) {
      const { properties, required } = objectProperties(def.query);
      for (const [name, s] of Object.entries(properties)) {
        const { schema, description } = describe(s);
        parameters.push({
          name,
          in: 'query',
          required: required.has(name),
          ...(description ? { description } : {}),
          schema,
        });
      }
    }
    if (def.idempotent) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Optional. A retry with the same key and body within 24 h replays the first response and creates nothing; the same key with another body answers 409.',
        schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
      });
    }

    const responses: OpenApiOperation['responses'] = {};
    const common = commonErrors(def, names.length > 0);
    const statuses = [...new Set([...Object.keys(def.responses), ...Object.keys(common)].map(Number))].sort(
      (a, b) => a - b,
    );
    for (const status of statuses) {
      const own = def.responses[status];
      const base = common[status];
      const schema = own?.schema ?? base?.schema ?? (status >= 400 ? errorSchema : undefined);
      const headerNames = ['X-Request-Id', ...(rateLimitedFor(def) ? Object.keys(RATE_LIMIT_HEADERS) : [])];
      if (def.idempotent && status < 300) headerNames.push('Idempotent-Replayed');
      for (const [n, h] of Object.entries(base?.headers ?? {})) {
        headers[n] ??= h;
        headerNames.push(n);
      }
      const refs = [...new Set(headerNames)];
      refs.forEach((n) => used.add(n));
      responses[String(status)] = {
        description: own?.description ?? base!.description,
        headers: Object.fromEntries(refs.map((n) => [n, { $ref: `#/components/headers/${n}` }])),
        ...(own?.media
          ? {
              content: Object.fromEntries(
                Object.entries(own.media).map(([type, m]) => [type, { schema: toOpenApiSchema(m) }]),
              ),
            }
          : schema
            ? {
                content: {
                  'application/json': {
                    schema: schema === errorSchema ? { $ref: '#/components/schemas/Error' } : toOpenApiSchema(schema),
                  },
                },
              }
            : {}),
      };
    }

    const scheme = securityFor(def);
    item[def.method] = {
      operationId,
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      tags: [def.tag],
      security: scheme ? [{ [scheme]: [] }] : [],
      ...(parameters.length ? { parameters } : {}),
      ...(def.body
        ? {
            requestBody: {
              required: objectProperties(def.body).required.size > 0,
              content: { 'application/json': { schema: toOpenApiSchema(def.body) } },
            },
          }
        : def.upload
          ? {
              requestBody: {
                required: true,
                content: { 'multipart/form-data': { schema: toOpenApiSchema(def.upload) } },
              },
            }
          : {}),
      responses,
    };
  }
  for (const name of used)
    doc.components.headers[name] = { description: headers[name].description, schema: headers[name].schema };
  return doc;
}
