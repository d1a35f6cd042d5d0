import { execa } from 'execa';

/** apt-get update runs at most once per process. */
let updated = false;

/**
 * Makes sure a Debian package's binary is present: when `binary` is not on PATH and we run as
 * root, runs `apt-get update` (once per process) and `apt-get install -y <packages>`; otherwise
 * throws with the exact command the user must run.
 * @param binary executable to look for (e.g. redis-server)
 * @param packages Debian packages that provide it
 * @param log progress callback (one line per step)
 * @returns the absolute path of the binary
 * @throws Error naming the apt-get command to run when the binary is missing and we are not root, or still missing after the install
 */
export async function ensureDebianPackage(binary: string, packages: string[], log: (line: string) => void = () => {}): Promise<string> {
  const found = await which(binary);
  if (found) return found;
  const cmd = `apt-get update && apt-get install -y ${packages.join(' ')}`;
  if (process.getuid?.() !== 0) {
    throw new Error(`${binary} is not installed. Install it with:\n  sudo ${cmd.replace('&& apt-get', '&& sudo apt-get')}`);
  }
  log(`${binary} is missing: installing ${packages.join(' ')} with apt-get ...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!updated) { await execa('apt-get', ['update', '-qq'], { env }); updated = true; }
  await execa('apt-get', ['install', '-y', '-qq', ...packages], { env });
  const after = await which(binary);
  if (!after) throw new Error(`${binary} still missing after apt-get install ${packages.join(' ')}`);
  return after;
}

async function which(binary: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin', '/sbin'])) {
    const p = `${dir}/${binary}`;
    try {
      const { access, constants } = await import('node:fs/promises');
      await access(p, constants.X_OK);
      return p;
    } catch { /* keep looking */ }
  }
  return null;
}
