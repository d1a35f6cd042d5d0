import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { colorWanted, searchPath } from '../config.js';

/**
 * Procfile parsing and a small local process runner (DESIGN.md §1, TOOLCHAIN.md "Procfile
 * locally"): bin/dev.ts spawns the Procfile's process types as children, prefixes their output
 * lines with the process name, forwards signals and notices crashes.
 */

/** One process type of a Procfile. */
export interface ProcfileEntry {
  /** Process type name, e.g. "web". */
  name: string;
  /** The command as written (run through /bin/sh, so $VARS expand). */
  command: string;
  /** The command split into words (simple quoting: '...' and "..."), for inspection only. */
  words: string[];
}

/** Thrown for a malformed Procfile; the message names the line. */
export class ProcfileError extends Error {}

const LINE = /^([A-Za-z0-9_-]+):\s*(.*)$/;

/**
 * Parses a Procfile (Heroku format): one `name: command` per line; blank lines and lines starting
 * with '#' are ignored.
 * @param text the file's content
 * @returns the entries in file order
 * @throws ProcfileError for a line that is not `name: command`, an empty command or a duplicate name
 */
export function parseProcfile(text: string): ProcfileEntry[] {
  const out: ProcfileEntry[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const m = LINE.exec(line);
    if (!m) throw new ProcfileError(`Procfile line ${i + 1}: expected "name: command", got "${line}"`);
    const [, name, command] = m;
    if (!command.trim()) throw new ProcfileError(`Procfile line ${i + 1}: process type "${name}" has no command`);
    if (out.some((e) => e.name === name))
      throw new ProcfileError(`Procfile line ${i + 1}: process type "${name}" is defined twice`);
    out.push({ name, command: command.trim(), words: splitWords(command.trim()) });
  });
  return out;
}

/** Splits a command line into words, honouring single and double quotes (no escapes beyond \" in "..."). */
export function splitWords(command: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && command[i + 1] === '"') {
        cur += '"';
        i++;
      } else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) {
        words.push(cur);
        cur = '';
        inWord = false;
      }
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (quote) throw new ProcfileError(`unterminated quote in "${command}"`);
  if (inWord) words.push(cur);
  return words;
}

/** True when the command has no shell operator (; & | ( ) < > ` or a newline) outside quotes. */
export function isSimpleCommand(command: string): boolean {
  let quote: string | null = null;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"') i++;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '\\') i++;
    else if (';&|()<>`\n'.includes(c)) return false;
  }
  return true;
}

/**
 * The script file a command runs (the first word after the executable that names a .ts/.js/.mjs/.cjs
 * file), or null when there is none. The launcher skips an entry whose script does not exist yet.
 */
export function entryScript(entry: ProcfileEntry): string | null {
  return entry.words.slice(1).find((w) => /\.(ts|mts|js|mjs|cjs)$/.test(w) && !w.startsWith('-')) ?? null;
}

/** Reads and parses `<dir>/Procfile`. @throws ProcfileError, or the fs error when the file is missing */
export function readProcfile(dir: string): ProcfileEntry[] {
  return parseProcfile(fs.readFileSync(path.join(dir, 'Procfile'), 'utf8'));
}

const COLORS = [36, 35, 33, 32, 34, 31, 96, 95];

/** How a child ended. */
export interface ExitInfo {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A spawned process type. */
export interface RunningProcess {
  name: string;
  child: ChildProcess;
  /** Resolves when the child has exited (never rejects; a spawn error resolves with code 127). */
  exited: Promise<ExitInfo>;
}

/** Options of spawnProcess. */
export interface SpawnOptions {
  /** Working directory (the project root); its node_modules/.bin is put first on PATH. */
  cwd: string;
  /** Environment of the child (PATH is extended). */
  env: NodeJS.ProcessEnv;
  /** Width the name is padded to in the prefix. */
  prefixWidth?: number;
  /** Index into the colour palette. */
  colorIndex?: number;
  /** Colour the prefix (default: when stdout is a TTY and NO_COLOR is unset). */
  color?: boolean;
  /** Where prefixed lines go (default process.stdout / process.stderr). */
  out?: NodeJS.WritableStream;
  err?: NodeJS.WritableStream;
}

/** "web    |" in the entry's colour. */
export function prefixFor(name: string, width: number, colorIndex: number, color: boolean): string {
  const label = `${name.padEnd(width)} |`;
  return color ? `\x1b[${COLORS[colorIndex % COLORS.length]}m${label}\x1b[0m` : label;
}

/**
 * Spawns one process type through `/bin/sh -c "exec <command>"` (one process, $VARS expanded;
 * compound commands such as `a && b` run without exec),
 * in its own process group, with node_modules/.bin first on PATH, and copies each line of its
 * stdout and stderr to ours with a "name |" prefix. Signal it with signalProcess().
 */
export function spawnProcess(entry: ProcfileEntry, opts: SpawnOptions): RunningProcess {
  const color = opts.color ?? colorWanted();
  const prefix = prefixFor(entry.name, opts.prefixWidth ?? entry.name.length, opts.colorIndex ?? 0, color);
  const bin = path.join(opts.cwd, 'node_modules', '.bin');
  const env = { ...opts.env, PATH: `${bin}${path.delimiter}${opts.env.PATH ?? searchPath()}` };
  // own process group: signals reach the command and its children (tsx runs node as a child)
  // a simple command replaces the shell (exec); a compound one (a && b) keeps it as the parent
  const script = isSimpleCommand(entry.command) ? `exec ${entry.command}` : entry.command;
  const child = spawn('/bin/sh', ['-c', script], {
    cwd: opts.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pipe = (stream: NodeJS.ReadableStream | null, to: NodeJS.WritableStream) => {
    if (!stream) return Promise.resolve();
    const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
    rl.on('line', (line) => to.write(`${prefix} ${line}\n`));
    return new Promise<void>((r) => rl.once('close', () => r()));
  };
  const outDone = pipe(child.stdout, opts.out ?? process.stdout);
  const errDone = pipe(child.stderr, opts.err ?? process.stderr);
  const exited = new Promise<ExitInfo>((resolve) => {
    let spawnError: Error | null = null;
    child.once('error', (e) => {
      spawnError = e;
    });
    child.once('close', (code, signal) => {
      Promise.all([outDone, errDone]).then(() => {
        if (spawnError) (opts.err ?? process.stderr).write(`${prefix} failed to start: ${spawnError.message}\n`);
        resolve({ name: entry.name, code: spawnError ? 127 : code, signal });
      });
    });
  });
  return { name: entry.name, child, exited };
}

/** True while the child has not exited. */
export function isRunning(p: RunningProcess): boolean {
  return p.child.exitCode === null && p.child.signalCode === null;
}

/** Sends a signal to the child's whole process group (the command and the processes it started). */
export function signalProcess(p: RunningProcess, signal: NodeJS.Signals): void {
  if (!isRunning(p) || !p.child.pid) return;
  try {
    process.kill(-p.child.pid, signal);
  } catch {
    try {
      p.child.kill(signal);
    } catch {
      /* gone */
    }
  }
}

/** Options of ProcessGroup.stop. */
export interface StopOptions {
  /** Signal sent first (default SIGTERM). */
  signal?: NodeJS.Signals;
  /** Milliseconds to wait before SIGKILL (default 15000). */
  timeoutMs?: number;
}

/**
 * Runs several process types; reports the first unexpected exit through `onExit` and stops them
 * all on request (signal, wait, then SIGKILL after a timeout).
 */
export class ProcessGroup {
  readonly processes: RunningProcess[] = [];
  private stopping = false;

  /**
   * @param entries the process types to start
   * @param opts spawn options shared by all (prefix width and colour are computed here)
   * @param onExit called once per child that exits while the group is not stopping (a crash)
   */
  constructor(entries: ProcfileEntry[], opts: SpawnOptions, onExit: (info: ExitInfo) => void) {
    const width = Math.max(...entries.map((e) => e.name.length), 3);
    entries.forEach((e, i) => {
      const p = spawnProcess(e, { ...opts, prefixWidth: width, colorIndex: i });
      p.exited.then((info) => {
        if (!this.stopping) onExit(info);
      });
      this.processes.push(p);
    });
  }

  /**
   * Sends `signal` to every child still running, waits for all to exit, and SIGKILLs those still
   * running after `timeoutMs`.
   * @returns the exit infos
   */
  async stop(opts: StopOptions = {}): Promise<ExitInfo[]> {
    this.stopping = true;
    const signal = opts.signal ?? 'SIGTERM';
    for (const p of this.processes) signalProcess(p, signal);
    const timer = setTimeout(() => {
      for (const p of this.processes) signalProcess(p, 'SIGKILL');
    }, opts.timeoutMs ?? 15_000);
    try {
      return await Promise.all(this.processes.map((p) => p.exited));
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILLs every child still running (last resort when the launcher itself exits). */
  killAll(): void {
    this.stopping = true;
    for (const p of this.processes) signalProcess(p, 'SIGKILL');
  }
}
