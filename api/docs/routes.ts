import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type Router from '@koa/router';
import type { AnyWebRoute } from '../http/web-route.js';
import { buildOpenApi, type OpenApiDocument, type OpenApiInfo, type OpenApiOptions } from '../http/openapi.js';
import type Koa from 'koa';

/**
 * GET /openapi.json, GET /docs and GET /docs/assets/:file (DESIGN.md §4 "OpenAPI"; issue 2 item 11).
 * /docs renders the document with swagger-ui-dist served from node_modules (no CDN). Only the file
 * names of DOC_ASSETS are served (no path from the request ever reaches the file system). These
 * paths are on the non-API allow-list (api/docs/non-api-routes.ts).
 */

const require = createRequire(import.meta.url);
/** Directory of the installed swagger-ui-dist package. */
export const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const SWAGGER_UI_VERSION: string = require('swagger-ui-dist/package.json').version;

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** Boots swagger-ui on the page (an external file, so the page needs no inline script). */
const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl], layout: 'StandaloneLayout',
  });
});
`;

/** The served files: URL name -> swagger-ui-dist file (or generated text) and content type. */
export const DOC_ASSETS: Readonly<Record<string, { file?: string; text?: string; type: string }>> = {
  'swagger-ui.css': { file: 'swagger-ui.css', type: CSS },
  'swagger-ui-bundle.js': { file: 'swagger-ui-bundle.js', type: JS },
  'swagger-ui-standalone-preset.js': { file: 'swagger-ui-standalone-preset.js', type: JS },
  'favicon-32x32.png': { file: 'favicon-32x32.png', type: 'image/png' },
  'docs-init.js': { text: INIT_JS, type: JS },
};

const cache = new Map<string, Buffer>();

/** Reads an allow-listed asset once and keeps it in memory. @returns null for any other name */
function assetBody(name: string): Buffer | null {
  if (!Object.hasOwn(DOC_ASSETS, name)) return null;
  let buf = cache.get(name);
  if (!buf) {
    const a = DOC_ASSETS[name];
    buf = a.text !== undefined ? Buffer.from(a.text) : fs.readFileSync(path.join(SWAGGER_UI_DIR, a.file!));
    cache.set(name, buf);
  }
  return buf;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The /docs page: swagger-ui from /docs/assets, version-stamped URLs for long caching. */
export function docsHtml(title: string): string {
  const v = `?v=${encodeURIComponent(SWAGGER_UI_VERSION)}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)}</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css${v}">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png${v}">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js${v}"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js${v}"></script>
  <script src="/docs/assets/docs-init.js${v}"></script>
</body>
</html>
`;
}

/** Options of mountDocs: the route table and what the document says about the service. */
export interface DocsOptions {
  routes: readonly AnyWebRoute[];
  info: OpenApiInfo;
  options?: OpenApiOptions;
}

/**
 * Registers GET /openapi.json, GET /docs and GET /docs/assets/:file on a router. The document is
 * built once, here, so a route table the builder rejects stops the service at start.
 * @returns the document (for tests and the CLI)
 * @throws Error from buildOpenApi (duplicate route or operationId, params not in the path)
 */
export function mountDocs(router: Router, opts: DocsOptions): OpenApiDocument {
  const doc = buildOpenApi(opts.routes, opts.info, opts.options);
  serveDocs(router, doc, opts.info.title, opts.info.serverUrl);
  return doc;
}

/**
 * Registers GET /openapi.json, GET /docs and GET /docs/assets/:file for an already built document
 * (the web service and the Mailbox API both serve their docs through this).
 * @param router the service's router (paths are absolute)
 * @param doc the OpenAPI 3.1 document
 * @param title service title shown in the page title
 * @param serverUrl the service's announced origin (allowed in connect-src for "Try it out")
 */
export function serveDocs(router: Router, doc: OpenApiDocument, title: string, serverUrl: string): void {
  const json = JSON.stringify(doc);
  const html = docsHtml(`${title} — API docs`);
  let apiOrigin = '';
  try {
    apiOrigin = new URL(serverUrl).origin;
  } catch {
    /* relative server URL: same origin */
  }
  const csp = [
    "default-src 'self'",
    "img-src 'self' data:",
    "style-src 'self' 'unsafe-inline'",
    "script-src 'self'",
    `connect-src 'self'${apiOrigin ? ` ${apiOrigin}` : ''}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');

  router.get('/openapi.json', (ctx: Koa.Context) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'application/json';
    ctx.body = json;
  });
  router.get('/docs', (ctx: Koa.Context) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html;
  });
  router.get('/docs/assets/:file', (ctx: Koa.Context) => {
    const name = String(ctx.params.file ?? '');
    const body = assetBody(name);
    if (!body) return; // not allow-listed: the errors middleware answers 404 NOT_FOUND
    ctx.status = 200;
    ctx.set('Cache-Control', 'public, max-age=604800');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.etag = `"${SWAGGER_UI_VERSION}-${name}"`;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.type = DOC_ASSETS[name].type;
    ctx.body = body;
  });
}
