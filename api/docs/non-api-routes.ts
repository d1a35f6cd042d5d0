/**
 * The documented allow-list of router paths that are NOT part of the OpenAPI document (DESIGN.md §4
 * "every route appears there, checked by a test"). Everything else the web router serves must be a
 * RouteDef in api/routes.ts and so appear in /openapi.json; test/api/docs/openapi.test.ts enforces it.
 * Only browser pages and static files belong here, never a JSON API.
 */
export interface NonApiRoute {
  /** Exact Koa path, or a prefix when `prefix` is true. */
  path: string;
  prefix?: boolean;
  /** Why it is not in the OpenAPI document. */
  reason: string;
}

/** The allow-list itself (browser pages and static files only). */
export const NON_API_ROUTES: readonly NonApiRoute[] = [
  { path: '/openapi.json', reason: 'the OpenAPI document itself' },
  { path: '/docs', reason: 'HTML page rendering /openapi.json with swagger-ui' },
  { path: '/docs/assets/', prefix: true, reason: 'swagger-ui static files served from node_modules/swagger-ui-dist' },
  {
    path: '/admin/',
    prefix: true,
    reason: 'bull-board browser pages, its own XHR endpoints and its operator login form (session cookie)',
  },
];

/**
 * Whether a router path (Koa syntax, as in router.stack layer.path) is on the non-API allow-list.
 * @param path e.g. `/docs/assets/:file`
 */
export function isNonApiRoute(path: string): boolean {
  return NON_API_ROUTES.some((r) => (r.prefix ? path.startsWith(r.path) : path === r.path));
}
