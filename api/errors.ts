/**
 * Application errors and the one class -> status table (DESIGN.md §4, Strapi's error middleware).
 * Services throw these; api/middleware/errors.ts writes the body `{message, code}` (+ `errors`).
 */

/** Field errors in Laravel layout: dotted path -> reasons. */
export type FieldErrors = Record<string, string[]>;

/** Base class: an error whose status, code and message are safe to show to the client. */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly errors?: FieldErrors;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, opts: { errors?: FieldErrors; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.status = status;
    this.code = code;
    this.errors = opts.errors;
    this.headers = opts.headers ?? {};
  }
}

/** 401 UNAUTHENTICATED: missing, malformed, wrong, expired or revoked token; invalid session. */
export class Unauthenticated extends AppError {
  constructor(message = 'Unauthenticated.') { super(401, 'UNAUTHENTICATED', message); }
}

/** 403 FORBIDDEN: permission missing, read token on a write, token without tenant, module inactive. */
export class Forbidden extends AppError {
  constructor(message = 'This action is unauthorized.') { super(403, 'FORBIDDEN', message); }
}

/** 403 demo_guard_blocked: the tenant runs in demo mode and the action is on the blocked list. */
export class DemoGuardBlocked extends AppError {
  constructor(action: string) { super(403, 'demo_guard_blocked', `This action (${action}) is blocked on the demo tenant. Use a normal tenant.`); }
}

/** 404 NOT_FOUND: no such record in the caller's tenant (foreign ids answer this too, never 403). */
export class NotFound extends AppError {
  constructor(what = 'Record') { super(404, 'NOT_FOUND', `${what} not found.`); }
}

/** 422 VALIDATION_FAILED with field errors. */
export class ValidationFailed extends AppError {
  constructor(errors: FieldErrors, message?: string) {
    const first = Object.values(errors)[0]?.[0];
    super(422, 'VALIDATION_FAILED', message ?? first ?? 'The given data was invalid.', { errors });
  }
}

/** 409 CONFLICT: unique key taken, idempotency key reused with another body, state conflict. */
export class Conflict extends AppError {
  constructor(message = 'Conflict.') { super(409, 'CONFLICT', message); }
}

/** 429 RATE_LIMITED with Retry-After (seconds). */
export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number, headers: Record<string, string> = {}) {
    super(429, 'RATE_LIMITED', 'Too many requests. Retry later.', { headers: { ...headers, 'Retry-After': String(retryAfterSeconds) } });
  }
}

/** 503 QUEUE_UNAVAILABLE: Redis (the job queue) cannot take the job right now. */
export class QueueUnavailable extends AppError {
  constructor(cause?: unknown) { super(503, 'QUEUE_UNAVAILABLE', 'The job queue is unavailable. Retry later.', { cause }); }
}
