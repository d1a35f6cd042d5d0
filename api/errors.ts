/**
 * The one error class hierarchy of both HTTP services (DESIGN.md §3 "one error table", §4 codes,
 * §10 INVALID_TRANSITION / module switches / spec 503s). Services and routes throw these; the one
 * class -> status and code table (api/http/error-table.ts) turns any thrown value into an HttpError,
 * and each service's error writer renders it in its own body (`{message, code}` for the web service,
 * `{ok: false, error, message}` for the Mailbox API).
 *
 * jobs/ and db/ never import this file (arrows point down): they throw their own error classes
 * (e.g. jobs/queues.ts QueueUnavailableError), which the table maps too.
 */

/** Field errors in Laravel layout: dotted path -> reasons. */
export type FieldErrors = Record<string, string[]>;

/** Options every AppError takes. */
export interface AppErrorOptions {
  /** Field errors (422). */
  errors?: FieldErrors;
  /** Extra response headers (e.g. Retry-After). */
  headers?: Record<string, string>;
  /** Extra safe body fields (e.g. the Mailbox API's job_id). */
  extra?: Record<string, unknown>;
  /** The underlying error (logged, never shown). */
  cause?: unknown;
}

/** Base class: an error whose status, code and message are safe to show to the client. */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors?: FieldErrors;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string>;
  /** Extra safe body fields. */
  readonly extra: Record<string, unknown>;
  /**
   * @param status HTTP status
   * @param code the error code of the body (the spec's own, or DESIGN §4's)
   * @param message safe message for the client
   */
  constructor(status: number, code: string, message: string, opts: AppErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.errors = opts.errors;
    this.headers = opts.headers ?? {};
    this.extra = opts.extra ?? {};
  }
}

/** 401 UNAUTHENTICATED: missing, malformed, wrong, expired or revoked token; invalid session. */
export class Unauthenticated extends AppError {
  constructor(message = 'Unauthenticated.') {
    super(401, 'UNAUTHENTICATED', message);
  }
}

/** 403 FORBIDDEN: permission missing (the message names it), read token on a write, token without tenant. */
export class Forbidden extends AppError {
  constructor(message = 'This action is unauthorized.') {
    super(403, 'FORBIDDEN', message);
  }
}

/** 403 module_disabled: the tenant switched the route's module off (DESIGN.md §10 "tenant modules"). */
export class ModuleDisabled extends AppError {
  constructor(module: string) {
    super(403, 'module_disabled', `The ${module} module is disabled for this tenant.`);
  }
}

/** 403 demo_guard_blocked: the tenant runs in demo mode and the action is on the blocked list. */
export class DemoGuardBlocked extends AppError {
  constructor(action: string) {
    super(403, 'demo_guard_blocked', `This action (${action}) is blocked on the demo tenant. Use a normal tenant.`);
  }
}

/** 404 NOT_FOUND: no such record in the caller's tenant (foreign ids answer this too, never 403). */
export class NotFound extends AppError {
  constructor(what = 'Record') {
    super(404, 'NOT_FOUND', `${what} not found.`);
  }
}

/** 404 NOT_FOUND for an unmatched route. */
export class RouteNotFound extends AppError {
  constructor() {
    super(404, 'NOT_FOUND', 'Route not found.');
  }
}

/** 405 METHOD_NOT_ALLOWED: a known path with another method; `allow` goes into the Allow header. */
export class MethodNotAllowed extends AppError {
  constructor(method: string, allow: string) {
    super(405, 'METHOD_NOT_ALLOWED', `Method ${method} is not allowed here; use ${allow || 'another method'}.`, {
      headers: allow ? { Allow: allow } : {},
    });
  }
}

/** 422 VALIDATION_FAILED with field errors; the message is the first reason. */
export class ValidationFailed extends AppError {
  constructor(errors: FieldErrors, message?: string) {
    const first = Object.values(errors)[0]?.[0];
    super(422, 'VALIDATION_FAILED', message ?? first ?? 'The given data was invalid.', { errors });
  }
}

/**
 * 422 INVALID_TRANSITION (DESIGN.md §10 "refused state change"; never 409): the record's current
 * state does not allow the action. `errors.status` repeats the message.
 */
export class InvalidTransition extends AppError {
  /**
   * @param current the record's current state
   * @param action the refused action (e.g. "approve")
   * @param allowed the states the action is allowed from (named in the message when given)
   */
  constructor(current: string, action: string, allowed: readonly string[] = []) {
    const tail = allowed.length ? ` It is allowed from: ${allowed.join(', ')}.` : '';
    const message = `Cannot ${action} a record in status ${current}.${tail}`;
    super(422, 'INVALID_TRANSITION', message, { errors: { status: [message] } });
  }
}

/** 409 CONFLICT: unique key taken, idempotency key reused with another body. */
export class Conflict extends AppError {
  constructor(message = 'Conflict.') {
    super(409, 'CONFLICT', message);
  }
}

/** 413 PAYLOAD_TOO_LARGE: a body or an upload over its limit. */
export class PayloadTooLarge extends AppError {
  constructor(message = 'The request body is too large.') {
    super(413, 'PAYLOAD_TOO_LARGE', message);
  }
}

/** 429 RATE_LIMITED with Retry-After (seconds). */
export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, 'RATE_LIMITED', 'Too many requests. Retry later.', {
      headers: { ...headers, 'Retry-After': String(retryAfterSeconds) },
    });
  }
}

/**
 * The spec's 503 codes for a module whose tables are missing (document 2 "Errors"; DESIGN.md §10
 * "spec 503s"). Thrown by api/http/schema-check.ts requireTables().
 */
export type SchemaMissingCode =
  | 'sales_schema_missing'
  | 'external_email_accounts_missing'
  | 'attendance_schema_missing'
  | 'attendance_requests_schema_missing'
  | 'attendance_full_suite_schema_missing';

/** 503 with one of the spec's schema-missing codes. */
export class SchemaMissing extends AppError {
  constructor(code: SchemaMissingCode, missing: readonly string[]) {
    super(503, code, `This module's database tables are missing (${missing.join(', ')}). Run the migrations.`, {
      headers: { 'Retry-After': '60' },
    });
  }
}

/**
 * 422 INSUFFICIENT_STOCK (issue 16 item 2): a stock change would take a location below zero, or a
 * serial number is not in stock where it should leave from. Nothing moved. `errors` names the
 * fields (`items.N.quantity`, `items.N.serials`).
 */
export class InsufficientStock extends AppError {
  constructor(errors: FieldErrors) {
    const first = Object.values(errors)[0]?.[0];
    super(422, 'INSUFFICIENT_STOCK', first ?? 'Not enough stock.', { errors });
  }
}
