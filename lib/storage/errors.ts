/**
 * Errors of the storage driver (DESIGN.md §10 "files"). Each carries `code` and `status` so that
 * the HTTP layer can map it to the error body `{message, code}` of DESIGN.md §4 without knowing
 * this module. When one of these ends an upload, the source stream has been unpiped but not
 * destroyed (the caller owns it); answer with `Connection: close` if the request body was not read.
 */

/** Base class: every error this module throws on purpose. */
export class StorageError extends Error {
  /**
   * @param code machine-readable code for the error body
   * @param status HTTP status the HTTP layer should answer with
   */
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * An upload exceeded its `maxBytes` while streaming: the write was aborted and nothing was stored.
 * code PAYLOAD_TOO_LARGE, status 413.
 */
export class StorageLimitError extends StorageError {
  declare readonly code: 'PAYLOAD_TOO_LARGE';
  /** @param maxBytes the limit that was exceeded, in bytes */
  constructor(readonly maxBytes: number) {
    super('PAYLOAD_TOO_LARGE', 413, `file exceeds the limit of ${maxBytes} bytes`);
  }
}

/**
 * The content's type (decided from its bytes, not its name) is not among the allowed types:
 * nothing was stored. code UNSUPPORTED_FILE_TYPE, status 415.
 */
export class StorageTypeError extends StorageError {
  declare readonly code: 'UNSUPPORTED_FILE_TYPE';
  /**
   * @param detected the MIME type detected from the content
   * @param allowed the allowed types of the upload
   */
  constructor(
    readonly detected: string,
    readonly allowed: readonly string[],
  ) {
    super('UNSUPPORTED_FILE_TYPE', 415, `file type ${detected} is not allowed (allowed: ${allowed.join(', ')})`);
  }
}

/**
 * A storage key that is not acceptable (empty, too long, absolute, with `.`/`..` or hidden
 * segments, backslashes, NUL or other control characters). code VALIDATION_FAILED, status 422,
 * `errors: {key: [reason]}` in the DESIGN.md §4 layout.
 */
export class StorageKeyError extends StorageError {
  declare readonly code: 'VALIDATION_FAILED';
  readonly errors: { key: string[] };
  /** @param reason why the key was refused */
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super('VALIDATION_FAILED', 422, `invalid storage key: ${reason}`);
    this.errors = { key: [reason] };
  }
}

/** get() of a key that holds no object. code NOT_FOUND, status 404. */
export class StorageNotFoundError extends StorageError {
  declare readonly code: 'NOT_FOUND';
  constructor(readonly key: string) {
    super('NOT_FOUND', 404, `no stored file under ${JSON.stringify(key)}`);
  }
}
