/**
 * Types shared by the mail panel adapters (issue 3 item 3; DESIGN.md §3 "adapters for the outside
 * world", §7 "mail panel"). The Mailbox API's `mailbox-create` job builds a MailPanelConfig from a
 * `mail_domains` row and calls a MailPanel; the adapters never log and never put a password in an
 * error message.
 */

/** The control panels the adapters speak to. */
export type PanelType = 'cpanel' | 'directadmin' | 'hestia';

/**
 * How to reach a domain's control panel.
 * - cpanel: `password` holds a cPanel **API token** (cPanel > Security > Manage API Tokens), sent as
 *   `Authorization: cpanel user:TOKEN`; HTTPS port 2083 (`ssl: false` -> HTTP, port 2082).
 * - directadmin: `password` is the account password or a DirectAdmin login key (HTTP Basic);
 *   port 2222. `user` may use DirectAdmin's login-as form `admin|owner`.
 * - hestia: SSH (port 22) as `user` with the private key at `ssh_key_path` (OpenSSH or PEM, not
 *   passphrase-protected) or with `password`; runs HestiaCP's `v-*` commands, through `sudo -n`
 *   when `user` is not root.
 */
export interface MailPanelConfig {
  type: PanelType;
  /** hostname or IP address of the panel (no scheme, no port) */
  host: string;
  /** TCP port (see defaultPanelPort for each panel's usual port) */
  port: number;
  user: string;
  password?: string | null;
  ssh_key_path?: string | null;
  /** HTTP panels: https when true; ignored by the SSH adapter (SSH is always encrypted) */
  ssl: boolean;
  /**
   * Hestia only: the Hestia account that owns the mail domain, when it differs from the SSH login
   * `user` (e.g. login as root, domains owned by `admin`). Default: `user`.
   */
  panel_user?: string | null;
  /**
   * SSH only: the server's host key fingerprint as OpenSSH prints it (`SHA256:<base64>`, the prefix
   * optional). When set, a server presenting another key is refused (kind 'permanent'). When unset,
   * any host key is accepted.
   */
  host_key_sha256?: string | null;
}

/** What the Mailbox API asks a panel to create (already validated by validateCreateMailbox). */
export interface CreateMailboxInput {
  domain: string;
  local_part: string;
  password: string;
  /** not stored by any of the three panels' create calls; validated only */
  real_name?: string | null;
  /** '^[0-9]+[MG]$' as given by the API, e.g. '500M', '2G'; null = panel default/unlimited */
  quota: string | null;
}

/** One control panel, as the `mailbox-create` job and the dashboard use it. */
export interface MailPanel {
  /**
   * Creates the mailbox `local_part@domain` with the given password and quota.
   * @throws PanelError (kind 'exists' when the mailbox is already there; 'permanent' with
   *   `fields` when the input fails validateCreateMailbox, before any connection is made)
   */
  createMailbox(input: CreateMailboxInput, signal?: AbortSignal): Promise<void>;
  /**
   * Whether the mailbox exists on the panel.
   * @throws PanelError when the panel cannot answer
   */
  mailboxExists(domain: string, local_part: string, signal?: AbortSignal): Promise<boolean>;
  /**
   * Makes one cheap authenticated call; resolves when the panel accepted the credentials.
   * @throws PanelError ('auth' for refused credentials, 'transient' when unreachable, ...)
   */
  testConnection(signal?: AbortSignal): Promise<void>;
}

/**
 * Why a panel call failed, which decides retry or give-up in the job (DESIGN.md §3):
 * transient -> retry with backoff; permanent -> UnrecoverableError; exists -> the mailbox is
 * already there (the job checks and treats it as done or as a conflict); auth -> credentials
 * refused (permanent, but worth its own message to the operator); rate_limited -> retry after
 * `retryAfterMs` when known.
 */
export type PanelFailureKind = 'transient' | 'permanent' | 'exists' | 'auth' | 'rate_limited';

/** Options of a PanelError. */
export interface PanelErrorOptions {
  cause?: unknown;
  /** rate_limited: how long the panel asked to wait, in ms */
  retryAfterMs?: number;
  /** HTTP status of the panel's answer, when there was one */
  status?: number;
  /** SSH: exit code of the remote command, when there was one */
  exitCode?: number;
  /** validation failures, Laravel layout ({field: [reason, ...]}) */
  fields?: Record<string, string[]>;
  panel?: PanelType;
}

/**
 * A failed panel call. The message is built by the adapters from the panel's own error text with
 * every known secret (mailbox password, panel password or token) replaced by `[redacted]`; it
 * never contains a password. `cause` keeps the underlying error (network errors, ssh2 errors).
 */
export class PanelError extends Error {
  readonly kind: PanelFailureKind;
  readonly retryAfterMs?: number;
  readonly status?: number;
  readonly exitCode?: number;
  readonly fields?: Record<string, string[]>;
  readonly panel?: PanelType;

  constructor(kind: PanelFailureKind, message: string, opts: PanelErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'PanelError';
    this.kind = kind;
    if (opts.retryAfterMs !== undefined) this.retryAfterMs = opts.retryAfterMs;
    if (opts.status !== undefined) this.status = opts.status;
    if (opts.exitCode !== undefined) this.exitCode = opts.exitCode;
    if (opts.fields !== undefined) this.fields = opts.fields;
    if (opts.panel !== undefined) this.panel = opts.panel;
  }
}

/** Tunables shared by the adapters (createMailPanel's deps). */
export interface PanelTimeouts {
  /** per HTTP request, or per SSH command once connected, in ms (default 20000) */
  timeoutMs?: number;
  /** SSH handshake and authentication, in ms (default 15000) */
  connectTimeoutMs?: number;
}
