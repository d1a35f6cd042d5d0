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
import { randomBytes } from 'node:crypto';
import { execa, type ResultPromise } from 'execa';
// @ts-expect-error autocannon ships no types
import autocannon from 'autocannon';
import { startEmbeddedPostgres } from '../lib/infra/postgres.js';
import { startRedis } from '../lib/infra/redis.js';
import { freePort, portOpen } from '../lib/infra/free-port.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { createTenant } from '../api/tenants/service.js';
import { createToken } from '../api/tokens/service.js';
import { TenantScope } from '../db/tenant-scope.js';
import { inheritedEnv } from '../lib/config.js';

const N = 100_000;
const FIRST = [
  'Budi',
  'Siti',
  'Agus',
  'Dewi',
  'Andi',
  'Rina',
  'Joko',
  'Sri',
  'Eko',
  'Wati',
  'Hadi',
  'Yuni',
  'Rudi',
  'Lina',
  'Dian',
  'Tono',
  'Ayu',
  'Bayu',
  'Nina',
  'Fajar',
];
const LAST = [
  'Santoso',
  'Wijaya',
  'Saputra',
  'Lestari',
  'Pratama',
  'Hidayat',
  'Kurniawan',
  'Susanti',
  'Setiawan',
  'Rahayu',
  'Gunawan',
  'Permata',
  'Nugroho',
  'Utami',
  'Halim',
  'Siregar',
  'Harahap',
  'Tanjung',
  'Purba',
  'Sihombing',
];

interface Result {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  errors: number;
  non2xx: number;
}

function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : def;
}

async function waitPort(port: number, ms = 120000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

function cannon(url: string, headers: Record<string, string>, duration: number): Promise<any> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: 10, duration, headers }, (err: unknown, res: unknown) =>
      err ? reject(err) : resolve(res),
    );
  });
}

async function measure(name: string, url: string, headers: Record<string, string>, duration: number): Promise<Result> {
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
  console.log(
    `${name.padEnd(34)} ${res.rps.toFixed(0).padStart(6)} req/s  p50 ${String(res.p50).padStart(4)} ms  p99 ${String(res.p99).padStart(4)} ms  mean ${res.mean.toFixed(1).padStart(6)} ms${res.non2xx || res.errors ? `  (non2xx ${res.non2xx}, errors ${res.errors})` : ''}`,
  );
  return res;
}

async function seed(knex: ReturnType<typeof createKnex>, tenantId: number): Promise<void> {
  const pk = await knex('packages')
    .insert(
      [1, 2, 3, 4, 5].map((i) => ({
        tenant_id: tenantId,
        name: `Home ${i * 10} Mbps`,
        price: i * 100000,
        speed_down_kbps: i * 10000,
        speed_up_kbps: i * 5000,
      })),
    )
    .returning('id');
  const pkgIds = pk.map((p: { id: number }) => p.id);
  await knex.raw(
    `
    INSERT INTO customers (tenant_id, code, name, email, phone, address, package_id, status, service_type, billing_cycle, customer_tier, created_at, updated_at)
    SELECT ?, 'CUST-' || lpad(g::text, 6, '0'),
      (ARRAY[${FIRST.map((f) => `'${f}'`).join(',')}])[1 + (g % ${FIRST.length})] || ' ' || (ARRAY[${LAST.map((l) => `'${l}'`).join(',')}])[1 + ((g / ${FIRST.length}) % ${LAST.length})] || ' ' || g,
      'user' || g || '@example.net', '+62812' || lpad(g::text, 7, '0'), 'Jl. Merdeka No. ' || g,
      (ARRAY[${pkgIds.join(',')}])[1 + (g % 5)],
      CASE WHEN g % 10 = 0 THEN 'suspended' WHEN g % 25 = 0 THEN 'terminated' ELSE 'active' END,
      'pppoe', 'prepaid', 'regular',
      now() - ((${N} - g) || ' minutes')::interval, now() - ((${N} - g) || ' minutes')::interval
    FROM generate_series(1, ${N}) g`,
    [tenantId],
  );
  await knex.raw(
    `INSERT INTO tenant_counters (tenant_id, name, value) VALUES (?, 'customer', ${N}) ON CONFLICT (tenant_id, name) DO UPDATE SET value = EXCLUDED.value`,
    [tenantId],
  );
  await knex.raw(
    `
    INSERT INTO onus (tenant_id, customer_id, serial_number, status, rx_power, tx_power)
    SELECT c.tenant_id, c.id, 'ZTEG' || lpad(to_hex(c.id), 8, '0'), 'online', -20.5, 2.1
    FROM customers c WHERE c.tenant_id = ? AND c.id % 5 <> 0`,
    [tenantId],
  );
}

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
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-bench-'));
  const children: ResultPromise[] = [];
  const pgs = await startEmbeddedPostgres(path.join(dir, 'postgres'), 'isp_bench', { temporary: true });
  const redis = await startRedis(path.join(dir, 'redis'));
  const knex = createKnex(pgs.url);
  try {
    console.log('seeding 2 x 100,000 customers ...');
    await migrateLatest(knex);
    const a = await createTenant(knex, {
      slug: 'bench-a',
      name: 'Bench A',
      adminEmail: 'a@bench.test',
      adminPassword: 'bench-password',
    });
    const b = await createTenant(knex, {
      slug: 'bench-b',
      name: 'Bench B',
      adminEmail: 'b@bench.test',
      adminPassword: 'bench-password',
    });
    await seed(knex, a.tenant.id);
    await seed(knex, b.tenant.id);
    await knex.raw('VACUUM ANALYZE');
    // The first VACUUM right after the bulk load leaves pages not all-visible here (PostgreSQL 18),
    // and index-only scans then visit the heap; a table under autovacuum is all-visible. Repeat
    // until the visibility map covers the table, as the issue asks for a vacuumed table.
    for (let i = 0; i < 3; i++) {
      const v = (await knex.raw(`SELECT relpages, relallvisible FROM pg_class WHERE relname = 'customers'`)).rows[0];
      if (v.relallvisible >= v.relpages) break;
      await knex.raw('VACUUM customers');
    }
    const vm = (await knex.raw(`SELECT relpages, relallvisible FROM pg_class WHERE relname = 'customers'`)).rows[0];
    console.log(`customers: ${vm.relpages} heap pages, ${vm.relallvisible} all-visible`);
    const { token } = await createToken(new TenantScope(knex, a.tenant.id), a.admin.id, {
      name: 'bench',
      access: 'read',
    });
    const exact = Number((await knex('customers').where({ tenant_id: a.tenant.id }).count('* as n'))[0].n);
    const exactSuspended = Number(
      (await knex('customers').where({ tenant_id: a.tenant.id, status: 'suspended' }).count('* as n'))[0].n,
    );

    const appPort = await freePort();
    const env = {
      ...inheritedEnv(),
      PORT: String(appPort),
      DATABASE_URL: pgs.url,
      REDIS_URL: redis.url,
      APP_KEY: randomBytes(32).toString('hex'),
      EXTERNAL_RATE_LIMIT: '100000000',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
    };
    const app = execa('node', [...profileFlags('after'), '--import', 'tsx', 'api/server.ts'], {
      env,
      stdout: 'ignore',
      stderr: 'inherit',
      reject: false,
      cleanup: true,
    });
    children.push(app);
    const basePorts = { a: await freePort(), b: await freePort() };
    for (const mode of ['a', 'b'] as const) {
      children.push(
        execa('node', ['--import', 'tsx', 'bench/baseline-server.ts', mode, String(a.tenant.id)], {
          env: { ...inheritedEnv(), PORT: String(basePorts[mode]), DATABASE_URL: pgs.url },
          stdout: 'ignore',
          stderr: 'inherit',
          reject: false,
          cleanup: true,
        }),
      );
    }
    await waitPort(appPort);
    await waitPort(basePorts.a);
    await waitPort(basePorts.b);
    const auth = { authorization: `Bearer ${token}`, accept: 'application/json' };
    const appUrl = (q: string) => `http://127.0.0.1:${appPort}/api/external/v1/customers?per_page=100${q}`;
    const baseUrl = (m: 'a' | 'b', q: string) => `http://127.0.0.1:${basePorts[m]}/?per_page=100${q}`;

    // correctness first: the app's totals are exact
    const check = async (q: string, want: number) => {
      const r = await fetch(appUrl(q), { headers: auth });
      const body = (await r.json()) as { total: number; data: unknown[] };
      if (r.status !== 200 || body.total !== want || body.data.length !== 100)
        throw new Error(`app answered ${r.status} total ${body.total} (want ${want}) for ${q}`);
    };
    await check('&page=1', exact);
    await check('&page=900', exact);
    await check('&status=suspended&page=1', exactSuspended);
    console.log(`totals exact: ${exact} customers, ${exactSuspended} suspended\n`);

    const compareDir = arg(args, 'compare', '');
    if (compareDir) {
      await compareCheckouts(args, app.pid, compareDir, env, appUrl, auth, duration, children);
      return;
    }

    const R: Record<string, Result> = {};
    for (const [k, q] of [
      ['p1', '&page=1'],
      ['p900', '&page=900'],
      ['s1', '&status=suspended&page=1'],
      ['s900', '&status=suspended&page=90'],
    ] as const) {
      R[`app.${k}`] = await measure(`app      ${k}`, appUrl(q), auth, duration);
      R[`a.${k}`] = await measure(`bare(a)  ${k}`, baseUrl('a', q), {}, duration);
      R[`b.${k}`] = await measure(`naive(b) ${k}`, baseUrl('b', q), {}, duration);
    }
    R['app.search'] = await measure(
      'app      search "budi santoso"',
      appUrl('&search=budi%20santoso&page=1'),
      auth,
      duration,
    );
    R['app.search1'] = await measure('app      search "siti"', appUrl('&search=siti&page=1'), auth, duration);

    const ratio = (x: number, y: number) => (x / y).toFixed(2);
    const lines = [
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
    console.log(lines.join('\n'));
  } finally {
    for (const c of children) {
      c.kill('SIGTERM');
      await c;
    }
    await knex.destroy();
    await redis.stop();
    await pgs.stop();
    if (!args.includes('--keep')) await fs.rm(dir, { recursive: true, force: true });
  }
}
