import type { Knex } from 'knex';
import type { TenantScope } from '../../db/tenant-scope.js';
import { envelope } from '../shared/schemas.js';
import { prefixTsQuery, type PageParams } from './query.js';
import { CUSTOMER_COLUMNS, CUSTOMER_ONU_JOIN, customerShape } from './shapes.js';

/**
 * GET /api/external/v1/customers (document 1; DESIGN.md §4): filters search, status,
 * updated_since; newest first with id tie-breaker; `total` always exact.
 *
 * Built to serve 100,000-customer tenants fast (issue 2 benchmark). Every page is one statement:
 * the page's ids come from a narrow subquery (LIMIT/OFFSET over an index, a "deferred join": deep
 * pages skip index entries, not joined rows) and only those rows are joined to their package and
 * ONU. How the total is found depends on the filters:
 *
 * | filters                    | total                                              | page ids                                   |
 * |----------------------------|----------------------------------------------------|--------------------------------------------|
 * | none, or status only       | customer_status_counts (trigger-maintained, see    | index-only scan of (tenant_id[, status],   |
 * |                            | migration 20261121010000): at most 3 rows summed   | created_at DESC, id DESC); deep pages in   |
 * |                            |                                                    | the back half are read from the oldest end |
 * | search (+ any other)       | count(*) of one GIN scan, materialised in a CTE    | top-N of the same CTE                      |
 * |                            | that also feeds the page (the search runs once)    |                                            |
 * | updated_since (+ status)   | count(*) with the same filters                     | the created_at index, filtered             |
 */

/** Validated query of the customers list. */
export interface CustomerListQuery extends PageParams { search?: string; status?: string; updated_since?: string }

/**
 * From this OFFSET on, a trigger-counted list reads its total first, so that a page in the back
 * half of the list is read from the oldest end (ORDER BY ... ASC with the smaller OFFSET) and a
 * page past the end costs no scan at all. Below it, one statement does everything.
 */
export const REVERSE_SCAN_MIN_OFFSET = 1000;

type Row = Record<string, any>;
const newestFirst = (alias: string, order: 'asc' | 'desc' = 'desc') =>
  [{ column: `${alias}.created_at`, order }, { column: `${alias}.id`, order }];

/** Applies the list filters to a customers query aliased `alias`. */
function filters(q: Knex.QueryBuilder, alias: string, query: CustomerListQuery): Knex.QueryBuilder {
  if (query.status) q.where(`${alias}.status`, query.status);
  if (query.updated_since) q.where(`${alias}.updated_at`, '>=', new Date(query.updated_since));
  const ts = prefixTsQuery(`${alias}.search_vector`, query.search);
  if (ts) q.whereRaw(ts.sql, ts.bindings);
  return q;
}

/** Exact total from the per-status counters: one row `{n}`. */
function countersTotal(scope: TenantScope, status: string | undefined): Knex.QueryBuilder {
  const k = scope.table('customer_status_counts', 'k').select(scope.knex.raw('coalesce(sum(k.n), 0)::bigint as n'));
  return status ? k.where('k.status', status) : k;
}

async function readTotal(q: Knex.QueryBuilder): Promise<number> {
  return Number(((await q.first()) as { n: number } | undefined)?.n ?? 0);
}

/**
 * Runs the page statement: `ids` (a subquery yielding the page's customer ids) joined to the
 * customer, its package and its ONU, plus `total` as an uncorrelated scalar subquery (computed
 * once) unless the total is already known; optional CTEs are attached to the statement. When the
 * page is empty, the total is read on its own.
 */
async function runPage(
  scope: TenantScope, query: CustomerListQuery, ids: Knex.QueryBuilder,
  total: { known: number } | { query: Knex.QueryBuilder }, cte?: { name: string; query: Knex.QueryBuilder },
) {
  const withCte = (q: Knex.QueryBuilder) => (cte ? q.withMaterialized(cte.name, cte.query) : q);
  const columns: (string | Knex.QueryBuilder)[] = [...CUSTOMER_COLUMNS];
  if ('query' in total) columns.push(total.query.clone().as('_total'));
  const rows: Row[] = await withCte(scope.table('customers', 'c'))
    .join(ids.as('pg'), 'pg.id', 'c.id')
    .leftJoin('packages as p', (j) => { j.on('p.id', 'c.package_id').andOn('p.tenant_id', 'c.tenant_id'); })
    .joinRaw(CUSTOMER_ONU_JOIN)
    .select(columns)
    .orderBy(newestFirst('c'));
  const n = 'known' in total ? total.known : rows.length ? Number(rows[0]._total) : await readTotal(withCte(total.query));
  return envelope(rows.map(customerShape), query.page, query.per_page, n);
}

/** No filter or status only: counters for the total; deep pages read from the nearer end. */
async function listByCounters(scope: TenantScope, query: CustomerListQuery) {
  const pp = query.per_page;
  const offset = (query.page - 1) * pp;
  const base = () => filters(scope.table('customers', 'ci'), 'ci', query).select('ci.id');
  if (offset < REVERSE_SCAN_MIN_OFFSET) {
    const ids = base().orderBy(newestFirst('ci')).limit(pp).offset(offset);
    return runPage(scope, query, ids, { query: countersTotal(scope, query.status) });
  }
  const total = await readTotal(countersTotal(scope, query.status));
  if (offset >= total) return envelope([], query.page, pp, total);
  // rows offset .. offset+pp-1 counted from the newest are rows total-offset-pp .. total-offset-1 from the oldest
  const ids = 2 * offset + pp > total
    ? base().orderBy(newestFirst('ci', 'asc')).limit(Math.min(pp, total - offset)).offset(Math.max(0, total - offset - pp))
    : base().orderBy(newestFirst('ci')).limit(pp).offset(offset);
  return runPage(scope, query, ids, { known: total });
}

/** Search: one GIN scan into a materialised CTE `m` that yields both the page and the count. */
async function listBySearch(scope: TenantScope, query: CustomerListQuery) {
  const matches = filters(scope.table('customers', 'ci'), 'ci', query).select('ci.id', 'ci.created_at');
  const ids = scope.knex('m').select('m.id').orderBy(newestFirst('m'))
    .limit(query.per_page).offset((query.page - 1) * query.per_page);
  return runPage(scope, query, ids, { query: scope.knex('m').count({ n: '*' }) }, { name: 'm', query: matches });
}

/** updated_since without search: the page by the created_at index, the total by count(*). */
async function listByCount(scope: TenantScope, query: CustomerListQuery) {
  const ids = filters(scope.table('customers', 'ci'), 'ci', query).select('ci.id').orderBy(newestFirst('ci'))
    .limit(query.per_page).offset((query.page - 1) * query.per_page);
  return runPage(scope, query, ids, { query: filters(scope.table('customers', 'cc'), 'cc', query).count({ n: '*' }) });
}

/**
 * GET /api/external/v1/customers: picks the strategy of the table above.
 * @param query validated page, per_page, search, status, updated_since
 * @returns the list envelope with customer read shapes
 */
export async function listCustomers(scope: TenantScope, query: CustomerListQuery) {
  if (prefixTsQuery('x', query.search)) return listBySearch(scope, query);
  if (query.updated_since) return listByCount(scope, query);
  return listByCounters(scope, query);
}
