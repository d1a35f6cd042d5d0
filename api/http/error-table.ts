import { AppError, PayloadTooLarge, ValidationFailed, type FieldErrors } from '../errors.js';
import { QueueUnavailableError } from '../../jobs/queues.js';
import { EmailNotFoundError, MailAuthError, MailServerError } from '../../jobs/adapters/mailbox-client/index.js';
import { StorageKeyError, StorageLimitError, StorageNotFoundError, StorageTypeError } from '../../lib/storage/index.js';
import { MoneyError } from '../../lib/money.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import { TenantDbCutoverInProgress } from '../../db/tenant-routing.js';

/**
 * The one class -> status and code table of both services (DESIGN.md §3, §4; Strapi's error
 * middleware). describeError() turns anything thrown into an HttpError; each service's writer
 * (api/middleware/errors.ts, api/mail/middleware/errors.ts) renders it in its own body. An unknown
 * value becomes 500 SERVER_ERROR: its message, stack and SQL are never in an HttpError.
 */

/** A thrown value as the client may see it. */
export interface HttpError {
  status: number;
  /** Error code: DESIGN §4's (UNAUTHENTICATED, ...) or the spec's (demo_guard_blocked, mailbox_auth_failed, ...). */
  code: string;
  message: string;
  errors?: FieldErrors;
  /** Response headers (Retry-After, Allow, X-RateLimit-*). */
  headers: Record<string, string>;
  /** Extra safe body fields. */
  extra: Record<string, unknown>;
  /** False for 500 SERVER_ERROR of an unknown value (the writer adds the request id). */
  known: boolean;
}

type Ctor = abstract new (...args: never[]) => Error;

/** Errors of lower layers (jobs/, adapters, lib/) that carry no HTTP knowledge: class -> status, code, message. */
const FOREIGN: [Ctor, Omit<HttpError, 'headers' | 'extra' | 'known'> & { headers?: Record<string, string> }][] = [
  [
    QueueUnavailableError,
    {
      status: 503,
      code: 'QUEUE_UNAVAILABLE',
      message: 'The job queue is unavailable. Retry later.',
      headers: { 'Retry-After': '5' },
    },
  ],
  [
    MailAuthError,
    { status: 401, code: 'mailbox_auth_failed', message: 'The mail server refused the mailbox address or password.' },
  ],
  [EmailNotFoundError, { status: 404, code: 'email_not_found', message: 'No e-mail with this id in the mailbox.' }],
  [
    MailServerError,
    { status: 502, code: 'mail_server_error', message: 'The mail server could not be reached or refused the request.' },
  ],
  [StorageLimitError, { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The file is larger than allowed.' }],
  [
    StorageTypeError,
    { status: 415, code: 'UNSUPPORTED_FILE_TYPE', message: 'This type of file is not accepted here.' },
  ],
  [StorageNotFoundError, { status: 404, code: 'NOT_FOUND', message: 'File not found.' }],
  [
    TenantDbCutoverInProgress,
    {
      status: 503,
      code: 'tenant_db_cutover_in_progress',
      message: 'The tenant is moving between databases. Retry in a minute.',
      headers: { 'Retry-After': '5' },
    },
  ],
];

/** Lower-layer errors that carry their own safe message and field errors (422). */
const FIELD_ERRORS: Ctor[] = [StorageKeyError, MoneyError];

/** PostgreSQL SQLSTATE -> client error (never the database's own text). */
const PG_MAP: Record<string, { status: number; code: string; message: string }> = {
  '23505': { status: 409, code: 'CONFLICT', message: 'A record with the same unique value already exists.' },
  '23503': { status: 422, code: 'VALIDATION_FAILED', message: 'A referenced record does not exist.' },
  '23502': { status: 422, code: 'VALIDATION_FAILED', message: 'A required value is missing.' },
  '23514': { status: 422, code: 'VALIDATION_FAILED', message: 'A value is not allowed.' },
  '22P02': { status: 422, code: 'VALIDATION_FAILED', message: 'A value has the wrong format.' },
  '22001': { status: 422, code: 'VALIDATION_FAILED', message: 'A value is too long.' },
  '22003': { status: 422, code: 'VALIDATION_FAILED', message: 'A number is out of range.' },
  '22007': { status: 422, code: 'VALIDATION_FAILED', message: 'A date or time has the wrong format.' },
  '22008': { status: 422, code: 'VALIDATION_FAILED', message: 'A date or time is out of range.' },
  // backstop of the NUL checks (api/http/hostile-input.ts): invalid byte sequence (a NUL in text), and a
  // character the database encoding cannot hold
  '22021': { status: 422, code: 'VALIDATION_FAILED', message: 'A value contains a character that is not allowed.' },
  '22P05': { status: 422, code: 'VALIDATION_FAILED', message: 'A value contains a character that is not allowed.' },
};

/**
 * PostgreSQL frozen, restarting, in recovery, refusing connections, or no pooled connection within
 * the acquire bound (db/unavailable.ts): 503 with Retry-After (seconds; issue 7 item 3).
 */
export const DATABASE_UNAVAILABLE = {
  status: 503,
  code: 'DATABASE_UNAVAILABLE',
  message: 'The database is unavailable. Retry later.',
  retryAfterSeconds: 5,
} as const;

const SERVER_ERROR = 'Server error. Contact the administrator with this request id and the request time.';

function fromAppError(e: AppError): HttpError {
  return {
    status: e.status,
    code: e.code,
    message: e.message,
    headers: { ...e.headers },
    extra: { ...e.extra },
    known: true,
    ...(e.errors ? { errors: e.errors } : {}),
  };
}

/**
 * Maps any thrown value to the HTTP error the client sees.
 * - AppError (api/errors.ts) -> its status, code, message, field errors, headers and extra fields;
 * - lower-layer classes of FOREIGN (queue, mailbox client) -> their row, with a fixed message;
 * - PostgreSQL errors (also wrapped by Objection as `nativeError`): 23505 -> 409 CONFLICT; not-null,
 *   foreign key, check and 22xxx data errors -> 422 VALIDATION_FAILED with `errors: {<column|body>: [...]}`;
 * - PostgreSQL unavailable (db/unavailable.ts: connection errors, 08xxx, 57P01-57P03, statement or
 *   pool timeouts, a connection dropped for silence) -> 503 DATABASE_UNAVAILABLE with Retry-After;
 * - body-parser client errors (http-errors with expose): malformed JSON (400/415/422) -> 422 with
 *   `errors.body`, too large (413) -> 413 PAYLOAD_TOO_LARGE, others keep their 4xx as BAD_REQUEST;
 * - anything else -> 500 SERVER_ERROR (known: false).
 * @param e whatever was thrown
 * @returns the safe description (never a stack, SQL or an unknown error's message)
 */
export function describeError(e: unknown): HttpError {
  if (e instanceof AppError) return fromAppError(e);
  for (const [cls, row] of FOREIGN) {
    if (e instanceof cls) return { ...row, headers: { ...(row.headers ?? {}) }, extra: {}, known: true };
  }
  for (const cls of FIELD_ERRORS) {
    if (e instanceof cls) {
      const own = e as Error & { errors?: FieldErrors };
      return fromAppError(new ValidationFailed(own.errors ?? { body: [own.message] }, own.message));
    }
  }
  const pgError = (e as { nativeError?: unknown })?.nativeError ?? e;
  const pgCode = (pgError as { code?: unknown })?.code;
  if (typeof pgCode === 'string' && PG_MAP[pgCode]) {
    const m = PG_MAP[pgCode];
    const col = (pgError as { column?: string }).column;
    return {
      ...m,
      headers: {},
      extra: {},
      known: true,
      ...(m.status === 422 ? { errors: { [col ?? 'body']: [m.message] } } : {}),
    };
  }
  if (isDatabaseUnavailable(e)) {
    const { status, code, message, retryAfterSeconds } = DATABASE_UNAVAILABLE;
    return { status, code, message, headers: { 'Retry-After': String(retryAfterSeconds) }, extra: {}, known: true };
  }
  const http = e as { status?: unknown; expose?: unknown };
  if (http?.expose && typeof http.status === 'number' && http.status >= 400 && http.status < 500) {
    if (http.status === 400 || http.status === 415 || http.status === 422) {
      return fromAppError(new ValidationFailed({ body: ['The request body is not valid JSON.'] }));
    }
    if (http.status === 413) return fromAppError(new PayloadTooLarge());
    return { status: http.status, code: 'BAD_REQUEST', message: 'Bad request.', headers: {}, extra: {}, known: true };
  }
  return { status: 500, code: 'SERVER_ERROR', message: SERVER_ERROR, headers: {}, extra: {}, known: false };
}
