import { createCpanelPanel } from './cpanel.js';
import { createDirectAdminPanel } from './directadmin.js';
import { createHestiaSshPanel, defaultSshConnect, type SshConnect } from './hestia-ssh.js';
import { HESTIA_DIR_PATTERN, HESTIA_USER_PATTERN } from './shell.js';
import { isValidHost } from './validate.js';
import { PanelError, type MailPanel, type MailPanelConfig, type PanelType } from './types.js';

/**
 * Mail panel adapters (issue 3 item 3): one MailPanel interface over cPanel UAPI, DirectAdmin's
 * CMD_API_POP and HestiaCP over SSH. The `mailbox-create` job builds a MailPanelConfig from the
 * domain row, calls createMailPanel and maps PanelError.kind to retry (transient, rate_limited),
 * give-up (permanent, auth) or "already there" (exists). Importing this module opens nothing.
 */

export * from './types.js';
export {
  classifyHttpFailure,
  classifyNetworkError,
  classifyHestiaExit,
  classifyPanelMessage,
  panelErrorText,
  parseRetryAfter,
  redactSecrets,
  HESTIA_EXIT,
} from './classify.js';
export {
  validateCreateMailbox,
  quotaToMegabytes,
  isValidLocalPart,
  isValidDomain,
  isValidHost,
  isValidMailboxPassword,
  LOCAL_PART_PATTERN,
  QUOTA_PATTERN,
  PASSWORD_MIN_LENGTH,
  PASSWORD_MAX_LENGTH,
  REAL_NAME_MAX_LENGTH,
  QUOTA_MAX_MB,
} from './validate.js';
export { shellQuote } from './shell.js';
export type { SshConnect } from './hestia-ssh.js';

/** Optional dependencies and tunables of createMailPanel. */
export interface MailPanelDeps {
  /** HTTP panels: the fetch to use (default: global fetch) */
  fetch?: typeof fetch;
  /** Hestia: opens an authenticated ssh2 connection (default: a new ssh2 Client) */
  sshConnect?: SshConnect;
  /** per HTTP request or per SSH command, in ms (default 20000) */
  timeoutMs?: number;
  /** SSH handshake and authentication, in ms (default 15000) */
  connectTimeoutMs?: number;
  /** Hestia's install dir (default /usr/local/hestia) */
  hestiaDir?: string;
  /** Hestia: force `sudo -n` on or off (default: on unless the login user is root) */
  sudo?: boolean;
}

export const DEFAULT_TIMEOUT_MS = 20_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
export const DEFAULT_HESTIA_DIR = '/usr/local/hestia';

/**
 * The usual port of a panel: cPanel 2083 (https) / 2082 (http), DirectAdmin 2222, Hestia SSH 22.
 * For the API's domain form and for rows whose panel_port is null.
 */
export function defaultPanelPort(type: PanelType, ssl = true): number {
  if (type === 'cpanel') return ssl ? 2083 : 2082;
  if (type === 'directadmin') return 2222;
  return 22;
}

// NUL, CR, LF and the other control characters break headers and command lines
// eslint-disable-next-line no-control-regex -- matches control characters to refuse them
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks a panel configuration. Pure.
 * @returns field errors (Laravel layout) keyed by MailPanelConfig field; empty when usable.
 *   Secrets are never echoed.
 */
export function validatePanelConfig(cfg: Partial<MailPanelConfig>): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const add = (f: string, r: string) => {
    (errors[f] ??= []).push(r);
  };
  const type = cfg?.type;
  if (type !== 'cpanel' && type !== 'directadmin' && type !== 'hestia')
    add('type', 'The panel type must be cpanel, directadmin or hestia.');
  if (!isValidHost(cfg?.host)) add('host', 'The host must be a hostname or an IP address, without scheme or port.');
  if (!Number.isInteger(cfg?.port) || (cfg.port as number) < 1 || (cfg.port as number) > 65535)
    add('port', 'The port must be a whole number from 1 to 65535.');
  if (
    typeof cfg?.user !== 'string' ||
    cfg.user === '' ||
    cfg.user.length > 190 ||
    CONTROL.test(cfg.user) ||
    cfg.user.includes(':')
  ) {
    add('user', 'The user is required and may not contain ":" or control characters.');
  }
  const password = cfg?.password;
  if (password !== undefined && password !== null && (typeof password !== 'string' || CONTROL.test(password))) {
    add('password', 'The password may not contain control characters.');
  }
  if (typeof cfg?.ssl !== 'boolean') add('ssl', 'ssl must be true or false.');
  if (type === 'cpanel' || type === 'directadmin') {
    if (!password)
      add(
        'password',
        type === 'cpanel' ? 'A cPanel API token is required (in password).' : 'A password or login key is required.',
      );
  }
  if (type === 'hestia') {
    const key = cfg.ssh_key_path;
    if (key !== undefined && key !== null && (typeof key !== 'string' || !key.startsWith('/') || CONTROL.test(key)))
      add('ssh_key_path', 'The SSH key path must be an absolute path.');
    if (!key && !password) add('ssh_key_path', 'An SSH key path or a password is required.');
    const panelUser = cfg.panel_user || cfg.user;
    if (typeof panelUser === 'string' && !HESTIA_USER_PATTERN.test(panelUser))
      add(cfg.panel_user ? 'panel_user' : 'user', 'Not a valid Hestia user name.');
    const fp = cfg.host_key_sha256;
    if (fp !== undefined && fp !== null && !/^(SHA256:)?[A-Za-z0-9+/]{43}=?$/.test(fp))
      add('host_key_sha256', 'The host key fingerprint must look like SHA256:<43 base64 characters>.');
  }
  return errors;
}

/**
 * Creates the adapter for a domain's panel.
 * @param cfg the panel settings (see MailPanelConfig for what `password` means per panel)
 * @param deps optional fetch / sshConnect (tests), timeouts, Hestia install dir and sudo
 * @throws PanelError kind 'permanent' with `fields` when the configuration is unusable (bad host,
 *   port, user, missing credentials, ...); no connection is made
 */
export function createMailPanel(cfg: MailPanelConfig, deps: MailPanelDeps = {}): MailPanel {
  const fields = validatePanelConfig(cfg);
  const hestiaDir = deps.hestiaDir ?? DEFAULT_HESTIA_DIR;
  if (cfg?.type === 'hestia' && !HESTIA_DIR_PATTERN.test(hestiaDir))
    (fields.hestiaDir ??= []).push("Hestia's install dir must be an absolute path.");
  if (Object.keys(fields).length > 0) {
    const panel = (['cpanel', 'directadmin', 'hestia'] as const).find((t) => t === cfg?.type);
    throw new PanelError('permanent', `invalid panel configuration (${Object.keys(fields).join(', ')})`, {
      fields,
      ...(panel ? { panel } : {}),
    });
  }
  const timeoutMs = deps.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const httpDeps = {
    fetch: deps.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init)),
    timeoutMs,
  };
  switch (cfg.type) {
    case 'cpanel':
      return createCpanelPanel(cfg, httpDeps);
    case 'directadmin':
      return createDirectAdminPanel(cfg, httpDeps);
    case 'hestia':
      return createHestiaSshPanel(cfg, {
        sshConnect: deps.sshConnect ?? defaultSshConnect,
        timeoutMs,
        connectTimeoutMs: deps.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        hestiaDir,
        ...(deps.sudo === undefined ? {} : { sudo: deps.sudo }),
      });
  }
}
