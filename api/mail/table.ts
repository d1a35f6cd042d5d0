import { indexResult } from './schemas.js';
import { emailRoutes } from './routes-emails.js';
import { createRoutes } from './routes-create.js';
import { mailRoute, publicPath, type AnyMailRoute } from './routes.js';

const AUTH_TEXT =
  'Authorization: Bearer <API_KEY> on every endpoint except GET /api/v1. Endpoints that read or send mail ' +
  'also need the mailbox password in the X-Mailbox-Password header or the JSON body field mailbox_password; it is ' +
  'used for that request only and never stored.';

const indexRoute = mailRoute({
  method: 'get',
  path: '/api/v1',
  tag: 'index',
  scope: null,
  summary: 'API index: service, version, documentation links and every endpoint with its scope',
  responses: { 200: { description: 'The API index.', schema: indexResult } },
  handler(ctx) {
    const base = ctx.deps.config.mailBaseUrl;
    ctx.body = {
      ok: true,
      service: 'Mailbox API',
      version: 'v1',
      base_url: base,
      docs: `${base}/docs`,
      openapi: `${base}/openapi.json`,
      authentication: AUTH_TEXT,
      endpoints: mailRoutes.map((r) => ({ method: r.method.toUpperCase(), path: publicPath(r.path), scope: r.scope })),
    };
  },
});

/** The Mailbox API's route table, in document 3's order (+ the request poll of docs/mailbox-api.md). */
export const mailRoutes: AnyMailRoute[] = [indexRoute, ...emailRoutes, ...createRoutes];
