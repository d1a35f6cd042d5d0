import { execa, type ResultPromise } from 'execa';
import fs from 'node:fs/promises';
import { ensureDebianPackage, type AptDeps } from './apt.js';
import { freePort } from './free-port.js';

/** How a server child process ended. */
export interface ServerExit {
  code: number | null;
  signal: string | null;
}

/** A redis-server child process. */
export interface LocalRedis {
  url: string;
  port: number;
  /** The redis-server process id. */
  pid: number | undefined;
  /** Resolves when redis-server has exited, for whatever reason (stop(), a crash, kill -9). */
  exited: Promise<ServerExit>;
  stop(): Promise<void>;
}

/**
 * Starts redis-server as a child on loopback (DESIGN.md §2) with noeviction and AOF, data in `dir`.
 * Installs Debian's redis-server first when missing and running as root.
 * Resolves once Redis prints "Ready to accept connections". Any path works for `dir` (spaces
 * included: it is passed as one argument, and redis-server quotes it in its own config).
 * @param dir data directory (created)
 * @param log progress lines
 * @param opts.port TCP port on 127.0.0.1 (default: a free port); opts.apt: see ensureDebianPackage
 * @throws Error with the apt-get command to run when redis-server is missing and we are not root;
 *   Error when it exits or is not ready within 15 s (with its output)
 */
export async function startRedis(
  dir: string,
  log: (l: string) => void = () => {},
  opts: { port?: number; apt?: AptDeps } = {},
): Promise<LocalRedis> {
  const bin = await ensureDebianPackage('redis-server', ['redis-server'], log, opts.apt);
  await fs.mkdir(dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const child: ResultPromise = execa(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--maxmemory-policy',
      'noeviction',
      '--appendonly',
      'yes',
      '--dir',
      dir,
      '--save',
      '',
      '--protected-mode',
      'yes',
    ],
    { reject: false, cleanup: true },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out.slice(-500)}`)), 15000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.then((r) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${r.exitCode}): ${out.slice(-500)}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    exited: child.then((r) => ({ code: r.exitCode ?? null, signal: r.signal ?? null })),
    stop: async () => {
      child.kill('SIGTERM');
      await child;
    },
  };
}
