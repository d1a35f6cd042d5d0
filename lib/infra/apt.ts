import { execa } from 'execa';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { inheritedEnv, searchPath } from '../config.js';

/** apt-get update runs at most once per process. */
let updated = false;

/** What ensureDebianPackage looks at; tests replace these. */
export interface AptDeps {
  /** uid of this process (default process.getuid()) */
  uid?: number;
  /** finds an executable: absolute path or null (default {@link which}) */
  which?: (binary: string) => Promise<string | null>;
}

/**
 * The command a user who is not root runs to install `packages`:
 * `sudo apt-get update && sudo apt-get install -y <packages>`.
 */
export function aptInstallCommand(packages: string[]): string {
  return `sudo apt-get update && sudo apt-get install -y ${packages.join(' ')}`;
}

/**
 * Makes sure a Debian package's binary is present: when `binary` is not found and we run as
 * root, runs `apt-get update` (once per process) and `apt-get install -y <packages>`; otherwise
 * throws with the exact command the user must run.
 * @param binary executable to look for (e.g. redis-server), or an absolute path (a file a package installs)
 * @param packages Debian packages that provide it
 * @param log progress callback (one line per step)
 * @param deps uid and executable lookup (tests)
 * @returns the absolute path of the binary
 * @throws Error `<binary> is not installed. Install it with:\n  <aptInstallCommand>` when the binary is
 *   missing and we are not root; Error when apt-get is missing or fails, or the binary is still
 *   missing after the install
 */
export async function ensureDebianPackage(
  binary: string,
  packages: string[],
  log: (line: string) => void = () => {},
  deps: AptDeps = {},
): Promise<string> {
  const find = deps.which ?? which;
  const found = await find(binary);
  if (found) return found;
  if ((deps.uid ?? process.getuid?.()) !== 0) {
    throw new Error(`${binary} is not installed. Install it with:\n  ${aptInstallCommand(packages)}`);
  }
  if (!(await find('apt-get'))) {
    throw new Error(
      `${binary} is not installed, and there is no apt-get here: install ${packages.join(' ')} ` +
        "with this system's package manager",
    );
  }
  log(`${binary} is missing: installing ${packages.join(' ')} with apt-get ...`);
  const env = { ...inheritedEnv(), DEBIAN_FRONTEND: 'noninteractive' };
  if (!updated) {
    await execa('apt-get', ['update', '-qq'], { env });
    updated = true;
  }
  await execa('apt-get', ['install', '-y', '-qq', ...packages], { env });
  const after = await find(binary);
  if (!after) throw new Error(`${binary} still missing after apt-get install ${packages.join(' ')}`);
  return after;
}

/**
 * Finds an executable on PATH, then in /usr/sbin, /usr/bin and /sbin (daemons live in sbin, which a
 * user's PATH often lacks). An absolute path (e.g. a daemon's helper `/usr/lib/dovecot/pop3`) is
 * checked as it is.
 * @returns its absolute path, or null
 */
export async function which(binary: string, pathVar: string = searchPath()): Promise<string | null> {
  if (binary.startsWith('/')) {
    try {
      await access(binary, constants.X_OK);
      return binary;
    } catch {
      return null;
    }
  }
  for (const dir of pathVar.split(':').filter(Boolean).concat(['/usr/sbin', '/usr/bin', '/sbin'])) {
    const p = `${dir}/${binary}`;
    try {
      await access(p, constants.X_OK);
      return p;
    } catch {
      /* keep looking */
    }
  }
  return null;
}
