/**
 * The measured lines of the customer-list benchmarks (bench/external-list.ts, issue 2;
 * bench/admin-customers.ts, issue 8): autocannon over loopback (10 connections, a 2 s warm-up per
 * line), the lines of issue 2 against the app and the two bare baselines, their medians over
 * rounds, and the table of issue 2's targets. The world they run against: bench/list-bench.ts.
 */
// @ts-expect-error autocannon ships no types
import autocannon from 'autocannon';

/** One measured line: autocannon's throughput (req/s) and latency (ms; p50 and p99 whole ms). */
export interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  errors: number;
  non2xx: number;
}

/** The value after `--name` on the command line, else `def`. */
export function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : def;
}

/** autocannon: 10 connections for `duration` seconds. */
export function cannon(url: string, headers: Record<string, string>, duration: number): Promise<any> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 10, duration, headers }, (err: unknown, res: unknown) =>
      err ? reject(err) : resolve(res),
    );
  });
}

/** Prints one line's figures. */
function printResult(name: string, res: Result): void {
  console.log(
    `${name.padEnd(34)} ${res.rps.toFixed(0).padStart(6)} req/s  p50 ${String(res.p50).padStart(4)} ms  p99 ${String(res.p99).padStart(4)} ms  mean ${res.mean.toFixed(1).padStart(6)} ms${res.non2xx || res.errors ? `  (non2xx ${res.non2xx}, errors ${res.errors})` : ''}`,
  );
}

/** A 2 s warm-up, then one measured line (printed). */
export async function measure(
  name: string,
  url: string,
  headers: Record<string, string>,
  duration: number,
): Promise<Result> {
  await cannon(url, headers, 2); // warm-up
  const r = await cannon(url, headers, duration);
  const res = {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    mean: r.latency.mean,
    errors: r.errors,
    non2xx: r.non2xx,
  };
  printResult(name, res);
  return res;
}

/**
 * Measures the lines of issue 2: pages 1 and 900 plain, pages 1 and 90 with status=suspended (app,
 * bare (a), naive (b) each), and two searches on the app. Every app line is warmed up once before
 * any is measured (a fresh process's JIT and first statement preparations would otherwise fall on
 * the first line measured alone; bench/README.md, issue 8). With `rounds` > 1 the whole set is
 * measured that many times and each figure is the median of its rounds, so that one burst of
 * machine noise moves one round, not the result.
 * @param duration seconds per line and round
 * @param settle resolves when the database is idle again after a baseline line (default: 5 s)
 * @returns line key -> result (`app.p1`, `a.p1`, `b.p1`, ..., `app.search`, `app.search1`)
 */
export async function measureLines(
  appUrl: (q: string) => string,
  baseUrl: (m: 'a' | 'b', q: string) => string,
  auth: Record<string, string>,
  duration: number,
  rounds = 1,
  settle: () => Promise<void> = () => new Promise((res) => setTimeout(res, 5000)),
): Promise<Record<string, Result>> {
  const searches = ['&search=budi%20santoso&page=1', '&search=siti&page=1'];
  const plan: [key: string, label: string, url: string, headers: Record<string, string>][] = [];
  for (const [k, q] of [
    ['p1', '&page=1'],
    ['p900', '&page=900'],
    ['s1', '&status=suspended&page=1'],
    ['s900', '&status=suspended&page=90'],
  ] as const) {
    plan.push([`app.${k}`, `app      ${k}`, appUrl(q), auth]);
    plan.push([`a.${k}`, `bare(a)  ${k}`, baseUrl('a', q), {}]);
    plan.push([`b.${k}`, `naive(b) ${k}`, baseUrl('b', q), {}]);
  }
  plan.push(['app.search', 'app      search "budi santoso"', appUrl(searches[0]), auth]);
  plan.push(['app.search1', 'app      search "siti"', appUrl(searches[1]), auth]);
  for (const [key, , url, headers] of plan) if (key.startsWith('app.')) await cannon(url, headers, 3);
  const all: Record<string, Result[]> = {};
  for (let round = 1; round <= rounds; round++) {
    if (rounds > 1) console.log(`round ${round} of ${rounds}`);
    for (const [key, label, url, headers] of plan) {
      const r = await measure(label, url, headers, duration);
      (all[key] ??= []).push(r);
      // the slow baseline lines leave requests running in PostgreSQL after autocannon stops:
      // let them finish before the next line is measured
      if (!key.startsWith('app.')) await settle();
    }
  }
  const R: Record<string, Result> = {};
  for (const [key, rs] of Object.entries(all)) R[key] = medianResult(rs);
  if (rounds > 1) {
    console.log(`\nmedian of ${rounds} rounds`);
    for (const [key, label] of plan) printResult(label, R[key]);
  }
  return R;
}

/** The median of each figure over rounds (the median of each figure on its own). */
function medianResult(rs: Result[]): Result {
  const med = (f: (r: Result) => number) => {
    const v = rs.map(f).sort((a, b) => a - b);
    return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  };
  return {
    name: rs[0].name,
    rps: med((r) => r.rps),
    p50: med((r) => r.p50),
    p99: med((r) => r.p99),
    mean: med((r) => r.mean),
    errors: rs.reduce((s, r) => s + r.errors, 0),
    non2xx: rs.reduce((s, r) => s + r.non2xx, 0),
  };
}

/** The table of issue 2's targets (and the informational ratios) from measureLines' results. */
export function targetLines(R: Record<string, Result>): string[] {
  const ratio = (x: number, y: number) => (x / y).toFixed(2);
  return [
    '',
    'target                                         figure   ok',
    `plain list throughput vs (a), >= 0.70         ${ratio(R['app.p1'].rps, R['a.p1'].rps).padStart(6)}   ${R['app.p1'].rps / R['a.p1'].rps >= 0.7 ? 'yes' : 'NO'}`,
    `status list throughput vs (a), >= 0.70        ${ratio(R['app.s1'].rps, R['a.s1'].rps).padStart(6)}   ${R['app.s1'].rps / R['a.s1'].rps >= 0.7 ? 'yes' : 'NO'}`,
    `plain list p99 <= 50 ms                       ${String(R['app.p1'].p99).padStart(6)}   ${R['app.p1'].p99 <= 50 ? 'yes' : 'NO'}`,
    `status list p99 <= 50 ms                      ${String(R['app.s1'].p99).padStart(6)}   ${R['app.s1'].p99 <= 50 ? 'yes' : 'NO'}`,
    `plain page 900 p50 / page 1 p50, <= 2         ${ratio(R['app.p900'].p50, R['app.p1'].p50).padStart(6)}   ${R['app.p900'].p50 / R['app.p1'].p50 <= 2 ? 'yes' : 'NO'}`,
    `status page 90 p50 / page 1 p50, <= 2         ${ratio(R['app.s900'].p50, R['app.s1'].p50).padStart(6)}   ${R['app.s900'].p50 / R['app.s1'].p50 <= 2 ? 'yes' : 'NO'}`,
    `search p50 / plain p50, <= 2                  ${ratio(R['app.search'].p50, R['app.p1'].p50).padStart(6)}   ${R['app.search'].p50 / R['app.p1'].p50 <= 2 ? 'yes' : 'NO'}`,
    `broad search p50 / plain p50 (info)           ${ratio(R['app.search1'].p50, R['app.p1'].p50).padStart(6)}`,
    `page 900 / page 1, mean latency (info)        ${ratio(R['app.p900'].mean, R['app.p1'].mean).padStart(6)}`,
    `status page 90 / page 1, mean latency (info)  ${ratio(R['app.s900'].mean, R['app.s1'].mean).padStart(6)}`,
    `search / plain, mean latency (info)           ${ratio(R['app.search'].mean, R['app.p1'].mean).padStart(6)}`,
    `app vs naive (b) throughput, page 1 (info)    ${ratio(R['app.p1'].rps, R['b.p1'].rps).padStart(6)}`,
    `app vs naive (b) throughput, page 900 (info)  ${ratio(R['app.p900'].rps, R['b.p900'].rps).padStart(6)}`,
  ];
}
