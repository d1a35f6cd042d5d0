/**
 * The network adapter contract (issue 8 item 2, job `customer-network`): one driver per NAS family
 * (nas.driver) puts a customer's session on the NAS in the state the platform wants, or removes it.
 * Adapters never log or return credentials or passwords; their errors carry fixed texts.
 */

/** Login data of a NAS (write-only in the API, sealed at rest with APP_KEY). */
export interface NasCredentials {
  username?: string;
  password?: string;
  snmp_community?: string;
}

/** What a driver needs to reach one NAS. */
export interface NasTarget {
  id: number;
  tenant_id: number;
  name: string;
  nas_key: string;
  /** IP address or host name of its API. */
  host: string;
  /** TCP port of its API. */
  port: number;
  /**
   * Opens the sealed NAS credentials (null when none are stored). Lazy, so that a driver that needs
   * none never decrypts them.
   * @throws NetworkAuthError when they cannot be opened (another APP_KEY, tampered value)
   */
  credentials(): NasCredentials | null;
}

/** The session states a NAS can hold: active (the package's profile) or isolated (the isolation profile). */
export type SessionState = 'active' | 'isolated';

/** One customer's session as the platform wants it on the NAS. */
export interface SessionSpec {
  /** The session key: the PPPoE username, or the MAC address for dhcp and static customers. */
  username: string;
  /** The PPPoE password in clear (opened only inside the processor); null when none is stored. Never logged. */
  password: string | null;
  /** AA:BB:CC:DD:EE:FF or null. */
  mac_address: string | null;
  service_type: string;
  state: SessionState;
  /** active: the package's profile (its name, null without a package); isolated: the NAS's isolation profile. */
  profile: string | null;
  /** customers.network_version of this state (drivers may keep it; it only grows). */
  version: number;
}

/** Options of one call. */
export interface NetworkCallOptions {
  /** The call's moment (the job clock). */
  now: Date;
  /** Fires when the worker shuts down; drivers close their connection and throw. */
  signal?: AbortSignal;
}

/** A driver: puts sessions on one kind of NAS. Both calls are idempotent. */
export interface NetworkAdapter {
  /** The driver name stored in nas.driver. */
  readonly driver: string;
  /**
   * Creates or updates the session (state, profile, password, MAC).
   * @throws NetworkTimeoutError or NetworkServerError (transient: the job retries with backoff);
   *   NetworkAuthError or UnknownProfileError (permanent: the job gives up, sync_status failed)
   */
  apply(nas: NasTarget, session: SessionSpec, opts: NetworkCallOptions): Promise<void>;
  /**
   * Removes the session of `username` (and disconnects it); a session that is not there is not an error.
   * @throws as apply
   */
  remove(nas: NasTarget, username: string, opts: NetworkCallOptions): Promise<void>;
}

/** The NAS did not answer in time (timeout, refused, no route). Transient. */
export class NetworkTimeoutError extends Error {
  constructor(message = 'The NAS did not answer in time.', opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'NetworkTimeoutError';
  }
}

/** The NAS answered with an internal error (an HTTP 5xx or its API's equivalent). Transient. */
export class NetworkServerError extends Error {
  constructor(message = 'The NAS answered with an internal error.', opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'NetworkServerError';
  }
}

/** The NAS refused the credentials, or they cannot be opened. Permanent until someone fixes them. */
export class NetworkAuthError extends Error {
  constructor(message = 'The NAS refused the credentials.', opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'NetworkAuthError';
  }
}

/** The NAS does not know the profile (isolation or package profile), or the NAS names none. Permanent. */
export class UnknownProfileError extends Error {
  constructor(message = 'The NAS does not know the profile.', opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'UnknownProfileError';
  }
}

/** nas.driver names a driver this build does not have. Permanent. */
export class UnknownNetworkDriverError extends Error {
  constructor(readonly driver: string) {
    super(`No network driver named "${driver}".`);
    this.name = 'UnknownNetworkDriverError';
  }
}

/** What the job does with a failure: retry (transient) or give up, and the safe text it records. */
export interface NetworkFailure {
  retry: boolean;
  /** A fixed text for customers.network_error and the job log; never a secret, never a driver's raw message. */
  text: string;
}

/**
 * Decides retry or give up for an error of a network call (DESIGN.md §3: small pure functions per
 * adapter). Timeouts and server errors retry; refused credentials, unknown profiles and unknown
 * drivers give up; anything else (a database error, a bug) retries with a generic text.
 * @param err what the call threw
 */
export function classifyNetworkError(err: unknown): NetworkFailure {
  if (err instanceof NetworkTimeoutError) return { retry: true, text: 'The NAS did not answer in time.' };
  if (err instanceof NetworkServerError) return { retry: true, text: 'The NAS answered with an internal error.' };
  if (err instanceof NetworkAuthError) return { retry: false, text: 'The NAS refused the credentials.' };
  if (err instanceof UnknownProfileError) return { retry: false, text: 'The NAS does not know the profile.' };
  if (err instanceof UnknownNetworkDriverError) return { retry: false, text: 'The NAS names an unknown driver.' };
  return { retry: true, text: 'The network push failed unexpectedly.' };
}
