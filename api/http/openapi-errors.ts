import type { ResponseDef } from './route.js';
import type { AnyWebRoute } from './web-route.js';
import { isDemoBlocked } from '../middleware/demo-guard.js';
import { errorBody } from '../shared/schemas.js';

/** A documented response header (OpenAPI Header Object without name/in). */
export interface HeaderDef {
  description: string;
  schema: Record<string, unknown>;
}

/** A common error response: its description plus optional response headers. */
export interface CommonErrorDef extends ResponseDef {
  headers?: Record<string, HeaderDef>;
}

/** Rate-limit headers (DESIGN.md §6): sent on every answer of a rate-limited route. */
export const RATE_LIMIT_HEADERS: Record<string, HeaderDef> = {
  'X-RateLimit-Limit': { description: 'Requests allowed per window (per token).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window resets, in epoch seconds.', schema: { type: 'integer' } },
};

/** Why a route can answer 403, as the auth middleware decides it (api/middleware/auth.ts). */
function forbiddenReasons(def: AnyWebRoute): string[] {
  const reasons: string[] = [];
  if (def.auth === 'integration') reasons.push('the token names no tenant');
  if (def.auth === 'platform') reasons.push('the user is not a platform admin');
  if (def.access === 'write')
    reasons.push('a read-only integration token was used on a write (use a read_write token)');
  if (def.permission) reasons.push(`the user lacks the permission \`${def.permission}\``);
  if (def.tenant === true) reasons.push('the user belongs to no tenant');
  const parts = reasons.length ? [`FORBIDDEN: ${reasons.join('; ')}.`] : [];
  if (def.module) parts.push(`\`module_disabled\`: the tenant switched the ${def.module} module off.`);
  if (isDemoBlocked(def.demoAction)) {
    parts.push(
      `\`demo_guard_blocked\`: the tenant runs in demo mode and the action \`${def.demoAction}\` is blocked there.`,
    );
  }
  return parts;
}

/**
 * The error responses every route of the web service can produce, decided by its RouteDef flags
 * (DESIGN.md §4 error codes), all with the body `{message, code}` (+ `errors` on 422, + `request_id`
 * on 500):
 * - 401 UNAUTHENTICATED unless auth is 'public';
 * - 403 FORBIDDEN / demo_guard_blocked for integration and platform routes, `access: 'write'`,
 *   `permission`, `tenant`, and a `demoAction` on the demo guard's blocked list;
 * - 404 NOT_FOUND when the path has parameters; 409 CONFLICT when idempotent;
 * - 413 PAYLOAD_TOO_LARGE when the route takes a body;
 * - 422 VALIDATION_FAILED when it validates params, query, body or an Idempotency-Key;
 * - 429 RATE_LIMITED with Retry-After and X-RateLimit-* when rateLimited;
 * - 431 HEADERS_TOO_LARGE (Node's limit of 16 KB, api/http/client-error.ts) and 500 SERVER_ERROR always;
 * - 503 DATABASE_UNAVAILABLE with Retry-After always (PostgreSQL down, frozen or restarting).
 * @param def the route
 * @param hasPathParams whether the route's path has parameters
 * @returns status -> response (the route's own responses override these by status)
 */
export function webCommonErrors(def: AnyWebRoute, hasPathParams: boolean): Record<number, CommonErrorDef> {
  const out: Record<number, CommonErrorDef> = {};
  if (def.auth !== 'public') {
    out[401] = { description: 'UNAUTHENTICATED: the bearer token is missing, malformed, wrong, expired or revoked.' };
  }
  const forbidden = forbiddenReasons(def);
  if (forbidden.length) out[403] = { description: forbidden.join(' ') };
  if (hasPathParams || def.params) {
    out[404] = {
      description: "NOT_FOUND: no such record in the caller's tenant (another tenant's id answers 404 too).",
    };
  }
  if (def.idempotent) {
    out[409] = {
      description:
        'CONFLICT: the Idempotency-Key was used with a different body, or its first request is still running.',
    };
  }
  if (def.body) out[413] = { description: 'PAYLOAD_TOO_LARGE: the JSON body exceeds 1 MB.' };
  if (def.params || def.query || def.body || def.idempotent) {
    out[422] = {
      description: 'VALIDATION_FAILED: invalid input; `errors` maps each field (dotted path) to its reasons.',
    };
  }
  if (def.tenant === 'validation') {
    const tail = 'VALIDATION_FAILED with `errors.tenant`: the login belongs to no tenant.';
    out[422] = { description: out[422] ? `${out[422].description} ${tail}` : tail };
  }
  if (def.rateLimited) {
    out[429] = {
      description: 'RATE_LIMITED: the token exceeded its per-minute limit; retry after Retry-After seconds.',
      headers: {
        'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
        ...RATE_LIMIT_HEADERS,
      },
    };
  }
  out[431] = {
    description:
      'HEADERS_TOO_LARGE: the request line and headers exceed 16 KB (answered by the server before routing; ' +
      'the body carries the request id).',
  };
  out[500] = {
    description: 'SERVER_ERROR: unexpected failure; the body carries the request id that is also in the server log.',
  };
  out[503] = {
    description: 'DATABASE_UNAVAILABLE: PostgreSQL is down, frozen or restarting; retry after Retry-After seconds.',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
  };
  for (const r of Object.values(out)) r.schema = errorBody;
  return out;
}
