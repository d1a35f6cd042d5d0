import type { Knex } from 'knex';
import { readProvisioningRows } from '../../../jobs/provisioning/credentials.js';
import { createHash } from 'node:crypto';
import { copyPlan, type CopyTable } from './copy-plan.js';
import { appliedMigrations, testTenantDb } from './schema.js';
import {
  BUCKET_IDS,
  bucketHashes,
  rowHashes,
  withTenantDb,
  type Bucket,
  type Check,
  type ReportDeps,
  type RowHash,
} from './report-base.js';
import { ROUTED_MODULES } from './write-plan.js';
import { dualWriteRolledBack } from './dual-write-check.js';

/**
 * Comparisons of the shared and the tenant database (issue 14 item 8): `reconciliation`,
 * `shadow-read` and the `cutover-gate` built on them. Reads only, in the request.
 */

/** Keys listed per table. */
const MAX_KEYS = 20;
/** Rows compared per module by shadow-read. */
const SHADOW_ROWS = 100;

/** tenant_db_demo_rows of a tenant: `table:row_id` -> demo_key. */
async function demoRows(knex: Knex, tenantId: number): Promise<Map<string, string>> {
  const rows = (await knex('tenant_db_demo_rows')
    .where({ tenant_id: tenantId })
    .select('table_name', 'row_id', 'demo_key')) as { table_name: string; row_id: string; demo_key: string }[];
  return new Map(rows.map((r) => [`${r.table_name}:${Number(r.row_id)}`, r.demo_key]));
}

/** Whether a tenant-only row is an accepted pilot extra: recorded, keyed DEMO-, its key the recorded one. */
function accepted(demo: Map<string, string>, table: string, row: RowHash): boolean {
  const key = demo.get(`${table}:${row.id}`);
  return !!key && key.startsWith('DEMO-') && (row.key === null || row.key === key);
}

/**
 * One table of the reconciliation: buckets of 1,000 ids compared by their concatenated row md5s
 * (bucketHashes; the checksums follow from them), rows fetched only for the buckets that differ.
 */
async function reconcileTable(knex: Knex, tk: Knex, t: CopyTable, tenantId: number, demo: Map<string, string>) {
  const [ba, bb] = await Promise.all([bucketHashes(knex, t, tenantId), bucketHashes(tk, t, null)]);
  const side = (bs: Bucket[]) => ({
    count: bs.reduce((n, x) => n + x.n, 0),
    checksum: createHash('md5')
      .update(bs.map((x) => x.hs).join(''))
      .digest('hex'),
    byBucket: new Map(bs.map((x) => [x.b, x.hs])),
  });
  const sa = side(ba);
  const sb = side(bb);
  const differing = [...new Set([...sa.byBucket.keys(), ...sb.byBucket.keys()])]
    .filter((x) => sa.byBucket.get(x) !== sb.byBucket.get(x))
    .sort((x, y) => x - y);
  const a: RowHash[] = [];
  const b: RowHash[] = [];
  for (const x of differing) {
    const range: [number, number] = [x * BUCKET_IDS, (x + 1) * BUCKET_IDS];
    const [ra, rb] = await Promise.all([
      rowHashes(knex, t, tenantId, undefined, range),
      rowHashes(tk, t, null, undefined, range),
    ]);
    a.push(...ra);
    b.push(...rb);
  }
  const tenant = new Map(b.map((r) => [r.id, r]));
  const shared = new Set(a.map((r) => r.id));
  const keys: string[] = [];
  const note = (s: string) => keys.length < MAX_KEYS && keys.push(s);
  let missing = 0;
  let changed = 0;
  for (const r of a) {
    const o = tenant.get(r.id);
    if (!o) {
      missing += 1;
      note(`${t.table}.id ${r.id}: missing_in_tenant`);
    } else if (o.h !== r.h) {
      changed += 1;
      note(`${t.table}.id ${r.id}: changed`);
    }
  }
  let extra = 0;
  let blocking = 0;
  for (const r of b) {
    if (shared.has(r.id)) continue;
    if (accepted(demo, t.table, r)) extra += 1;
    else {
      blocking += 1;
      note(`${t.table}.id ${r.id}${r.key ? ` (${r.key})` : ''}: blocking extra`);
    }
  }
  return {
    table: t.table,
    count: sa.count,
    tenant_count: sb.count,
    checksum: sa.checksum,
    tenant_checksum: sb.checksum,
    checksum_equal: sa.checksum === sb.checksum,
    missing_in_tenant: missing,
    changed,
    accepted_pilot_extra: extra,
    blocking_extra_key_count: blocking,
    keys,
  };
}

/** The reconciliation of a tenant database (null when unreachable). */
async function reconcileAll(knex: Knex, tk: Knex, tenantId: number) {
  const plan = await copyPlan(knex);
  const demo = await demoRows(knex, tenantId);
  const tables: Awaited<ReturnType<typeof reconcileTable>>[] = [];
  for (const t of plan) tables.push(await reconcileTable(knex, tk, t, tenantId, demo));
  const sum = (f: 'missing_in_tenant' | 'changed' | 'accepted_pilot_extra' | 'blocking_extra_key_count') =>
    tables.reduce((n, t) => n + t[f], 0);
  return {
    tables,
    totals: {
      missing_in_tenant: sum('missing_in_tenant'),
      changed: sum('changed'),
      accepted_pilot_extra: sum('accepted_pilot_extra'),
      blocking_extra_key_count: sum('blocking_extra_key_count'),
    },
  };
}

/**
 * GET tenant-db/reconciliation: per table counts, checksums, missing_in_tenant, changed,
 * accepted_pilot_extra (tenant-only rows keyed DEMO- and recorded in tenant_db_demo_rows),
 * blocking_extra_key_count (every other tenant-only row) and up to 20 keys.
 */
export async function reconciliation(deps: ReportDeps, ref: string) {
  const r = await withTenantDb(deps, ref, (tk, row) => reconcileAll(deps.knex, tk, row.tenant_id), {
    schema: true,
  });
  return { status: r.row.status, tenant_db: r.reach, tables: r.value?.tables ?? [], totals: r.value?.totals ?? null };
}

/** GET tenant-db/shadow-read: per module the 100 lowest ids of both sides: matched, mismatched, missing, extra. */
export async function shadowRead(deps: ReportDeps, ref: string) {
  const r = await withTenantDb(
    deps,
    ref,
    async (tk, row) => {
      const plan = await copyPlan(deps.knex);
      const out = [];
      for (const module of ROUTED_MODULES) {
        const t = plan.find((p) => p.table === module)!;
        const [a, b] = await Promise.all([
          rowHashes(deps.knex, t, row.tenant_id, SHADOW_ROWS),
          rowHashes(tk, t, null, SHADOW_ROWS),
        ]);
        const ids = [...new Set([...a, ...b].map((x) => x.id))].sort((x, y) => x - y).slice(0, SHADOW_ROWS);
        const sa = new Map(a.map((x) => [x.id, x.h]));
        const sb = new Map(b.map((x) => [x.id, x.h]));
        const s = { module, compared: ids.length, matched: 0, mismatched: 0, missing: 0, extra: 0 };
        for (const id of ids) {
          if (!sb.has(id)) s.missing += 1;
          else if (!sa.has(id)) s.extra += 1;
          else if (sa.get(id) === sb.get(id)) s.matched += 1;
          else s.mismatched += 1;
        }
        out.push(s);
      }
      return out;
    },
    { schema: true },
  );
  return { status: r.row.status, tenant_db: r.reach, modules: r.value ?? [] };
}

/** The id of the tenant's latest succeeded copy run (a succeeded copy matched every count and checksum), or null. */
async function succeededCopyRun(knex: Knex, tenantId: number): Promise<number | null> {
  const run = (await knex('tenant_db_runs')
    .where({ tenant_id: tenantId, kind: 'copy_run', status: 'succeeded' })
    .orderBy('id', 'desc')
    .first('id')) as { id: number } | undefined;
  return run?.id ?? null;
}

/**
 * GET tenant-db/cutover-gate: checks `{name, ok, detail}` (pilot_created, schema_current,
 * copy_verified, no_blocking_extras, client_addr_allowed, backup_ready, not_master_tenant; issue 15:
 * credentials_enabled, dual_write_rolled_back) and `passed` (every check ok). An unreachable tenant
 * database fails the checks that need it. Issue 15's snapshot, approval and cutover call it with
 * `live: false` (decision): copy_verified then means the latest copy run verified its counts and
 * checksums and the status is still data_copied (or production), and no_blocking_extras is left to
 * the snapshot's `observed` part, so that daily writes to the shared database (which make rows
 * missing, changed or, for a delete, tenant-only until the cutover's passes) keep the evidence and
 * its approvals valid.
 * @param ref the tenant's slug or id (a number is an id)
 * @throws NotFound (404) for an unknown tenant
 */
export async function cutoverGate(deps: ReportDeps, ref: string | number, opts: { live?: boolean } = {}) {
  const live = opts.live ?? true;
  const r = await withTenantDb(deps, ref, async (tk, row) => {
    const [shared, tenant] = await Promise.all([appliedMigrations(deps.knex), appliedMigrations(tk)]);
    const test = await testTenantDb(tk, row);
    const pending = shared.filter((m) => !tenant.includes(m)).length;
    // with migrations pending the copied tables may be missing or older: nothing to reconcile
    const rec = live && !pending ? await reconcileAll(deps.knex, tk, row.tenant_id) : null;
    return { pending, test, rec };
  });
  const { row, value: v } = r;
  const unreachable = v ? `${v.pending} migrations pending` : r.reach.check.detail;
  const tenantRow = (await deps.knex('tenants').where({ id: r.tenant.id }).first('is_master')) as {
    is_master: boolean;
  };
  const { settings } = await readProvisioningRows(deps.knex);
  const copied = row.status === 'data_copied' || row.status === 'production';
  const t = v?.rec?.totals;
  const checks: Check[] = [
    { name: 'pilot_created', ok: row.status !== 'none', detail: `status ${row.status}` },
    {
      name: 'schema_current',
      ok: !!v && v.pending === 0 && row.status !== 'pilot_created',
      detail: v ? `${v.pending} migrations pending` : unreachable,
    },
    ...(live
      ? [
          {
            name: 'copy_verified',
            ok: !!t && copied && t.missing_in_tenant === 0 && t.changed === 0,
            detail: t
              ? `status ${row.status}; ${t.missing_in_tenant} missing in tenant, ${t.changed} changed`
              : unreachable,
          },
          {
            name: 'no_blocking_extras',
            ok: !!t && t.blocking_extra_key_count === 0,
            detail: t
              ? `${t.blocking_extra_key_count} blocking, ${t.accepted_pilot_extra} accepted pilot extras`
              : unreachable,
          },
        ]
      : [
          // the evidence's gate (issue 15): the copy run's own verification, not today's rows
          {
            name: 'copy_verified',
            ok: copied && (await succeededCopyRun(deps.knex, r.tenant.id)) !== null,
            detail: `status ${row.status}; the latest copy run verified counts and checksums`,
          },
        ]),
    {
      name: 'client_addr_allowed',
      ok: !!v?.test.client_addr_allowed,
      detail: v ? `db_user_host ${row.db_user_host ?? '%'}` : unreachable,
    },
    {
      name: 'backup_ready',
      ok: !!settings.backup_ready,
      detail: settings.backup_ready ? 'backup_ready is on' : 'backup_ready is off',
    },
    {
      name: 'not_master_tenant',
      ok: !tenantRow?.is_master,
      detail: tenantRow?.is_master ? 'the master tenant stays on the shared database' : 'not the master tenant',
    },
    // issue 15 item 3: the credential request's `enabled` switch and a rolled-back dual write
    {
      name: 'credentials_enabled',
      ok: !!settings.enabled,
      detail: settings.enabled ? 'provisioning credentials are enabled' : 'provisioning credentials are not enabled',
    },
    await dualWriteRolledBack(deps.knex, r.tenant.id),
  ];
  return { status: row.status, tenant_db: r.reach, checks, passed: checks.every((c) => c.ok) };
}
