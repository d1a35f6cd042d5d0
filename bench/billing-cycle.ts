/**
 * `npm run bench -- billing-cycle [--n 100000] [--keep]` (issue 8, "Benchmark" 1).
 * Three tenants with the same 100,000 customers (every cycle, billing days 1..28 or none, active,
 * suspended and terminated, a few on a free package or none), VACUUM ANALYZEd, then in one run:
 *  - job: the billing-cycle job's processor (jobs/billing-cycle.ts process, a requested run as of
 *    today, batches of BILLING_BATCH_SIZE with the counter lock, progress, run row and audit) on
 *    tenant A;
 *  - baseline: one plain INSERT ... SELECT of the same rows (same period arithmetic, numbers from
 *    row_number(), no batches, no lock, no existence check, no bookkeeping) on tenant B, the copy;
 *    the two tables are then checked to hold the same rows;
 *  - rerun: the job again on A: 0 created, the invoices' checksum unchanged;
 *  - concurrent: two runs at once on tenant C: one invoice per billable customer, numbers 1..N.
 * Prints the figures, the ratio job / baseline (target >= 0.5) and pass/fail per target.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { startEmbeddedPostgres } from '../lib/infra/postgres.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { createTenant } from '../api/tenants/service.js';
import { configureJobDeps } from '../jobs/deps.js';
import * as billingCycle from '../jobs/billing-cycle.js';
import type { JobLike } from '../jobs/queues.js';
import { systemClock, todayIn } from '../lib/clock.js';
import { monthIndexOf } from '../api/invoices/billing-period.js';
import { BILLING_BATCH_SIZE } from '../api/invoices/billing.js';

function arg(args: string[], name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1] : def;
}

/** The same customers in every tenant (deterministic in g), service starts up to ~2 years back. */
async function seed(knex: Knex, tenantId: number, n: number): Promise<void> {
  const pk = await knex('packages')
    .insert(
      [1, 2, 3, 4, 5, 0].map((i) => ({
        tenant_id: tenantId,
        name: i ? `Home ${i * 10} Mbps` : 'Free trial',
        price: i * 100000,
        speed_down_kbps: (i || 1) * 10000,
        speed_up_kbps: (i || 1) * 5000,
      })),
    )
    .returning('id');
  const ids = pk.map((p: { id: number }) => p.id);
  await knex.raw(
    `INSERT INTO customers (tenant_id, code, name, phone, address, package_id, status, service_type,
       billing_cycle, billing_day, customer_tier, created_at, updated_at)
     SELECT ?, 'CUST-' || lpad(g::text, 6, '0'), 'Customer ' || g, '+62812' || lpad(g::text, 7, '0'),
       'Jl. Merdeka No. ' || g,
       CASE WHEN g % 97 = 0 THEN NULL WHEN g % 50 = 7 THEN ${ids[5]} ELSE (ARRAY[${ids.slice(0, 5).join(',')}])[1 + g % 5] END,
       CASE WHEN g % 20 = 0 THEN 'terminated' WHEN g % 10 = 3 THEN 'suspended' ELSE 'active' END,
       'pppoe',
       CASE WHEN g % 10 < 5 THEN 'prepaid' WHEN g % 10 < 8 THEN 'prepaid_rolling' ELSE 'postpaid' END,
       CASE WHEN g % 11 = 0 THEN NULL ELSE 1 + g % 28 END,
       'regular',
       now() - ((g % 730) || ' days')::interval - ((g % 24) || ' hours')::interval,
       now() - ((g % 730) || ' days')::interval
     FROM generate_series(1, ?) g`,
    [tenantId, n],
  );
}

/** The baseline: one INSERT ... SELECT of the rows the job makes (no batches, lock or checks). */
async function baseline(knex: Knex, tenantId: number, runId: number, asOf: string): Promise<number> {
  const r = await knex.raw(
    `INSERT INTO invoices (tenant_id, invoice_number, customer_id, package_id, amount, status, due_date,
       period_start, period_end, type, description, billing_run_id, created_at, updated_at)
     SELECT c.tenant_id, 'INV-' || lpad((row_number() OVER (ORDER BY c.id))::text, 6, '0'), c.id, pk.id, pk.price,
       'unpaid', CASE WHEN c.billing_cycle = 'postpaid' THEN p.e + 1 ELSE p.s END + 7, p.s, p.e, 'subscription',
       pk.name || ', ' || to_char(p.s, 'YYYY-MM-DD') || ' to ' || to_char(p.e, 'YYYY-MM-DD'), ?, now(), now()
     FROM customers c
     JOIN packages pk ON pk.id = c.package_id AND pk.tenant_id = c.tenant_id
     CROSS JOIN LATERAL (SELECT (c.created_at AT TIME ZONE 'Asia/Jakarta')::date AS start_day) sd
     CROSS JOIN LATERAL (SELECT CASE WHEN c.billing_cycle = 'prepaid_rolling' THEN extract(day FROM sd.start_day)::int
                                     ELSE coalesce(c.billing_day::int, 1) END AS d) a
     CROSS JOIN LATERAL (SELECT ?::int - CASE WHEN ?::date >= billing_anchor_date(?::int, a.d) THEN 0 ELSE 1 END
                               - CASE WHEN c.billing_cycle = 'postpaid' THEN 1 ELSE 0 END AS k) m
     CROSS JOIN LATERAL (SELECT billing_anchor_date(m.k, a.d) AS s, billing_anchor_date(m.k + 1, a.d) - 1 AS e) p
     WHERE c.tenant_id = ? AND c.status IN ('active', 'suspended') AND pk.price > 0
       AND sd.start_day <= CASE WHEN c.billing_cycle = 'postpaid' THEN p.e ELSE ?::date END`,
    [runId, monthIndexOf(asOf), asOf, monthIndexOf(asOf), tenantId, asOf],
  );
  return r.rowCount;
}

/** md5 over every invoice of a tenant (all columns but the ids that differ by construction). */
async function checksum(knex: Knex, tenantId: number, withIds = true): Promise<string> {
  const cols = withIds
    ? 'i.*'
    : `c.code, i.invoice_number, i.package_id IS NOT NULL, i.amount, i.status,
    i.due_date, i.period_start, i.period_end, i.type, i.description`;
  const r = await knex.raw(
    `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS sum, count(*)::int AS n
     FROM (SELECT ${cols} FROM invoices i JOIN customers c ON c.id = i.customer_id WHERE i.tenant_id = ?) t`,
    [tenantId],
  );
  return `${r.rows[0].sum} (${r.rows[0].n} rows)`;
}

const quietJob = (data: billingCycle.BillingCycleData): JobLike<billingCycle.BillingCycleData> => ({
  id: 'bench',
  name: billingCycle.RUN_JOB,
  data,
  async updateProgress() {},
  async log() {
    return 0;
  },
});

async function runJob(knex: Knex, tenantId: number, asOf: string) {
  const [run] = await knex('billing_runs')
    .insert({ tenant_id: tenantId, as_of: asOf, trigger: 'manual', status: 'queued' })
    .returning('id');
  const t0 = performance.now();
  const result = await billingCycle.process(quietJob({ run_id: run.id, tenant_id: tenantId }));
  if (result.kind !== 'run') throw new Error('expected a run result');
  return { ...result, ms: performance.now() - t0 };
}

/** Runs the benchmark. */
export async function run(args: string[]): Promise<void> {
  const n = Number(arg(args, 'n', '100000'));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-bench-'));
  const pgs = await startEmbeddedPostgres(path.join(dir, 'postgres'), 'isp_bench', { temporary: true });
  const knex = createKnex(pgs.url);
  try {
    await migrateLatest(knex);
    const tenants = [];
    for (const slug of ['bench-job', 'bench-copy', 'bench-concurrent']) {
      const { tenant } = await createTenant(knex, {
        slug,
        name: slug,
        adminEmail: `${slug}@bench.test`,
        adminPassword: 'bench-password',
      });
      tenants.push(tenant.id as number);
    }
    const [A, B, C] = tenants;
    console.log(`seeding 3 x ${n.toLocaleString('en')} customers ...`);
    for (const t of tenants) await seed(knex, t, n);
    await knex.raw('VACUUM ANALYZE');
    configureJobDeps({ knex, clock: systemClock });
    const asOf = todayIn('Asia/Jakarta');
    console.log(`as of ${asOf} (Asia/Jakarta), batches of ${BILLING_BATCH_SIZE}\n`);

    const job = await runJob(knex, A, asOf);
    const [bRun] = await knex('billing_runs')
      .insert({ tenant_id: B, as_of: asOf, trigger: 'manual', status: 'queued' })
      .returning('id');
    const t0 = performance.now();
    const baseRows = await baseline(knex, B, bRun.id, asOf);
    const baseMs = performance.now() - t0;
    const jobRate = job.created / (job.ms / 1000);
    const baseRate = baseRows / (baseMs / 1000);
    const same = (await checksum(knex, A, false)) === (await checksum(knex, B, false));
    console.log(
      `job       ${String(job.created).padStart(7)} invoices in ${(job.ms / 1000).toFixed(2)} s = ${jobRate.toFixed(0)} invoices/s (existing ${job.existing}, skipped ${job.skipped})`,
    );
    console.log(
      `baseline  ${String(baseRows).padStart(7)} invoices in ${(baseMs / 1000).toFixed(2)} s = ${baseRate.toFixed(0)} invoices/s`,
    );
    console.log(`same rows in both tables (code, number, amount, period, due, description): ${same ? 'yes' : 'NO'}`);

    const before = await checksum(knex, A);
    const rerun = await runJob(knex, A, asOf);
    const after = await checksum(knex, A);
    console.log(
      `rerun     ${rerun.created} created, ${rerun.existing} existing in ${(rerun.ms / 1000).toFixed(2)} s; checksum ${before === after ? 'unchanged' : 'CHANGED'}: ${after}`,
    );

    const tc = performance.now();
    const [r1, r2] = await Promise.all([runJob(knex, C, asOf), runJob(knex, C, asOf)]);
    const concMs = performance.now() - tc;
    const stats = (
      await knex.raw(
        `SELECT count(*)::int AS n, count(DISTINCT customer_id)::int AS customers,
           count(DISTINCT invoice_number)::int AS numbers,
           min(substring(invoice_number from 5)::int) AS lo, max(substring(invoice_number from 5)::int) AS hi
         FROM invoices WHERE tenant_id = ?`,
        [C],
      )
    ).rows[0];
    const counter = Number((await knex('tenant_counters').where({ tenant_id: C, name: 'invoice' }).first()).value);
    console.log(
      `concurrent two runs in ${(concMs / 1000).toFixed(2)} s: created ${r1.created} + ${r2.created}, existing ${r1.existing} + ${r2.existing}; ` +
        `${stats.n} invoices for ${stats.customers} customers, numbers ${stats.lo}..${stats.hi} (${stats.numbers} distinct), counter ${counter}`,
    );

    const ratio = jobRate / baseRate;
    const ok = (b: boolean) => (b ? 'yes' : 'NO');
    const concurrentOk =
      r1.created + r2.created === job.created &&
      stats.n === job.created &&
      stats.customers === stats.n &&
      stats.numbers === stats.n &&
      stats.lo === 1 &&
      stats.hi === stats.n &&
      counter === stats.n;
    console.log(
      [
        '',
        'target                                                  figure   ok',
        `job invoices/s vs one INSERT ... SELECT, >= 0.50         ${ratio.toFixed(2).padStart(6)}   ${ok(ratio >= 0.5 && same)}`,
        `rerun: 0 created, table identical                      ${String(rerun.created).padStart(6)}   ${ok(rerun.created === 0 && before === after)}`,
        `two concurrent runs: one invoice each, numbers 1..N    ${String(stats.n).padStart(6)}   ${ok(concurrentOk)}`,
      ].join('\n'),
    );
  } finally {
    await knex.destroy();
    await pgs.stop();
    if (!args.includes('--keep')) await fs.rm(dir, { recursive: true, force: true });
  }
}
