/**
 * Import rules ("arrows point down", DESIGN.md §3), checked by `npm run deps:check`:
 *
 *   bin/ -> api/;  workers/ -> jobs/ -> services and domain modules (api/<module>/*.ts) -> db/, lib/
 *
 * Paths are relative to the repository root. Type-only imports count too (tsPreCompilationDeps):
 * a type import of middleware is still a wrong arrow.
 */

/** The HTTP layer: what jobs/, db/seeds/ and workers/ must never import. Services and domain modules are fine. */
const HTTP_LAYER = [
  '^api/http/',
  '^api/middleware/',
  '^api/mail/middleware/',
  '^api/errors[.]ts$',
  '^api/mail/errors[.]ts$',
  '^api/(mail/)?(app|server|routes|context)[.]ts$',
  '^api/[^/]+/routes[^/]*[.]ts$',
  '^api/[^/]+/[^/]+/routes[^/]*[.]ts$',
];

/** Services: api/<module>/service.ts and api/<area>/<module>/service.ts. */
const SERVICES = ['^api/[^/]+/service[.]ts$', '^api/[^/]+/[^/]+/service[.]ts$'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'jobs-not-to-http',
      comment:
        'jobs/, workers/ and db/seeds/ use services and domain modules, never the HTTP layer (api/http, middleware, ' +
        'api/errors, app, server, routes, context). Jobs get their own error classes (DESIGN.md §3).',
      severity: 'error',
      from: { path: '^(jobs|workers|db/seeds)/' },
      to: { path: HTTP_LAYER },
    },
    {
      name: 'services-not-to-middleware',
      comment: 'Services (api/*/service.ts, api/*/*/service.ts) never import middleware (DESIGN.md §3).',
      severity: 'error',
      from: { path: SERVICES },
      to: { path: ['^api/middleware/', '^api/mail/middleware/'] },
    },
    {
      name: 'lower-layers-not-up',
      comment: 'lib/ and db/ (except db/seeds/) never import api/, jobs/, workers/ or bin/.',
      severity: 'error',
      from: { path: '^(lib|db)/', pathNot: '^db/seeds/' },
      to: { path: '^(api|jobs|workers|bin)/' },
    },
    {
      name: 'jobs-not-up',
      comment: 'jobs/ never imports workers/ or bin/ (workers/ -> jobs/, not the other way).',
      severity: 'error',
      from: { path: '^jobs/' },
      to: { path: '^(workers|bin)/' },
    },
    {
      name: 'api-not-to-workers-or-bin',
      comment: 'api/ never imports workers/ or bin/ (bin/ -> api/, not the other way).',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(workers|bin)/' },
    },
    {
      name: 'not-to-test',
      comment: 'Nothing imports test/ except test/.',
      severity: 'error',
      from: { pathNot: '^test/' },
      to: { path: '^test/' },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'Every relative import resolves to a file. Also guards this check itself: if `.js` specifiers stopped ' +
        'resolving to `.ts` files, every arrow would be invisible and the rules above would pass vacuously.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-circular',
      comment: 'Runtime import cycles (type-only imports ignored): ESM evaluation order bugs waiting to happen.',
      severity: 'warn',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['^node_modules/', '^[.]data/', '^[.]test-data/', '^coverage/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.d.ts', '.js', '.cjs', '.mjs', '.json'],
    },
    skipAnalysisNotInRules: true,
    cache: false,
  },
};
