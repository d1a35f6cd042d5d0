/**
 * `npm run bench -- tenant-db-copy [--customers 100000] [--keep]` (issue 14, "Benchmark").
 * Two tenants of the shared database with the same rows (100,000 customers, 300,000 invoices,
 * 50,000 tickets, 200 users with their roles; made with INSERT ... SELECT generate_series), VACUUM
 * ANALYZEd; the tenant-db job's processor (jobs/tenant-db.ts, a fake Job) makes tenant A's pilot
 * database and schema; then in one run:
 *  - dry-run: data-copy/dry-run's work into the empty tenant database;
 *  - copy: data-copy/run's work (batches of 1,000 by id, collision check, upsert, checkpoint, then
 *    per-table count and checksum on both sides);
 *  - reconciliation: GET tenant-db/reconciliation's work (in the request, its request pool);
 *  - baseline: the same tables (the copy plan: the four, their parents, roles) as bare
 *    `COPY (SELECT ...) TO STDOUT` piped into `COPY ... FROM STDIN` (pg-copy-streams) into a second,
 *    migrated, empty database; best of three (the tables are emptied between runs, not timed).
 * Prints each figure, the ratio ours / baseline and PASS/MISS against the targets (copy <= 2.5x,
 * dry-run <= 1x, reconciliation <= 1x).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import type { Job } from 'bullmq';
import type { TenantDbJobData } from '../api/platform/tenant-db/runs.js';
import type { Knex } from 'knex';
import { startEmbeddedPostgres } from '../lib/infra/postgres.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { createTenant } from '../api/tenants/service.js';
import { configureJobDeps } from '../jobs/deps.js';
import * as tenantDbJob from '../jobs/tenant-db.js';
import { sealSectionSecret } from '../jobs/provisioning/credentials.js';
import { closeTenantPools } from '../db/tenant-pools.js';
import { pilotRequest, savePilotRequest } from '../api/platform/tenant-db/pilot.js';
import { tenantDbServer } from '../api/platform/tenant-db/admin.js';
import { reconciliation } from '../api/platform/tenant-db/reconcile.js';
import { columnList, copyPlan, whereOf, type CopyTable } from '../api/platform/tenant-db/copy-plan.js';
import { ident, type RunKind } from '../api/platform/tenant-db/state.js';
import type { PlatformTenantRow } from '../api/platform/tenant-param.js';

function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : def;
}

/** A tenant's rows: n customers, 3n invoices, n/2 tickets, 200 users (Staff, every tenth Administrator). */
async function seed(knex: Knex, tenantId: number, n: number): Promise<void> {
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
  const ids = pk.map((p: { id: number }) => p.id).join(',');
  await knex.raw(
    `INSERT INTO users (tenant_id, name, email, password_hash, created_at, updated_at)
     SELECT ?, 'User ' || g, 'user' || g || '-' || ? || '@bench.test', '$argon2id$bench', now(), now()
       FROM generate_series(1, 200) g`,
    [tenantId, tenantId],
  );
  await knex.raw(
    `INSERT INTO user_roles (user_id, role_id)
     SELECT u.id, r.id FROM users u JOIN roles r ON r.tenant_id IS NULL
        AND r.name = CASE WHEN u.id % 10 = 0 THEN 'Administrator' ELSE 'staff' END
      WHERE u.tenant_id = ? AND u.email LIKE 'user%'`,
    [tenantId],
  );
  await knex.raw(
    `INSERT INTO customers (tenant_id, code, name, phone, address, package_id, status, service_type,
       billing_cycle, billing_day, customer_tier, created_at, updated_at)
     SELECT ?, 'CUST-' || lpad(g::text, 6, '0'), 'Customer ' || g, '+62812' || lpad(g::text, 7, '0'),
       'Jl. Merdeka No. ' || g, (ARRAY[${ids}])[1 + g % 5],
       CASE WHEN g % 10 = 3 THEN 'suspended' ELSE 'active' END, 'pppoe', 'prepaid', 1 + g % 28, 'regular',
       now() - ((g % 730) || ' days')::interval, now() - ((g % 700) || ' days')::interval
     FROM generate_series(1, ?) g`,
    [tenantId, n],
  );
  await knex.raw(
    `INSERT INTO invoices (tenant_id, invoice_number, customer_id, package_id, amount, status, due_date,
       period_start, period_end, created_at, updated_at)
     SELECT c.tenant_id, 'INV-' || lpad((c.rn * 3 + k)::text, 7, '0'), c.id, c.package_id, 100000 + (c.rn % 5) * 50000,
       CASE WHEN k = 0 THEN 'unpaid' ELSE 'paid' END, current_date - k * 30 + 7, current_date - k * 30,
       current_date - k * 30 + 29, now() - (k * 30 || ' days')::interval, now() - (k * 30 || ' days')::interval
       FROM (SELECT id, package_id, tenant_id, row_number() OVER (ORDER BY id) AS rn FROM customers WHERE tenant_id = ?) c
       CROSS JOIN generate_series(0, 2) k`,
    [tenantId],
  );
  await knex.raw(
    `INSERT INTO tickets (tenant_id, ticket_number, customer_id, type, priority, status, description, created_at, updated_at)
     SELECT c.tenant_id, 'TKT-' || lpad(c.rn::text, 6, '0'), c.id, 'No internet',
       (ARRAY['low','medium','high'])[1 + c.rn % 3], CASE WHEN c.rn % 4 = 0 THEN 'closed' ELSE 'open' END,
       'The line is down since ' || c.rn || ' minutes', now() - (c.rn % 90 || ' days')::interval, now()
       FROM (SELECT id, tenant_id, row_number() OVER (ORDER BY id) AS rn FROM customers WHERE tenant_id = ?) c
      WHERE c.rn % 2 = 0`,
    [tenantId],
  );
}

/** A BullMQ Job as the processor uses it (data, attempts, log, progress); the log lines are kept. */
function fakeJob(runId: number, lines: string[]): Job<TenantDbJobData> {
  // safe: process() reads only data, attemptsMade, opts.attempts, log and updateProgress, all given here
  return {
    id: `tdb-run-${runId}`,
    data: { runId },
    attemptsMade: 0,
    opts: { attempts: 5 },
    async log(line: string) {
      lines.push(line);
      return lines.length;
    },
    async updateProgress() {},
  } as unknown as Job<TenantDbJobData>;
}

/** Runs one step through the job's processor; returns its time in ms and the run row. */
async function step(knex: Knex, tenantId: number, kind: RunKind) {
  const [{ id }] = await knex('tenant_db_runs').insert({ tenant_id: tenantId, kind, status: 'queued' }).returning('id');
  const lines: string[] = [];
  const t0 = performance.now();
  await tenantDbJob.process(fakeJob(id, lines));
  const ms = performance.now() - t0;
  const run = await knex('tenant_db_runs').where({ id }).first();
  if (run.status !== 'succeeded') throw new Error(`${kind} ${run.status}: ${run.error}`);
  return { ms, run, lines };
}

/** The baseline: every table of the plan by COPY TO STDOUT piped into COPY FROM STDIN, one connection each side. */
async function baseline(srcUrl: string, dstUrl: string, plan: CopyTable[], tenantId: number) {
  const src = new pg.Client({ connectionString: srcUrl });
  const dst = new pg.Client({ connectionString: dstUrl });
  await src.connect();
  await dst.connect();
  try {
    await dst.query(`TRUNCATE ${plan.map((t) => ident(t.table)).join(', ')} RESTART IDENTITY CASCADE`);
    const t0 = performance.now();
    for (const t of plan) {
      const cols = columnList(t.columns);
      await pipeline(
        src.query(copyTo(`COPY (SELECT ${cols} FROM ${ident(t.table)} WHERE ${whereOf(t, tenantId)}) TO STDOUT`)),
        dst.query(copyFrom(`COPY ${ident(t.table)} (${cols}) FROM STDIN`)),
      );
    }
    return performance.now() - t0;
  } finally {
    await src.end();
    await dst.end();
  }
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Runs the benchmark. */
export async function run(args: string[]): Promise<void> {
  const n = Number(arg(args, 'customers', '100000'));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-bench-'));
  const pgs = await startEmbeddedPostgres(path.join(dir, 'postgres'), 'isp_bench', { temporary: true });
  const knex = createKnex(pgs.url);
  const appKey = randomBytes(32);
  try {
    await migrateLatest(knex);
    const tenants: PlatformTenantRow[] = [];
    for (const slug of ['bench-a', 'bench-b']) {
      const { tenant } = await createTenant(knex, {
        slug,
        name: slug,
        adminEmail: `${slug}@bench.test`,
        adminPassword: 'bench-password',
      });
      tenants.push(await knex('tenants').where({ id: tenant.id }).first());
    }
    const [A, B] = tenants;
    console.log(`seeding 2 tenants x (${n} customers, ${3 * n} invoices, ${n / 2} tickets, 200 users) ...`);
    let t0 = performance.now();
    for (const t of [A, B]) await seed(knex, t.id, n);
    await knex.raw('VACUUM ANALYZE');
    console.log(`seeded in ${s(performance.now() - t0)}`);

    // the tenant_db credential: this server's superuser (as npm start's demo saves it)
    const u = new URL(pgs.url);
    await knex('provisioning_credentials').insert({
      section: 'tenant_db',
      settings: JSON.stringify({ host: u.hostname, port: Number(u.port), admin_user: decodeURIComponent(u.username) }),
      secret_enc: sealSectionSecret(appKey, 'tenant_db', decodeURIComponent(u.password)),
      fake: false,
      changed_at: new Date(),
    });
    configureJobDeps({ knex, appKey });
    const server = await tenantDbServer(knex, appKey);
    await knex.transaction((trx) => savePilotRequest(trx, A, server, pilotRequest(A, {})));
    await step(knex, A.id, 'pilot_run');
    const schema = await step(knex, A.id, 'schema_run');
    console.log(`pilot database and schema ready (${schema.lines.length} migrations, ${s(schema.ms)})`);

    const plan = await copyPlan(knex);
    const dry = await step(knex, A.id, 'copy_dry_run');
    const copy = await step(knex, A.id, 'copy_run');
    const rows = (copy.run.result.tables as { table: string; count: number; ok: boolean }[]).map(
      (t) => `${t.table} ${t.count}${t.ok ? '' : ' MISMATCH'}`,
    );
    console.log(`copied: ${rows.join(', ')} in ${copy.run.result.batches} batches`);
    t0 = performance.now();
    const rec = await reconciliation({ knex, appKey }, A.slug);
    const recMs = performance.now() - t0;
    if (!rec.tenant_db.reachable || !rec.totals) throw new Error(`reconciliation: ${rec.tenant_db.check.detail}`);
    console.log(`reconciliation totals ${JSON.stringify(rec.totals)}`);

    await knex.raw('CREATE DATABASE bench_baseline');
    const baseUrl = pgs.url.replace(/\/[^/?]+(\?|$)/, '/bench_baseline$1');
    const baseKnex = createKnex(baseUrl);
    try {
      await migrateLatest(baseKnex);
    } finally {
      await baseKnex.destroy();
    }
    const bases: number[] = [];
    for (let i = 0; i < 3; i += 1) bases.push(await baseline(pgs.url, baseUrl, plan, A.id));
    const base = Math.min(...bases);

    const line = (name: string, ms: number, target: number) => {
      const ratio = ms / base;
      return `${name.padEnd(16)} ${s(ms).padStart(9)}   ${ratio.toFixed(2).padStart(5)}x   <= ${target}x   ${ratio <= target ? 'PASS' : 'MISS'}`;
    };
    console.log(
      [
        '',
        `baseline (COPY TO STDOUT | COPY FROM STDIN, ${plan.length} tables): ${bases.map(s).join(', ')}; best ${s(base)}`,
        '',
        'line              seconds   ours/baseline   target',
        line('copy run', copy.ms, 2.5),
        line('dry-run', dry.ms, 1),
        line('reconciliation', recMs, 1),
      ].join('\n'),
    );
  } finally {
    await closeTenantPools();
    await knex.destroy();
    await pgs.stop();
    if (!args.includes('--keep')) await fs.rm(dir, { recursive: true, force: true });
  }
}
