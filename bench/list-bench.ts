/**
 * What the customer-list benchmarks share (bench/external-list.ts, issue 2; bench/admin-customers.ts,
 * issue 8): the world (embedded PostgreSQL and Redis, two tenants of 100,000 customers each,
 * VACUUM ANALYZEd until the visibility map covers the table), the web process and the two bare
 * node:http + pg baselines over the same table, and the totals check. The measured lines and the
 * issue 2 targets: bench/list-lines.ts. Each benchmark only chooses the URL and the token its app is
 * called with.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { execa, type ResultPromise } from 'execa';
import type { Knex } from 'knex';
import { startEmbeddedPostgres } from '../lib/infra/postgres.js';
import { startRedis } from '../lib/infra/redis.js';
import { freePort, portOpen } from '../lib/infra/free-port.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { createTenant } from '../api/tenants/service.js';
import { inheritedEnv } from '../lib/config.js';

/** Customers per tenant. */
export const N = 100_000;
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

/** Waits until something listens on the loopback port (at most `ms`). */
export async function waitPort(port: number, ms = 120000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await portOpen(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on ${port}`);
}

/**
 * N customers (5 packages; 10 % suspended, some terminated; an ONU for 4 in 5) in a tenant.
 * @param network also give them the admin fields (issue 8 item 2): a NAS for 2 in 3, a PPPoE
 *   username each, the network sync state of a synced push
 */
export async function seedCustomers(knex: Knex, tenantId: number, network = false): Promise<void> {
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
  let nasIds: number[] = [];
  if (network) {
    const rows = await knex('nas')
      .insert(
        [1, 2].map((i) => ({
          tenant_id: tenantId,
          name: `NAS ${i}`,
          nas_key: `nas-${i}`,
          host: `10.20.0.${i}`,
          isolation_profile: 'isolir',
        })),
      )
      .returning('id');
    nasIds = rows.map((r: { id: number }) => r.id);
  }
  const net = network
    ? `, (ARRAY[${nasIds.join(',')}, NULL])[1 + (g % 3)], 'pppoe-' || g, 'synced',
      CASE WHEN g % 10 = 0 THEN 'isolated' ELSE 'active' END, g`
    : '';
  await knex.raw(
    `
    INSERT INTO customers (tenant_id, code, name, email, phone, address, package_id, status, service_type, billing_cycle, customer_tier, created_at, updated_at${network ? ', nas_id, pppoe_username, network_sync_status, network_state, network_version' : ''})
    SELECT ?, 'CUST-' || lpad(g::text, 6, '0'),
      (ARRAY[${FIRST.map((f) => `'${f}'`).join(',')}])[1 + (g % ${FIRST.length})] || ' ' || (ARRAY[${LAST.map((l) => `'${l}'`).join(',')}])[1 + ((g / ${FIRST.length}) % ${LAST.length})] || ' ' || g,
      'user' || g || '@example.net', '+62812' || lpad(g::text, 7, '0'), 'Jl. Merdeka No. ' || g,
      (ARRAY[${pkgIds.join(',')}])[1 + (g % 5)],
      CASE WHEN g % 10 = 0 THEN 'suspended' WHEN g % 25 = 0 THEN 'terminated' ELSE 'active' END,
      'pppoe', 'prepaid', 'regular',
      now() - ((${N} - g) || ' minutes')::interval, now() - ((${N} - g) || ' minutes')::interval${net}
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

/** The running world of a list benchmark. */
export interface ListWorld {
  dir: string;
  knex: Knex;
  /** Tenant A (measured) and B (the other 100,000 rows in the same table). */
  a: Awaited<ReturnType<typeof createTenant>>;
  b: Awaited<ReturnType<typeof createTenant>>;
  /** Exact customer count of A, and of A's suspended customers. */
  exact: number;
  exactSuspended: number;
  /** Child processes to stop at the end. */
  children: ResultPromise[];
  /** The environment of the web process (DATABASE_URL, REDIS_URL, APP_KEY, ...; PORT set by startApp). */
  env: Record<string, string | undefined>;
  stop(keep: boolean): Promise<void>;
}

/**
 * Starts PostgreSQL and Redis, seeds two tenants of N customers, VACUUMs until the visibility map
 * covers the table (the first pass after a bulk load leaves pages not all-visible on PostgreSQL 18;
 * a table under autovacuum is all-visible), counts tenant A.
 * @param network seed the admin fields too (seedCustomers)
 */
export async function startWorld(network = false): Promise<ListWorld> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-bench-'));
  const children: ResultPromise[] = [];
  const pgs = await startEmbeddedPostgres(path.join(dir, 'postgres'), 'isp_bench', { temporary: true });
  const redis = await startRedis(path.join(dir, 'redis'));
  const knex = createKnex(pgs.url);
  const stop = async (keep: boolean) => {
    for (const c of children) {
      c.kill('SIGTERM');
      await c;
    }
    await knex.destroy();
    await redis.stop();
    await pgs.stop();
    if (!keep) await fs.rm(dir, { recursive: true, force: true });
  };
  try {
    console.log('seeding 2 x 100,000 customers ...');
    await migrateLatest(knex);
    const tenant = (s: string) =>
      createTenant(knex, {
        slug: `bench-${s}`,
        name: `Bench ${s.toUpperCase()}`,
        adminEmail: `${s}@bench.test`,
        adminPassword: 'bench-password',
      });
    const a = await tenant('a');
    const b = await tenant('b');
    await seedCustomers(knex, a.tenant.id, network);
    await seedCustomers(knex, b.tenant.id, network);
    await knex.raw('VACUUM ANALYZE');
    for (let i = 0; i < 3; i++) {
      const v = (await knex.raw(`SELECT relpages, relallvisible FROM pg_class WHERE relname = 'customers'`)).rows[0];
      if (v.relallvisible >= v.relpages) break;
      await knex.raw('VACUUM customers');
    }
    // the bulk load's dirty pages written now, not by a checkpoint in the middle of a measured line
    await knex.raw('CHECKPOINT');
    const vm = (await knex.raw(`SELECT relpages, relallvisible FROM pg_class WHERE relname = 'customers'`)).rows[0];
    console.log(`customers: ${vm.relpages} heap pages, ${vm.relallvisible} all-visible`);
    const count = async (where: Record<string, unknown>) =>
      Number(
        (
          await knex('customers')
            .where({ tenant_id: a.tenant.id, ...where })
            .count('* as n')
        )[0].n,
      );
    const env = {
      ...inheritedEnv(),
      DATABASE_URL: pgs.url,
      REDIS_URL: redis.url,
      APP_KEY: randomBytes(32).toString('hex'),
      EXTERNAL_RATE_LIMIT: '100000000',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
    };
    return {
      dir,
      knex,
      a,
      b,
      exact: await count({}),
      exactSuspended: await count({ status: 'suspended' }),
      children,
      env,
      stop,
    };
  } catch (err) {
    await stop(false);
    throw err;
  }
}

/**
 * Starts the real web process (`node --import tsx api/server.ts`, NODE_ENV=production, request log
 * to /dev/null) and waits for its port.
 * @param nodeFlags extra node flags (e.g. a CPU profile)
 * @returns its port and process
 */
export async function startApp(world: ListWorld, nodeFlags: string[] = []) {
  const port = await freePort();
  const child = execa('node', [...nodeFlags, '--import', 'tsx', 'api/server.ts'], {
    env: { ...world.env, PORT: String(port) },
    stdout: 'ignore',
    stderr: 'inherit',
    reject: false,
    cleanup: true,
  });
  world.children.push(child);
  await waitPort(port);
  return { port, child };
}

/**
 * Starts the two baselines (bench/baseline-server.ts) over tenant A: (a) the page by an index scan,
 * no count; (b) the same plus count(*).
 * @param shape the select list they read: `external` (document 1's) or `admin` (+ NAS, network state)
 * @returns their ports
 */
export async function startBaselines(world: ListWorld, shape: 'external' | 'admin' = 'external') {
  const ports = { a: await freePort(), b: await freePort() };
  for (const mode of ['a', 'b'] as const) {
    world.children.push(
      execa('node', ['--import', 'tsx', 'bench/baseline-server.ts', mode, String(world.a.tenant.id), shape], {
        env: { ...inheritedEnv(), PORT: String(ports[mode]), DATABASE_URL: String(world.env.DATABASE_URL) },
        stdout: 'ignore',
        stderr: 'inherit',
        reject: false,
        cleanup: true,
      }),
    );
  }
  await waitPort(ports.a);
  await waitPort(ports.b);
  return ports;
}

/**
 * Checks that the app's totals are exact (plain, page 900 and the status filter) before measuring.
 * @throws Error naming the query that answered wrongly
 */
export async function checkTotals(world: ListWorld, appUrl: (q: string) => string, auth: Record<string, string>) {
  const check = async (q: string, want: number) => {
    const r = await fetch(appUrl(q), { headers: auth });
    const body = (await r.json()) as { total: number; data: unknown[] };
    if (r.status !== 200 || body.total !== want || body.data.length !== 100)
      throw new Error(`app answered ${r.status} total ${body.total} (want ${want}) for ${q}`);
  };
  await check('&page=1', world.exact);
  await check('&page=900', world.exact);
  await check('&status=suspended&page=1', world.exactSuspended);
  console.log(`totals exact: ${world.exact} customers, ${world.exactSuspended} suspended\n`);
}

/**
 * Resolves when no other session of the world's database runs a statement (at most 60 s): the
 * naive baselines' deep pages keep PostgreSQL busy for seconds after autocannon stops.
 */
export async function waitDbIdle(world: ListWorld): Promise<void> {
  const end = Date.now() + 60_000;
  while (Date.now() < end) {
    const r = await world.knex.raw(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
    );
    if (r.rows[0].n === 0) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}
