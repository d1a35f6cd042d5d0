/**
 * `npm test`'s mocha step: the test files split into shards, each shard one mocha process with its
 * own PostgreSQL, Redis and Dovecot (test/helpers/setup.ts starts them per process), run at the same
 * time. Most of the suite waits on real processes (web, workers, Dovecot, PostgreSQL), so two shards
 * on two cores take well under the time of one.
 *
 * Usage: `tsx bin/test.ts [--checks] [--shards N] [--record] [file or folder ...]` (default: every
 * test/**\/*.test.ts). N: `--shards`, else TEST_SHARDS, else 2 (1 when the machine has one core).
 * - `--checks` (what `npm test` passes): the static checks (tsc, eslint, prettier --check,
 *   dependency-cruiser; CHECKS below) run one after another in a process of their own while the
 *   shards run; their output is printed when they end, and a failed check fails the run.
 * - Files are dealt to shards by their last recorded wall time (test/durations.json; `--record`
 *   rewrites it from this run), longest first, each to the least loaded shard. A file without a
 *   record counts as the median.
 * - test/zz-no-secrets.test.ts runs last in every shard: it checks that shard's own database, Redis
 *   and output (it asserts it is the last suite of its process).
 * - The cut-over test mode (issue 15): the files of TENANT_DB_DIRS (minus TENANT_DB_EXCLUDED) run a
 *   second time with TEST_TENANT_DB=1 (test/helpers/tenant-db-mode.ts: every tenant they make is
 *   cut over to its own database). Each is a work item of its own (`tenant_db:<file>` in
 *   test/durations.json) dealt with the others; a shard runs its mode items in a second mocha
 *   process after its normal files, with TENANT_DB_LAST (the mode's own checks) last.
 * - Each shard's spec output is printed whole when the shard ends (shards never interleave); a line
 *   every 60 s says the run is alive. On SIGINT/SIGTERM the shards are stopped and what they printed
 *   so far is shown. At the end, each failed shard's mocha failure report is printed again
 *   (failureSummary) before the PASS/FAIL line, whose counts are mocha's summary lines (summaryCounts).
 * Exit code: 0 when every shard passed, else 1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { inheritedEnv } from '../lib/config.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const DURATIONS = path.join(ROOT, 'test', 'durations.json');
const LAST = 'test/zz-no-secrets.test.ts';
/**
 * Folders whose files also run on cut-over tenants (issue 15: #2's external API; #6's customers,
 * invoices, tickets).
 */
export const TENANT_DB_DIRS = ['test/api/external', 'test/api/customers', 'test/api/invoices', 'test/api/tickets'];
/** Files of TENANT_DB_DIRS that do not run in the cut-over mode, with the reason (docs/decisions.md "Issue 15"). */
export const TENANT_DB_EXCLUDED: Record<string, string> = {
  'test/api/customers/seed.test.ts': 'db/seeds write the shared database: demo tenants are never cut over',
};
/** The cut-over mode's own checks (crons on the tenant database, shared rows untouched): last in each mode process. */
const TENANT_DB_LAST = 'test/api/tenant-db-mode/cut-over.test.ts';
/** Key prefix of a mode item (test/durations.json, shard lists). */
export const TENANT_DB_PREFIX = 'tenant_db:';

/** The static checks of `--checks`, in order; the first that fails stops the rest. */
const CHECKS = 'tsc --noEmit -p . && npm run -s lint && npm run -s format:check && npm run -s deps:check';

/** Every `*.test.ts` under `dir` (relative to the repository root, `/` separators), sorted. */
export function listTestFiles(dir: string): string[] {
  const abs = path.resolve(ROOT, dir);
  if (fs.statSync(abs).isFile()) return [path.relative(ROOT, abs).split(path.sep).join('/')];
  const out: string[] = [];
  for (const entry of fs.readdirSync(abs, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.test.ts')) continue;
    const full = path.join(entry.parentPath, entry.name);
    if (full.split(path.sep).includes('node_modules')) continue;
    out.push(path.relative(ROOT, full).split(path.sep).join('/'));
  }
  return out.sort();
}

/**
 * Deals `files` to `n` shards, longest first, each to the shard with the least total so far
 * (LPT scheduling). `seconds` holds recorded wall times; a file without one counts as the median.
 * Each shard keeps the files in name order (the order mocha would use).
 * @returns n arrays of file names (some may be empty when there are fewer files than shards)
 */
export function dealShards(files: string[], n: number, seconds: Record<string, number>): string[][] {
  const known = files.map((f) => seconds[f]).filter((s): s is number => typeof s === 'number');
  known.sort((a, b) => a - b);
  const median = known.length ? known[Math.floor(known.length / 2)]! : 1;
  const weight = (f: string) => seconds[f] ?? median;
  const shards = Array.from({ length: n }, () => ({ total: 0, files: [] as string[] }));
  for (const f of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const target = shards.reduce((min, s) => (s.total < min.total ? s : min));
    target.files.push(f);
    target.total += weight(f);
  }
  return shards.map((s) => s.files.sort());
}

/**
 * The cut-over mode's work items among `files`: `tenant_db:<file>` for each file under
 * TENANT_DB_DIRS not in TENANT_DB_EXCLUDED.
 */
export function tenantDbItems(files: string[]): string[] {
  return files
    .filter((f) => TENANT_DB_DIRS.some((d) => f.startsWith(`${d}/`)) && !(f in TENANT_DB_EXCLUDED))
    .map((f) => `${TENANT_DB_PREFIX}${f}`);
}

interface Shard {
  index: number;
  files: string[];
  /** Files this shard runs again in the cut-over mode (TEST_TENANT_DB=1), TENANT_DB_LAST included. */
  tenantDbFiles: string[];
  child?: ChildProcess;
  output: string;
  timings: string;
  tenantDbTimings: string;
  code?: number | null;
  passing?: number;
  failing?: number;
}

function parseArgs(argv: string[]) {
  let shards = Number(inheritedEnv().TEST_SHARDS) || (os.availableParallelism() > 1 ? 2 : 1);
  let record = false;
  let checks = false;
  const targets: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--shards') shards = Number(argv[++i]);
    else if (a === '--record') record = true;
    else if (a === '--checks') checks = true;
    else targets.push(a);
  }
  if (!Number.isInteger(shards) || shards < 1) throw new Error('--shards: a whole number >= 1');
  return { shards, record, checks, targets: targets.length ? targets : ['test'] };
}

function readDurations(): Record<string, number> {
  try {
    return JSON.parse(fs.readFileSync(DURATIONS, 'utf8'));
  } catch {
    return {};
  }
}

/** Runs one mocha process of a shard; resolves with its exit code (its output is added to the shard's). */
function runMocha(shard: Shard, files: string[], extraEnv: Record<string, string>): Promise<number | null> {
  const mocha = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
  const reporter = path.join(ROOT, 'test', 'helpers', 'timing-reporter.cjs');
  const child = spawn(process.execPath, [mocha, '--reporter', reporter, ...files], {
    cwd: ROOT,
    env: { ...inheritedEnv(), TEST_SHARD: String(shard.index), ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so a stop reaches everything it started
  });
  shard.child = child;
  child.stdout!.on('data', (b: Buffer) => (shard.output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (shard.output += b.toString()));
  return endOf(child);
}

/** A shard: its files in one mocha process, then its cut-over mode files (if any) in a second one. */
async function runShard(shard: Shard): Promise<void> {
  const codes: (number | null)[] = [];
  if (shard.files.length) codes.push(await runMocha(shard, shard.files, { TEST_TIMINGS_OUT: shard.timings }));
  if (shard.tenantDbFiles.length) {
    shard.output += `\n----- cut-over mode (TEST_TENANT_DB=1): ${shard.tenantDbFiles.length} files -----\n`;
    codes.push(
      await runMocha(shard, shard.tenantDbFiles, { TEST_TENANT_DB: '1', TEST_TIMINGS_OUT: shard.tenantDbTimings }),
    );
  }
  shard.code = codes.find((c) => c !== 0) ?? 0;
  Object.assign(shard, summaryCounts(shard.output));
}

/**
 * The passing and failing counts of a shard's output: the sums of mocha's own summary lines
 * ("  108 passing (54s)", "  1 failing"), colour codes removed. Only whole lines count, so a test
 * that prints "3 passing" inside a line of its own output adds nothing.
 * @param output one or more mocha processes' spec output
 */
export function summaryCounts(output: string): { passing: number; failing: number } {
  const plain = stripVTControlCharacters(output);
  const sum = (re: RegExp) => [...plain.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  return { passing: sum(/^ *(\d+) passing \(\d+[a-z]+\) *$/gm), failing: sum(/^ *(\d+) failing *$/gm) };
}

/**
 * Resolves with the exit code of `child` (started `detached`, so it leads a process group) once it
 * exited and its output pipes are drained. Whatever it left running in its group (a stray sandbox
 * child that would hold the pipes open and hang the run) is killed with SIGKILL; after 5 s the
 * pipes are given up on.
 */
function endOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    let code: number | null = null;
    const closed = new Promise<void>((r) => child.on('close', () => r()));
    child.on('exit', (c, signal) => {
      code = c ?? (signal ? 128 : null);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* the group is already empty */
      }
      void Promise.race([closed, new Promise((r) => setTimeout(r, 5000).unref())]).then(() => resolve(code));
    });
  });
}

/** Runs the static checks (CHECKS) in a shell of their own; resolves with their exit code and output. */
function runChecks(): { child: ChildProcess; done: Promise<{ code: number | null; output: string }> } {
  const child = spawn(CHECKS, { cwd: ROOT, shell: true, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  return { child, done: endOf(child).then((code) => ({ code, output })) };
}

/**
 * The failure reports of one shard's output, for repeating at the end of the run (a CI log that
 * keeps only its tail still shows what failed): each mocha process's block from "N failing" to its
 * end; for a shard that failed without one (a crash, a hook that never returned), the last lines
 * of its output. At most `max` characters, the rest cut.
 * @param output a shard's whole output (one or two mocha processes, separated by the cut-over line)
 * @param failed whether the shard's exit code was non-zero
 * @returns the text to print, or '' when there is nothing to repeat
 */
export function failureSummary(output: string, failed: boolean, max = 12_000): string {
  const plain = stripVTControlCharacters(output);
  const blocks = plain
    .split(/\n----- cut-over mode[^\n]*\n/)
    .map((part) => /\n\s*\d+ failing\b[\s\S]*$/.exec(part)?.[0].trim() ?? '')
    .filter(Boolean);
  let text = blocks.join('\n\n');
  if (!text && failed)
    text = `(no mocha failure report; the output's last lines)\n${plain.trimEnd().split('\n').slice(-40).join('\n')}`;
  return text.length > max
    ? `${text.slice(0, max)}\n... (${text.length - max} more characters in the shard output above)`
    : text;
}

function printShard(shard: Shard, label = 'output') {
  process.stdout.write(`\n===== shard ${shard.index + 1}: ${label} (${shard.files.length} files) =====\n`);
  process.stdout.write(shard.output.endsWith('\n') ? shard.output : `${shard.output}\n`);
}

async function main() {
  const { shards: n, record, checks, targets } = parseArgs(process.argv.slice(2));
  const all = [...new Set(targets.flatMap(listTestFiles))];
  const withLast = all.includes(LAST);
  const files = all.filter((f) => f !== LAST);
  const durations = readDurations();
  const modeItems = tenantDbItems(all);
  const items = [...files, ...modeItems];
  const dealt = dealShards(items, Math.min(n, Math.max(1, items.length)), durations);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'isp-test-run-'));
  const shards: Shard[] = dealt.map((f, index) => {
    const normal = f.filter((x) => !x.startsWith(TENANT_DB_PREFIX));
    const mode = f.filter((x) => x.startsWith(TENANT_DB_PREFIX)).map((x) => x.slice(TENANT_DB_PREFIX.length));
    return {
      index,
      files: withLast ? [...normal, LAST] : normal,
      tenantDbFiles: mode.length ? [...mode, TENANT_DB_LAST] : [],
      output: '',
      timings: path.join(tmp, `timings-${index}.json`),
      tenantDbTimings: path.join(tmp, `timings-${index}-tenant-db.json`),
    };
  });
  const t0 = Date.now();
  console.log(
    `${all.length} test files in ${shards.length} shard(s), run at the same time: ` +
      shards.map((s) => `${s.files.length} files + ${s.tenantDbFiles.length} cut-over`).join(', '),
  );

  const check = checks ? runChecks() : null;
  const checked = check?.done.then((r) => {
    process.stdout.write(`\n===== static checks (${CHECKS}) =====\n${r.output}`);
    console.log(`static checks ended after ${Math.round((Date.now() - t0) / 1000)} s (exit ${r.code})`);
    return r.code;
  });
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const s of [...shards, ...(check ? [{ child: check.child }] : [])]) {
      if (s.child && s.child.exitCode === null && s.child.pid) {
        try {
          process.kill(-s.child.pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
      }
    }
    for (const s of shards) printShard(s, `stopped by ${signal}, printed so far`);
    process.exit(1);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const alive = setInterval(() => {
    const done = shards.map((s) => (s.output.match(/✔|✓/g) ?? []).length);
    console.log(`... ${Math.round((Date.now() - t0) / 1000)} s, tests passed so far per shard: ${done.join(', ')}`);
  }, 60_000);

  await Promise.all(
    shards.map((s) =>
      runShard(s).then(() => {
        printShard(s);
        console.log(`shard ${s.index + 1} ended after ${Math.round((Date.now() - t0) / 1000)} s (exit ${s.code})`);
      }),
    ),
  );
  const checksCode = await checked;
  clearInterval(alive);

  const seconds: Record<string, number> = {};
  for (const s of shards) {
    try {
      Object.assign(seconds, JSON.parse(fs.readFileSync(s.timings, 'utf8')));
    } catch {
      /* the shard died before its end */
    }
    try {
      const mode = JSON.parse(fs.readFileSync(s.tenantDbTimings, 'utf8')) as Record<string, number>;
      for (const [f, sec] of Object.entries(mode)) seconds[`${TENANT_DB_PREFIX}${f}`] = sec;
    } catch {
      /* no cut-over process, or it died before its end */
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  const slowest = Object.entries(seconds)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8);
  if (slowest.length) console.log(`\nslowest files: ${slowest.map(([f, s]) => `${f} ${s} s`).join(', ')}`);
  if (record) {
    const merged = { ...durations, ...seconds };
    const kept = Object.fromEntries(
      Object.entries(merged).filter(([f]) => fs.existsSync(path.join(ROOT, f.replace(TENANT_DB_PREFIX, '')))),
    );
    const sorted = Object.fromEntries(
      Object.keys(kept)
        .sort()
        .map((f) => [f, kept[f]]),
    );
    fs.writeFileSync(DURATIONS, `${JSON.stringify(sorted, null, 2)}\n`);
    console.log(`recorded ${Object.keys(seconds).length} file times in test/durations.json`);
  }
  const ok = shards.every((s) => s.code === 0) && (checksCode === undefined || checksCode === 0);
  for (const s of shards) {
    const summary = failureSummary(s.output, s.code !== 0);
    if (summary) process.stdout.write(`\n===== shard ${s.index + 1}: failures, repeated =====\n${summary}\n`);
  }
  const passing = shards.reduce((a, s) => a + (s.passing ?? 0), 0);
  const failing = shards.reduce((a, s) => a + (s.failing ?? 0), 0);
  console.log(
    `\n${ok ? 'PASS' : 'FAIL'}: ${passing} passing, ${failing} failing, ${shards.length} shard(s), ` +
      `${Math.round((Date.now() - t0) / 1000)} s` +
      (ok
        ? ''
        : `; failed shard(s): ${shards.filter((s) => s.code !== 0).map((s) => `${s.index + 1} (exit ${s.code})`)}`),
  );
  process.exit(ok ? 0 : 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
