/**
 * `npm run bench -- write-gate [--n 2000] [--rounds 4] [--keep]` (issue 15, "Autocommit writes pass
 * the gate"): what the tenant write gate costs a TenantScope's queries, measured in one process
 * against embedded PostgreSQL, interleaved (plain, gated, plain, gated, ...) so that the machine's
 * load hits both sides alike:
 *  - plain: `new TenantScope(knex, tenant)` (no gate at all);
 *  - gated: `tenantScopeOf(knex, tenant)` (db/tenant-routing.ts gatedKnex: the Proxy, the wrapped
 *    builders, the gate for writes).
 * Lines: reads (knex `first` by id and objection `findById`: no gate, the wrap only), autocommit
 * updates by id (gated: BEGIN, tenant_write_gate, UPDATE, COMMIT), and an update in
 * `scope.knex.transaction` (gated before this change too). Wall µs per operation (sequential, one
 * connection at a time) and node CPU µs per operation.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Knex } from 'knex';
import { startEmbeddedPostgres } from '../lib/infra/postgres.js';
import { createKnex, migrateLatest } from '../db/knex.js';
import { createTenant } from '../api/tenants/service.js';
import { TenantScope } from '../db/tenant-scope.js';
import { tenantScopeOf } from '../db/tenant-routing.js';
import { Customer } from '../db/models/index.js';
import { arg } from './list-lines.js';

const RAW_COLUMNS = Array.from({ length: 30 }, (_, k) => `customers.name AS c${k}`);

type Line = (s: TenantScope, id: number, i: number) => PromiseLike<unknown>;

const LINES: [string, Line][] = [
  ['read knex first', (s, id) => s.table('customers').where({ id }).first('id', 'name')],
  ['read objection findById', (s, id) => s.query(Customer).findById(id)],
  // the admin list's shape: a select list of raw columns, each raw made through the scope's knex
  [
    'read 30 raw columns',
    (s, id) =>
      s
        .table('customers')
        .where({ id })
        .first(RAW_COLUMNS.map((c) => s.knex.raw(c))),
  ],
  [
    'autocommit update',
    (s, id, i) =>
      s
        .table('customers')
        .where({ id })
        .update({ phone: `+62813${i}` }),
  ],
  [
    'update in transaction',
    (s, id, i) =>
      s.knex.transaction((trx) =>
        s
          .withTransaction(trx)
          .table('customers')
          .where({ id })
          .update({ phone: `+62814${i}` }),
      ),
  ],
];

async function measure(scope: TenantScope, line: Line, ids: number[], n: number) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i += 1) await line(scope, ids[i % ids.length], i);
  const wall = ((performance.now() - t0) * 1000) / n;
  const c = process.cpuUsage(cpu0);
  return { wall, cpu: (c.user + c.system) / n };
}

/** Runs the benchmark. */
export async function run(args: string[]): Promise<void> {
  const n = Number(arg(args, 'n', '2000'));
  const rounds = Number(arg(args, 'rounds', '4'));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'isp-bench-'));
  const pgs = await startEmbeddedPostgres(path.join(dir, 'postgres'), 'isp_bench', { temporary: true });
  const knex: Knex = createKnex(pgs.url);
  try {
    await migrateLatest(knex);
    const { tenant } = await createTenant(knex, {
      slug: 'bench-gate',
      name: 'bench-gate',
      adminEmail: 'gate@bench.test',
      adminPassword: 'bench-password',
    });
    const tenantId = tenant.id as number;
    await knex.raw(
      `INSERT INTO customers (tenant_id, code, name, phone, address)
       SELECT ?, 'CUST-' || lpad(g::text, 6, '0'), 'Customer ' || g, '+62812' || lpad(g::text, 7, '0'), 'Jl. ' || g
       FROM generate_series(1, 1000) g`,
      [tenantId],
    );
    await knex.raw('VACUUM ANALYZE customers');
    const ids = (
      (await knex('customers').where({ tenant_id: tenantId }).orderBy('id').select('id')) as { id: number }[]
    )
      .map((r) => Number(r.id))
      .sort(() => 0.5 - Math.random());
    const sides: Record<string, () => Promise<TenantScope>> = {
      plain: async () => new TenantScope(knex, tenantId),
      gated: () => tenantScopeOf(knex, tenantId, undefined),
    };
    const sum: Record<string, { wall: number; cpu: number }> = {};
    // warm-up: every line on both sides once
    for (const [, line] of LINES) for (const side of Object.values(sides)) await measure(await side(), line, ids, 200);
    for (let r = 0; r < rounds; r += 1) {
      for (const [name, line] of LINES) {
        for (const [side, make] of Object.entries(sides)) {
          const m = await measure(await make(), line, ids, n);
          const k = `${name}|${side}`;
          sum[k] = { wall: (sum[k]?.wall ?? 0) + m.wall / rounds, cpu: (sum[k]?.cpu ?? 0) + m.cpu / rounds };
        }
      }
    }
    console.log(`\n${n} operations per line and side, ${rounds} interleaved rounds (means)\n`);
    console.log('line                       plain wall  gated wall  ratio   plain cpu  gated cpu  ratio');
    for (const [name] of LINES) {
      const p = sum[`${name}|plain`];
      const g = sum[`${name}|gated`];
      console.log(
        `${name.padEnd(26)} ${p.wall.toFixed(0).padStart(7)} µs ${g.wall.toFixed(0).padStart(7)} µs ${(g.wall / p.wall)
          .toFixed(2)
          .padStart(6)} ${p.cpu.toFixed(0).padStart(7)} µs ${g.cpu.toFixed(0).padStart(7)} µs ${(g.cpu / p.cpu)
          .toFixed(2)
          .padStart(6)}`,
      );
    }
  } finally {
    await knex.destroy();
    await pgs.stop();
    if (!args.includes('--keep')) await fs.rm(dir, { recursive: true, force: true });
  }
}
