import type Router from '@koa/router';
import type Koa from 'koa';
import compose from 'koa-compose';
import { bodyAjv, queryAjv, validate, type Schema } from './validation.js';

/** One documented response of a route. */
export interface ResponseDef {
  description: string;
  schema?: Schema;
  /**
   * Media types of a response that is not JSON (a file download): type -> schema of the content,
   * e.g. `{'image/png': {type: 'string', contentMediaType: 'image/png'}}`. Replaces the
   * application/json content in the OpenAPI document.
   */
  media?: Record<string, Schema>;
}

/** HTTP methods of the route tables. */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Loosely typed input of a route without a schema for it. */
export type Input = Record<string, unknown>;

/** The validated input a route's handler reads from ctx.state. */
export interface Validated<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/** A route's context with its validated input typed: `ctx.state.body.name` needs no cast. */
export type RouteContext<C, P, Q, B> = C & { state: Validated<P, Q, B> };

/** A Koa middleware of a service's context. */
export type Middleware<C> = (ctx: C, next: Koa.Next) => Promise<void>;

/**
 * A route of either service (DESIGN.md §3 "one route-table type"): the single table both the Koa
 * router and the OpenAPI document are built from. Paths use Koa syntax (`/customers/:id`).
 * `C` is the service's context; `P`, `Q`, `B` the validated params, query and body the handler
 * reads. Each service adds its own guard fields (api/routes.ts WebRoute, api/mail/routes.ts MailRoute).
 */
export interface RouteDef<C = Koa.Context, P = Input, Q = Input, B = Input> {
  method: HttpMethod;
  path: string;
  /** One line for the docs. */
  summary: string;
  description?: string;
  /** OpenAPI tag (module name). */
  tag: string;
  params?: Schema;
  query?: Schema;
  body?: Schema;
  /**
   * A multipart/form-data request body (file uploads), documented with this schema but neither
   * parsed nor validated by the mount: the handler streams it (api/http/multipart.ts). Exclusive
   * with `body`.
   */
  upload?: Schema;
  /**
   * This route's own body parser instead of the service's (e.g. a larger limit: the supplier
   * import takes 25 MB); runs at the same place.
   */
  bodyParser?: Koa.Middleware;
  /** Per-caller rate limit applies (documented with X-RateLimit-* headers). */
  rateLimited?: boolean;
  /** Honours the Idempotency-Key header (POSTs that create). */
  idempotent?: boolean;
  /** Success and route-specific error responses; each service's docs add the common errors. */
  responses: Record<number, ResponseDef>;
  handler(ctx: RouteContext<C, P, Q, B>): Promise<void> | void;
}

/** Any route of a service with context C (the element type of a route table). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table holds routes of different input types
export type AnyRoute<C> = RouteDef<C, any, any, any>;

/** How a service plugs its authentication and checks into mountRoutes. */
export interface MountOptions<C, D> {
  /** Middleware run before validation: authentication, rate limit, authorization, resolution of path records. */
  before(def: D): Middleware<C>[];
  /** Middleware run after validation, before the handler (idempotency, mailbox password). */
  after?(def: D): Middleware<C>[];
  /**
   * The body parser (api/http/body.ts jsonBody), run after `before`: a route's authentication and
   * checks come first, so the body of a client that is refused is never read (issue 7 item 6,
   * slow clients). Without it the route reads whatever an app-level parser left in ctx.request.body.
   */
  body?: Koa.Middleware;
  /**
   * Digits-only path ids (DESIGN.md §10 "path ids"): a path parameter whose params schema is an
   * integer matches only a segment of ASCII digits; any other segment falls through to the next
   * route (and finally 404), so `/tickets/incidents` never reaches `/tickets/:id`. Default false.
   */
  digitIds?: boolean;
}

/** Names of the path parameters whose params schema is `type: 'integer'`. */
export function integerParams(params: Schema | undefined): string[] {
  const props = (params?.properties ?? {}) as Record<string, { type?: unknown }>;
  return Object.entries(props)
    .filter(([, s]) => s?.type === 'integer')
    .map(([name]) => name);
}

/**
 * Registers a route table on a Koa router (both services), one composed middleware per route:
 * [digit-id match, else fall through] -> opts.before(def) -> opts.body (parse) ->
 * validate params, query and body (ajv; 422 through the error table) -> opts.after(def) -> handler.
 * When the route fails before its body was read completely, the answer carries `Connection: close`,
 * so a refused client cannot keep the connection busy by trickling the rest of its body.
 * Validated values land in ctx.state.params, ctx.state.query and ctx.state.body (the body is a
 * structured clone, so ajv's defaults never touch the parsed request).
 * @param router the service's router
 * @param defs the route table
 * @param opts the service's hooks
 */
export function mountRoutes<
  C extends Koa.ParameterizedContext<Partial<Validated<Input, Input, Input>>>,
  D extends AnyRoute<C>,
>(router: Router, defs: readonly D[], opts: MountOptions<C, D>): void {
  for (const def of defs) {
    const chain: Middleware<C>[] = [...opts.before(def)];
    if (def.bodyParser ?? opts.body) {
      const parse = (def.bodyParser ?? opts.body)!;
      chain.push(async (ctx, next) => parse(ctx, next));
    }
    chain.push(async (ctx, next) => {
      const raw: Record<string, string> = ctx.params;
      ctx.state.params = def.params ? validate(queryAjv, def.params, { ...raw }) : { ...raw };
      ctx.state.query = def.query ? validate(queryAjv, def.query, { ...ctx.query }) : { ...ctx.query };
      const body: unknown = ctx.request.body;
      if (def.body) {
        const copy = body && typeof body === 'object' && !Array.isArray(body) ? structuredClone(body) : (body ?? {});
        ctx.state.body = validate(bodyAjv, def.body, copy);
      } else ctx.state.body = {};
      return next();
    });
    if (opts.after) chain.push(...opts.after(def));
    chain.push(async (ctx) => {
      await def.handler(ctx as RouteContext<C, unknown, unknown, unknown>);
    });
    const run = compose(chain as compose.Middleware<C>[]);
    const ids = opts.digitIds ? integerParams(def.params) : [];
    // one middleware per route: a non-digit id calls next() and so falls through to the next matching route
    const route: Middleware<C> = async (ctx, next) => {
      const raw: Record<string, string> = ctx.params;
      if (ids.some((n) => raw[n] !== undefined && !/^[0-9]+$/.test(raw[n]))) return next();
      try {
        await run(ctx);
      } catch (e) {
        if (!ctx.req.complete) ctx.set('Connection', 'close');
        throw e;
      }
    };
    router[def.method](def.path, route);
  }
}
