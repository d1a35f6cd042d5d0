/**
 * `npm run bench -- external-list [--duration 8] [--keep] [--compare <checkout> [--rounds 5]]` (issue 2, "Benchmark").
 * A tenant with 100,000 customers (and a second tenant with 100,000 more), driven by autocannon
 * over loopback (10 connections) against the real app (child process, real integration token,
 * real rate limiter) and, in the same run, against two bare node:http + pg servers over the same
 * table: (a) the page by an index scan, no count; (b) the naive way with count(*) and OFFSET.
 * Prints every figure and the ratios the issue sets as targets.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { freePort } from '../lib/infra/free-port.js';
import { createToken } from '../api/tokens/service.js';
import { TenantScope } from '../db/tenant-scope.js';
import { checkTotals, startApp, startBaselines, startWorld, waitDbIdle, waitPort } from './list-bench.js';
import { arg, cannon, measureLines, targetLines } from './list-lines.js';

/**
 * With `--cpu-prof <dir>`, the node flags that write a V8 CPU profile of a web process into
 * <dir>/<side>/ when it stops (open it in Chrome DevTools); none otherwise.
 */
function profileFlags(side: 'before' | 'after'): string[] {
  const dir = arg(process.argv.slice(2), 'cpu-prof', '');
  return dir ? ['--cpu-prof', '--cpu-prof-dir', path.join(path.resolve(dir), side)] : [];
}

/** The lines of the comparison (`--compare`, `--lines p1,s1` picks some): query string per line name. */
const COMPARE_LINES = [
  ['p1', '&page=1'],
  ['p900', '&page=900'],
  ['s1', '&status=suspended&page=1'],
  ['s900', '&status=suspended&page=90'],
  ['search', '&search=budi%20santoso&page=1'],
] as const;

/**
 * `--compare <checkout>`: a before/after measurement that does not depend on the machine's load.
 * Starts a second web process from another checkout (e.g. a `git worktree` of the commit before a
 * change) on the same database and Redis, then measures the two apps in alternating bursts
 * (`--rounds` rounds, each line once per app per round, the order of the two flipped every round),
 * so both sides share whatever else the machine is doing. Prints per line the median req/s of each
 * side and the median of the per-round ratios after/before (1.00 = equal; the issues' "no ratio more
 * than 5% worse" is a ratio >= 0.95), and the CPU time each web process spent per request (from
 * /proc/<pid>/stat: a measure that other load on the machine barely moves).
 * @param args the command line (`--rounds`, default 5)
 * @param dir the other checkout's root (its own node_modules or a symlink to ours)
 * @param env the environment of this checkout's app (a new PORT is chosen for the other one)
 */
async function compareCheckouts(
  args: string[],
  afterPid: number | undefined,
  dir: string,
  env: Record<string, string | undefined>,
  appUrl: (q: string) => string,
  auth: Record<string, string>,
  duration: number,
  children: ResultPromise[],
): Promise<void> {
  const rounds = Number(arg(args, 'rounds', '5'));
  const port = await freePort();
  const other = execa('node', [...profileFlags('before'), '--import', 'tsx', 'api/server.ts'], {
    cwd: path.resolve(dir),
    env: { ...env, PORT: String(port) },
    stdout: 'ignore',
    stderr: 'inherit',
    reject: false,
    cleanup: true,
  });
  children.push(other);
  await waitPort(port);
  const afterBase = new URL(appUrl('')).origin;
  const beforeUrl = (q: string) => appUrl(q).replace(afterBase, `http://127.0.0.1:${port}`);
  /** CPU time (user + system) the process has used so far, in ms (Linux /proc; clock ticks of 10 ms). */
  const cpuMs = async (pid: number | undefined) => {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return stat ? (Number(f[11]) + Number(f[12])) * 10 : NaN;
  };
  const cpu: Record<string, { before: number[]; after: number[] }> = {};
  /** One burst: req/s, and the serving process's CPU ms per request into cpu[line][side]. */
  const burst = async (line: string, side: 'before' | 'after', url: string, pid: number | undefined) => {
    const c0 = await cpuMs(pid);
    const r = await cannon(url, auth, duration);
    const used = (await cpuMs(pid)) - c0;
    (cpu[line] ??= { before: [], after: [] })[side].push(used / Math.max(1, r.requests.total));
    return r.requests.average as number;
  };
  for (const [, q] of COMPARE_LINES) {
    await cannon(appUrl(q), auth, 2);
    await cannon(beforeUrl(q), auth, 2);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const seen: Record<string, { before: number[]; after: number[]; ratio: number[] }> = {};
  const only = arg(args, 'lines', '').split(',').filter(Boolean);
  const lines = COMPARE_LINES.filter(([name]) => !only.length || only.includes(name));
  for (let r = 0; r < rounds; r++) {
    for (const [name, q] of lines) {
      const s = (seen[name] ??= { before: [], after: [], ratio: [] });
      let a: number, b: number;
      if (r % 2 === 0) {
        b = await burst(name, 'before', beforeUrl(q), other.pid);
        a = await burst(name, 'after', appUrl(q), afterPid);
      } else {
        a = await burst(name, 'after', appUrl(q), afterPid);
        b = await burst(name, 'before', beforeUrl(q), other.pid);
      }
      s.before.push(b);
      s.after.push(a);
      s.ratio.push(a / b);
    }
    console.log(`round ${r + 1}/${rounds} done (load ${os.loadavg()[0].toFixed(2)})`);
  }
  console.log(
    `\nbefore = ${path.resolve(dir)}, after = this checkout; ${rounds} rounds of ${duration} s per line and side`,
  );
  console.log(
    'line      before req/s  after req/s  after/before (median of rounds; min..max)   CPU ms/request before, after (medians)',
  );
  for (const [name] of lines) {
    const s = seen[name];
    console.log(
      `${name.padEnd(8)} ${median(s.before).toFixed(0).padStart(12)} ${median(s.after).toFixed(0).padStart(12)}  ${median(s.ratio).toFixed(2)} (${Math.min(...s.ratio).toFixed(2)}..${Math.max(...s.ratio).toFixed(2)})${median(s.ratio) < 0.95 ? ' WORSE by >5%' : ''}`.padEnd(
        72,
      ) + `  ${median(cpu[name].before).toFixed(3)}, ${median(cpu[name].after).toFixed(3)}`,
    );
  }
}

/** Runs the benchmark. */
export async function run(args: string[]): Promise<void> {
  const duration = Number(arg(args, 'duration', '8'));
  const world = await startWorld();
  try {
    const { token } = await createToken(new TenantScope(world.knex, world.a.tenant.id), world.a.admin.id, {
      name: 'bench',
      access: 'read',
    });
    const app = await startApp(world, profileFlags('after'));
    const basePorts = await startBaselines(world);
    const auth = { authorization: `Bearer ${token}`, accept: 'application/json' };
    const appUrl = (q: string) => `http://127.0.0.1:${app.port}/api/external/v1/customers?per_page=100${q}`;
    const baseUrl = (m: 'a' | 'b', q: string) => `http://127.0.0.1:${basePorts[m]}/?per_page=100${q}`;

    // correctness first: the app's totals are exact
    await checkTotals(world, appUrl, auth);

    const compareDir = arg(args, 'compare', '');
    if (compareDir) {
      const env = { ...world.env, PORT: String(app.port) };
      await compareCheckouts(args, app.child.pid, compareDir, env, appUrl, auth, duration, world.children);
      return;
    }

    const R = await measureLines(appUrl, baseUrl, auth, duration, 1, () => waitDbIdle(world));
    console.log(targetLines(R).join('\n'));
  } finally {
    await world.stop(args.includes('--keep'));
  }
}
