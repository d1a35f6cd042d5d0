/**
 * The OLT adapter contract (issue 8 item 3, job `onu-poll`): one driver per OLT family reads the
 * ONUs an OLT sees. Adapters never log or return credentials; their errors carry fixed texts.
 */

/** ONU status values (DESIGN.md §6). */
export type OnuStatus = 'online' | 'offline' | 'los' | 'power_fail';

/** Login data of an OLT (write-only in the API, sealed at rest with APP_KEY). */
export interface OltCredentials {
  username?: string;
  password?: string;
  /** SNMP community, for drivers that read over SNMP. */
  snmp_community?: string;
}

/** What a driver needs to poll one OLT. */
export interface OltTarget {
  id: number;
  tenant_id: number;
  name: string;
  vendor: string | null;
  model: string | null;
  /** Management address (IPv4 or IPv6), null when not configured. */
  ip_address: string | null;
  pon_ports: number;
  /** Serial numbers of the active ONUs the platform knows on this OLT (a hint; drivers may report more). */
  serials: readonly string[];
  /**
   * Opens the sealed credentials (null when none are stored). Lazy so that a driver that needs
   * none never decrypts them.
   * @throws OltAuthError when they cannot be opened (another APP_KEY, tampered value)
   */
  credentials(): OltCredentials | null;
}

/** One ONU as the OLT reports it. Powers in dBm (2 decimals), uptime in seconds; null when not online. */
export interface OnuReading {
  serial_number: string;
  status: OnuStatus;
  /** Received optical power at the ONU, dBm (about -8 .. -28 for a working link). */
  rx_power: number | null;
  /** Transmitted optical power of the ONU, dBm. */
  tx_power: number | null;
  /** Seconds since the ONU last came up. */
  uptime: number | null;
}

/** Options of one poll. */
export interface PollOptions {
  /** The poll's moment (the job clock), for drivers whose readings depend on time (fake: uptime). */
  now: Date;
  /** Fires when the worker shuts down; drivers close their connection and throw. */
  signal?: AbortSignal;
}

/** A driver: reads the ONUs of one OLT. */
export interface OltAdapter {
  /** The driver name stored in olts.driver. */
  readonly driver: string;
  /**
   * Reads the ONUs the OLT sees.
   * @returns one reading per ONU (serial numbers as the OLT spells them; matched case-insensitively)
   * @throws OltUnreachableError when the OLT does not answer (timeout, refused, no route): the job
   *   marks it offline and keeps the ONUs' last readings; OltAuthError when it refuses the
   *   credentials: the job gives up (UnrecoverableError)
   */
  poll(target: OltTarget, opts: PollOptions): Promise<OnuReading[]>;
}

/** The OLT did not answer (timeout, connection refused, no route). Transient: the next poll tries again. */
export class OltUnreachableError extends Error {
  constructor(message = 'The OLT did not answer.', opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'OltUnreachableError';
  }
}

/** The OLT refused the credentials, or they cannot be opened. Permanent until someone fixes them. */
export class OltAuthError extends Error {
  constructor(message = 'The OLT refused the credentials.', opts?: { cause?: unknown }) {
    super(message, opts);
    this.name = 'OltAuthError';
  }
}

/** olts.driver names a driver this build does not have. Permanent. */
export class UnknownOltDriverError extends Error {
  constructor(readonly driver: string) {
    super(`No OLT driver named "${driver}".`);
    this.name = 'UnknownOltDriverError';
  }
}
