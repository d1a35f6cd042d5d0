/**
 * Helpers of the fault tests (test/faults/, issue 7): the real Procfile processes, started the way
 * bin/dev.ts starts them (lib/infra/procfile.ts spawnProcess: `/bin/sh -c "exec <command>"` in its
 * own process group), with their output captured; polling with generous bounds.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  isRunning,
  readProcfile,
  signalProcess,
  spawnProcess,
  type ExitInfo,
  type RunningProcess,
} from '../../lib/infra/procfile.js';
import { waitFor } from '../helpers/events.js';

export { waitFor };

/** The repository root (the processes' working directory). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A process type of the Procfile, running, with its output. */
export interface Proc {
  proc: RunningProcess;
  /** Everything it printed so far (stdout and stderr, with the "name |" prefix). */
  output(): string;
  /** Resolves with how it ended. */
  exited: Promise<ExitInfo>;
  /** Sends a signal to its whole process group (what `kill -<sig> -<pgid>` does). */
  signal(sig: NodeJS.Signals): void;
  /** Polls the output for `re` (bounded); fails early, with the output, when the process exits. */
  waitForLine(re: RegExp, what: string, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** True until it exited. */
  running(): boolean;
}

/** A Writable that appends what it gets to `into`. */
function sink(into: { text: string }): Writable {
  return new Writable({
    write(chunk, _enc, cb) {
      into.text += chunk.toString();
      cb();
    },
  });
}

/**
 * Starts a Procfile process type (web, worker, mail) exactly as the launcher does, with `env` on top
 * of this process's environment.
 */
export function startProcfile(name: 'web' | 'worker' | 'mail', env: Record<string, string>): Proc {
  const entry = readProcfile(ROOT).find((e) => e.name === name);
  if (!entry) throw new Error(`no ${name} in the Procfile`);
  const buf = { text: '' };
  const proc = spawnProcess(entry, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    color: false,
    out: sink(buf),
    err: sink(buf),
  });
  let done = false;
  const exited = proc.exited.then((info) => {
    done = true;
    return info;
  });
  return {
    proc,
    output: () => buf.text,
    exited,
    signal: (sig) => signalProcess(proc, sig),
    running: () => isRunning(proc),
    waitForLine: (re, what, timeoutMs = 120_000) =>
      waitFor(
        what,
        async () => {
          const m = buf.text.match(re);
          if (!m && done) throw new Error(`${name} exited before ${what}:\n${buf.text.slice(-3000)}`);
          return m;
        },
        timeoutMs,
        50,
      ),
  };
}

/** SIGKILLs the process group of every process still running (test cleanup). */
export async function killAll(procs: Proc[]): Promise<void> {
  for (const p of procs) if (p.running()) p.signal('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
}

/** A fresh APP_KEY (64 hex characters). */
export function appKey(): string {
  return randomBytes(32).toString('hex');
}

/** The pino JSON lines of an output (prefix stripped), parsed; other lines skipped. */
export function jsonLines(output: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of output.split('\n')) {
    const i = line.indexOf('{');
    if (i < 0) continue;
    try {
      out.push(JSON.parse(line.slice(i)));
    } catch {
      /* not JSON */
    }
  }
  return out;
}

/** Milliseconds since `t0`. */
export function since(t0: number): number {
  return Date.now() - t0;
}
