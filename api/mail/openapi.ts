import { createRequire } from 'node:module';
import Router from '@koa/router';
import { buildOpenApi, type OpenApiDocument } from '../http/openapi.js';
import { RATE_LIMIT_HEADERS, type CommonErrorDef } from '../http/openapi-errors.js';
import { serveDocs } from '../docs/routes.js';
import { MAIL_ERRORS, type MailErrorCode } from './errors.js';
import { mailErrorBody } from './schemas.js';
import type { AnyMailRoute } from './routes.js';

/**
 * /openapi.json (OpenAPI 3.1) and /docs (swagger-ui served from node_modules/swagger-ui-dist) of
 * the Mailbox API, built from its route table (api/mail/routes.ts) with the web service's builder
 * (api/http/openapi.ts) and this service's security scheme, error body and common errors.
 */

const require = createRequire(import.meta.url);
const VERSION: string = require('../../package.json').version;

const DESCRIPTION = `Read, reply to and send e-mail of registered mailboxes over IMAP/SMTP, and create mailboxes in
domains managed by a mail-hosting control panel (document 3).

**Authentication.** \`Authorization: Bearer <API_KEY>\` (an operator creates keys in the dashboard at /login;
a key is limited to one domain, chosen mailboxes and scopes). Endpoints that touch a mailbox also need
the mailbox password in the \`X-Mailbox-Password\` header or the JSON body field \`mailbox_password\`
(the header wins). It is used for that request only and never stored.

**Errors** answer \`{ok: false, error, message}\` (+ \`errors\` field -> reasons on invalid_request,
+ \`request_id\` on server_error). Codes: unauthorized 401, mailbox_auth_failed 401, forbidden 403,
mailbox_not_allowed 403, domain_not_allowed 403, mailbox_not_found 404, domain_not_found 404,
email_not_found 404, request_not_found 404, mailbox_exists 409, panel_not_configured 409,
payload_too_large 413, invalid_request 422, mailbox_password_required 422, rate_limited 429,
headers_too_large 431, server_error 500, mail_server_error 502, queue_unavailable 503; malformed HTTP
framing (a duplicated Content-Length, Transfer-Encoding with Content-Length) is 400 bad_request and a
request not received in time 408 request_timeout.

**Order of checks:** unauthorized, rate_limited, forbidden (scope), mailbox_not_found /
domain_not_found, mailbox_not_allowed / domain_not_allowed, invalid_request, mailbox_password_required,
then the mail server (mailbox_auth_failed, email_not_found, mail_server_error).

**Rate limit:** 120 requests a minute per API key (429 with Retry-After and X-RateLimit-* headers).`;

const ERR = (code: MailErrorCode, why?: string) => `\`${code}\`: ${why ?? MAIL_ERRORS[code].message}`;

/**
 * The error responses a mail route can produce, decided by its flags (see mountMailRoutes).
 * @returns status -> response with the mail error body
 */
export function mailCommonErrors(def: AnyMailRoute): Record<number, CommonErrorDef> {
  const out: Record<number, CommonErrorDef> = {};
  const add = (status: number, line: string) => {
    out[status] = { description: out[status] ? `${out[status].description}; ${line}` : line };
  };
  if (def.scope) {
    add(401, ERR('unauthorized'));
    if (def.password) add(401, ERR('mailbox_auth_failed'));
    add(403, ERR('forbidden', `the API key lacks the scope ${def.scope}.`));
  }
  if (def.resolve === 'mailbox') {
    add(403, ERR('mailbox_not_allowed'));
    add(404, ERR('mailbox_not_found'));
  }
  if (def.resolve === 'domain') {
    add(403, ERR('domain_not_allowed'));
    add(404, ERR('domain_not_found'));
  }
  if (def.body) add(413, ERR('payload_too_large', 'the JSON body exceeds 1 MB.'));
  if (def.params || def.query || def.body)
    add(422, ERR('invalid_request', 'invalid input; `errors` maps each field to its reasons.'));
  if (def.password) add(422, ERR('mailbox_password_required'));
  if (def.scope) {
    out[429] = {
      description: ERR('rate_limited'),
      headers: {
        'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
        ...RATE_LIMIT_HEADERS,
      },
    };
  }
  add(431, ERR('headers_too_large', 'the request line and headers exceed 16 KB (answered before routing).'));
  add(500, ERR('server_error', 'unexpected failure; the body carries the request id that is also in the server log.'));
  if (def.password) add(502, ERR('mail_server_error'));
  for (const r of Object.values(out)) r.schema = mailErrorBody;
  return out;
}

/**
 * Builds the Mailbox API's OpenAPI 3.1 document: every route of the table, the `apiKey` bearer
 * scheme, the X-Mailbox-Password header on the routes that need the mailbox password.
 * @param routes the route table (api/mail/routes.ts mailRoutes)
 * @param serverUrl MAIL_BASE_URL
 * @throws Error from buildOpenApi (duplicate route or operationId)
 */
export function buildMailOpenApi(routes: readonly AnyMailRoute[], serverUrl: string): OpenApiDocument {
  const doc = buildOpenApi(
    routes,
    { title: 'Mailbox API', version: VERSION, serverUrl, description: DESCRIPTION },
    {
      errorSchema: mailErrorBody,
      commonErrors: mailCommonErrors,
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'mbxk_<id>_<secret><checksum>',
          description:
            'API key created by an operator in the dashboard (/login). Send `Authorization: Bearer <API_KEY>`.',
        },
      },
      securityFor: (def) => (def.scope === null ? null : 'apiKey'),
      rateLimitedFor: (def) => def.scope !== null,
      tagDescriptions: {
        index: 'Discovery.',
        mailboxes: "The key's mailboxes; creating mailboxes in the key's domain.",
        emails: "Reading, replying and sending over the mailbox's IMAP and SMTP (mailbox password required).",
      },
    },
  );
  for (const def of routes) {
    if (!def.password) continue;
    const op = doc.paths[def.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')][def.method];
    (op.parameters ??= []).push({
      name: 'X-Mailbox-Password',
      in: 'header',
      required: false,
      description:
        'The mailbox password (or send `mailbox_password` in the JSON body). Required one way or the other: without it the answer is 422 mailbox_password_required.',
      schema: { type: 'string' },
    });
  }
  return doc;
}

/**
 * A router serving GET /openapi.json, GET /docs and GET /docs/assets/:file (only the allow-listed
 * swagger-ui files of api/docs/routes.ts DOC_ASSETS; no request path reaches the file system).
 * The document is built once, here.
 * @returns the router and the document
 */
export function createMailDocsRouter(
  routes: readonly AnyMailRoute[],
  serverUrl: string,
): { router: Router; doc: OpenApiDocument } {
  const doc = buildMailOpenApi(routes, serverUrl);
  const router = new Router();
  serveDocs(router, doc, 'Mailbox API', serverUrl);
  return { router, doc };
}
