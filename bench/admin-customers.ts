/**
 * `npm run bench -- admin-customers [--duration 8] [--rounds 1] [--keep]` (issue 8, "Benchmark" 2): external-list's
 * lines and targets (bench/list-bench.ts) on the admin list `GET /api/customers?per_page=100` with a
 * login token. Two tenants with 100,000 customers each, with the admin fields filled in (a NAS for
 * 2 in 3, a PPPoE username each, a synced network state), against the real web process (login
 * token checked on every request: session, user, roles and permissions) and, in the same run, the
 * two bare node:http + pg baselines reading the admin list's select list and joins (the NAS too):
 * (a) the page by an index scan, no count; (b) the same plus count(*).
 */
import { login } from '../api/auth/service.js';
import { checkTotals, startApp, startBaselines, startWorld, waitDbIdle } from './list-bench.js';
import { arg, measureLines, targetLines } from './list-lines.js';

/** Runs the benchmark. */
export async function run(args: string[]): Promise<void> {
  const duration = Number(arg(args, 'duration', '8'));
  const rounds = Number(arg(args, 'rounds', '1'));
  const world = await startWorld(true);
  try {
    const { token } = await login(world.knex, { email: world.a.admin.email, password: 'bench-password' });
    const app = await startApp(world);
    const basePorts = await startBaselines(world, 'admin');
    const auth = { authorization: `Bearer ${token}`, accept: 'application/json' };
    const appUrl = (q: string) => `http://127.0.0.1:${app.port}/api/customers?per_page=100${q}`;
    const baseUrl = (m: 'a' | 'b', q: string) => `http://127.0.0.1:${basePorts[m]}/?per_page=100${q}`;

    // correctness first: the app's totals are exact, and the answer is the admin shape
    await checkTotals(world, appUrl, auth);
    const sample = (await (await fetch(appUrl('&page=1'), { headers: auth })).json()) as {
      data: { network?: unknown; pppoe_password_set?: unknown }[];
    };
    if (!sample.data[0]?.network || typeof sample.data[0].pppoe_password_set !== 'boolean')
      throw new Error('the app did not answer the admin read shape');

    const R = await measureLines(appUrl, baseUrl, auth, duration, rounds, () => waitDbIdle(world));
    console.log(targetLines(R).join('\n'));
  } finally {
    await world.stop(args.includes('--keep'));
  }
}
