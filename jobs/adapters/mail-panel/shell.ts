import { WRAPPER_TEMPFAIL } from './classify.js';

/**
 * POSIX shell quoting and the HestiaCP command lines the SSH adapter sends. Every argument goes
 * through shellQuote, and the adapters validate the values before (local part, domain, Hestia user,
 * quota as digits); the mailbox password never appears in a command line: it is written to a
 * private temp file from the channel's stdin and Hestia is given the file's path, which Hestia's
 * `is_password_valid` reads (a PASSWORD argument starting with /tmp/ names a file whose first line is
 * the password; the Hestia web UI passes passwords the same way). Pure functions.
 */

/**
 * Quotes one argument for a POSIX shell: wraps it in single quotes, writing each `'` as `'\''`.
 * Inside single quotes nothing is special ($, `, \, ;, spaces, newlines), so the shell passes the
 * value as exactly one literal word.
 * @throws TypeError when the value contains NUL (no shell argument can)
 */
export function shellQuote(arg: string): string {
  if (typeof arg !== 'string') throw new TypeError('a shell argument must be a string');
  if (arg.includes('\0')) throw new TypeError('a shell argument cannot contain NUL');
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Where Hestia lives and how to become root. */
export interface HestiaCommandOptions {
  /** Hestia's install dir, e.g. /usr/local/hestia (commands run as <dir>/bin/v-...) */
  hestiaDir: string;
  /** prefix the command with `sudo -n` (when the SSH user is not root) */
  sudo: boolean;
}

/** Hestia's install dir must be an absolute path of plain characters. */
export const HESTIA_DIR_PATTERN = /^\/[A-Za-z0-9._/-]*$/;
/** Hestia user names (is_user_format_valid): alphanumerics with inner . _ - , up to 32 characters. */
export const HESTIA_USER_PATTERN = /^[a-z0-9](?:[a-z0-9._-]{0,30}[a-z0-9])?$/i;

function hestiaCommand(opts: HestiaCommandOptions, name: string, args: string[]): string {
  if (!HESTIA_DIR_PATTERN.test(opts.hestiaDir)) throw new TypeError('hestiaDir must be an absolute path');
  const bin = `${opts.hestiaDir.replace(/\/+$/, '')}/bin/${name}`;
  return [...(opts.sudo ? ['sudo', '-n'] : []), shellQuote(bin), ...args].join(' ');
}

/**
 * The command that creates a mail account with the password read from stdin:
 * a 0600 temp file under /tmp receives stdin, `v-add-mail-account USER DOMAIN ACCOUNT <file> [QUOTA]`
 * runs, the file is removed whatever happens, and the command's exit code is returned (75 when
 * the temp file cannot be written).
 * @param quotaMb quota in MB (0 = unlimited); null leaves Hestia's default (unlimited)
 */
export function hestiaAddMailAccountCommand(
  opts: HestiaCommandOptions,
  user: string,
  domain: string,
  account: string,
  quotaMb: number | null,
): string {
  const args = [shellQuote(user), shellQuote(domain), shellQuote(account), '"$f"'];
  if (quotaMb !== null) {
    if (!Number.isSafeInteger(quotaMb) || quotaMb < 0) throw new TypeError('quotaMb must be a whole number of MB');
    args.push(shellQuote(String(quotaMb)));
  }
  return [
    'umask 077',
    `f=$(mktemp /tmp/mbx.XXXXXXXXXX) || exit ${WRAPPER_TEMPFAIL}`,
    `trap 'rm -f "$f"; exit 129' HUP INT TERM`,
    `cat > "$f" || { rm -f "$f"; exit ${WRAPPER_TEMPFAIL}; }`,
    hestiaCommand(opts, 'v-add-mail-account', args),
    'rc=$?',
    'rm -f "$f"',
    'exit $rc',
  ].join('; ');
}

/** `v-list-mail-account USER DOMAIN ACCOUNT json`: exit 0 when the account exists, 3 when not. */
export function hestiaListMailAccountCommand(
  opts: HestiaCommandOptions,
  user: string,
  domain: string,
  account: string,
): string {
  return hestiaCommand(opts, 'v-list-mail-account', [
    shellQuote(user),
    shellQuote(domain),
    shellQuote(account),
    shellQuote('json'),
  ]);
}

/** `v-list-user USER json`: the cheap call of testConnection (Hestia present, sudo allowed, user known). */
export function hestiaListUserCommand(opts: HestiaCommandOptions, user: string): string {
  return hestiaCommand(opts, 'v-list-user', [shellQuote(user), shellQuote('json')]);
}
