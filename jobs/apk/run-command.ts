import readline from 'node:readline';
import { execa } from 'execa';

/**
 * Runs one build step (npm, Gradle) in its own process group (issue 12 item 6): execa with
 * `detached: true` (the child leads a new group), `cancelSignal` and `forceKillAfterDelay`; when the
 * signal fires the whole group gets SIGTERM and, after `forceKillAfterMs`, SIGKILL; once the leader
 * has exited, whatever is left of the group (a daemon, a child that ignored SIGTERM) is killed too.
 * Output (stdout and stderr interleaved) is handed over line by line.
 */

/** Options of runCommand. */
export interface RunCommandOptions {
  cwd: string;
  /** The child's whole environment (the worker's own is not inherited: no DATABASE_URL or APP_KEY leaks). */
  env: Record<string, string>;
  /** Aborting it stops the group (time limit, cancel, shutdown). */
  signal: AbortSignal;
  /** SIGTERM -> SIGKILL delay, in ms (issue 12: 10 s). */
  forceKillAfterMs: number;
  /** Called for each output line, in order; awaited (back-pressure on the reader). */
  onLine(line: string): Promise<void> | void;
}

/** How a step ended. */
export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  /** True when options.signal stopped it. */
  aborted: boolean;
  /** The group leader's pid (tests check no process of the group is left). */
  pid: number | undefined;
}

/** Sends a signal to every process of a group; false when none is left (ESRCH). */
export function signalGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `file args` and resolves when it and its group are gone. Never rejects for a non-zero exit.
 * @throws Error when the command cannot be started at all (ENOENT, EACCES)
 */
export async function runCommand(file: string, args: string[], opts: RunCommandOptions): Promise<RunResult> {
  const sub = execa(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    extendEnv: false,
    detached: true,
    cancelSignal: opts.signal,
    forceKillAfterDelay: opts.forceKillAfterMs,
    killSignal: 'SIGTERM',
    all: true,
    buffer: false,
    reject: false,
    stdin: 'ignore',
    windowsHide: true,
  });
  const pid = sub.pid;
  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    if (!pid) return;
    signalGroup(pid, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(pid, 'SIGKILL'), opts.forceKillAfterMs);
  };
  if (opts.signal.aborted) onAbort();
  else opts.signal.addEventListener('abort', onAbort, { once: true });
  const reading = (async () => {
    if (!sub.all) return;
    const rl = readline.createInterface({ input: sub.all, crlfDelay: Infinity });
    for await (const line of rl) await opts.onLine(line);
  })();
  try {
    const result = await sub;
    await reading.catch(() => undefined);
    if (result.failed && result.exitCode === undefined && !result.signal && !result.isCanceled && result.cause) {
      throw result.cause instanceof Error ? result.cause : new Error(String(result.cause));
    }
    return {
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      aborted: opts.signal.aborted,
      pid,
    };
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
    clearTimeout(killTimer);
    // the leader is gone: nothing of its group may outlive the step
    if (pid) signalGroup(pid, 'SIGKILL');
  }
}
