import type { Knex } from 'knex';
import { tenantStatement, type TenantScope } from '../../db/tenant-scope.js';
import { envelope } from '../shared/schemas.js';
import {
  expandSearch,
  MAX_PREFIX_EXPANSION,
  prefixTsQuery,
  searchWords,
  tsCondition,
  WORD_LOOKUP_SQL,
  type PageParams,
} from './query.js';
import { CUSTOMER_COLUMNS, CUSTOMER_ONU_JOIN, customerShape } from './shapes.js';

/**
 * GET /api/external/v1/customers (document 1; DESIGN.md §4): filters search, status,
 * updated_since; newest first with id tie-breaker; `total` always exact.
 *
 * Built to serve 100,000-customer tenants fast (issue 2 benchmark; docs/external-api.md). A first
 * page and a search are one statement, the total included; a later page is two: the page's ids
 * with the total, then the rows of those ids (pageIdsSql below says why). How the page and the
 * total are found depends on the filters:
 *
 * | filters                  | total                                       | page                                     |
 * |--------------------------|---------------------------------------------|------------------------------------------|
 * | none, or status only     | customer_status_counts (trigger-maintained, | first page: straight off the             |
 * | (fixed named statements, | see migration 20261121010000): at most 3    | (tenant_id[, status], created_at DESC,   |
 * | the hot path)            | rows summed                                 | id DESC) index; later pages: ids by an   |
 * |                          |                                             | index-only scan of it, then joined (a    |
 * |                          |                                             | deferred join); pages in the back half   |
 * |                          |                                             | read from the oldest end                 |
 * | search (+ any other)     | count(*) of one GIN scan, materialised in a | top-N of the same CTE                    |
 * |                          | CTE that also feeds the page (the search    |                                          |
 * |                          | runs once)                                  |                                          |
 * | updated_since (+ status) | count(*) with the same filters              | the created_at index, filtered           |
 * | admin filters (package,  | count(*) with the same filters              | the created_at index (package: its own   |
 * | NAS, service type, cycle)|                                             | (tenant_id, package_id, created_at) one) |
 *
 * customerLister(spec) builds such a list for a select list and read shape: the external list
 * below and the admin list (api/customers/list.ts) share every statement's shape and strategy.
 */

/** Validated query of the customers list (document 1's filters). */
export interface CustomerListQuery extends PageParams {
  search?: string;
  status?: string;
  updated_since?: string;
}

/**
 * The filters of the admin list (issue 8 item 2: GET /api/customers) beyond document 1's. The
 * external query schema drops them (unknown query parameters are dropped), so the external list
 * never sees them. Any of them sends a page down the count path (or the knex search path): the
 * trigger-maintained counters only know tenant and status.
 */
export interface CustomerListFilters extends CustomerListQuery {
  package_id?: number;
  service_type?: string;
  billing_cycle?: string;
  nas_id?: number;
}

/**
 * What one customer list reads and answers: the external list (document 1) and the admin list
 * (issue 8 item 2) run the same strategies with their own select list and read shape.
 */
export interface CustomerListSpec<T> {
  /** Prefix of the prepared statements' names (unique per spec): `ext` keeps the external names. */
  name: string;
  /**
   * The select list: SQL over customers `c`, its package `p`, its ONU `o` (CUSTOMER_ONU_JOIN) and the
   * aliases of `joins`. Never a secret column.
   */
  columns: readonly string[];
  /** SQL of further LEFT JOINs after the package and the ONU ('' for none); every table pinned to `c.tenant_id`. */
  joins: string;
  /** Row -> read shape. */
  shape: (row: Record<string, any>) => T;
}

// ---- no filter or status only: fixed statements (the hot path) ---------------------------------

/**
 * per_page values whose first page has its own statement with a literal LIMIT. With LIMIT and
 * OFFSET as parameters PostgreSQL plans the statement again on every call (a generic plan has to
 * assume 10 % of the table); with a literal LIMIT and no OFFSET it keeps one generic plan per
 * connection, which saves about 40 % of the server's CPU for a first page. Bounded so that a
 * client cycling through page sizes cannot fill the server's plan cache; other sizes use `$n`.
 */
export const FIRST_PAGE_SIZES: readonly number[] = [10, 15, 20, 25, 50, 100];

/** `$2` is the status in every statement of the status-filtered list. */
const statusCond = (alias: string, byStatus: boolean) => (byStatus ? ` AND ${alias}.status = $2` : '');
/** The exact total from the counters (one value `n`). */
const totalSql = (byStatus: boolean) =>
  `SELECT coalesce(sum(k.n), 0)::bigint AS n FROM customer_status_counts k WHERE k.tenant_id = $1${statusCond('k', byStatus)}`;

/** FROM and joins of a page: customers `c`, package `p`, ONU `o`, then the spec's joins. */
const fromSql = (joins: string) => `FROM customers c
LEFT JOIN packages p ON p.id = c.package_id AND p.tenant_id = c.tenant_id
${CUSTOMER_ONU_JOIN}${joins ? `\n${joins}` : ''}`;

/**
 * First page: the newest rows straight off the (tenant_id[, status], created_at DESC, id DESC)
 * index, joined to package and ONU, with the exact total from the counters as `_total`.
 * @param limit a literal row count, or the placeholder that carries it
 */
function firstPageSql(spec: CustomerListSpec<unknown>, byStatus: boolean, limit: number | string): string {
  return `SELECT ${spec.columns.join(', ')},
  (${totalSql(byStatus)}) AS _total
${fromSql(spec.joins)}
WHERE c.tenant_id = $1${statusCond('c', byStatus)}
ORDER BY c.created_at DESC, c.id DESC
LIMIT ${limit}`;
}

/**
 * Later pages, step 1: the exact total from the counters and the page's ids from an
 * index-only scan of the (tenant_id[, status], created_at DESC, id DESC) index, as `{n, ids}`.
 * A page in the back half is read from the oldest end (ASC, with the smaller OFFSET; the rows
 * statement restores the order); a page past the end reads no index at all. Values:
 * `[status?, limit, offset]` (offset counted from the newest).
 *
 * Why a later page is two statements: with LIMIT and OFFSET as parameters PostgreSQL cannot cost a
 * generic plan of the page (it assumes 10 % of the table), so one statement that both found the ids
 * and joined the rows was planned again on every call: about 0.5 ms of the server's CPU with the
 * joins, a sixth of a deep page's work. Split, this statement is cheap to plan and the rows
 * statement (rowsByIdsSql, the joins) runs on a cached generic plan: a deep page costs 15-20 %
 * less (admin list in-process, 10 concurrent calls, page 900 of 1,000: 510-540 -> 610-650 pages/s)
 * for one more round trip.
 */
function pageIdsSql(byStatus: boolean): string {
  const [limit, offset] = byStatus ? ['$3::int', '$4::int'] : ['$2::int', '$3::int'];
  const ids = (order: 'ASC' | 'DESC', lim: string, off: string) =>
    `ARRAY(SELECT ci.id FROM customers ci WHERE ci.tenant_id = $1${statusCond('ci', byStatus)}
    ORDER BY ci.created_at ${order}, ci.id ${order} LIMIT ${lim} OFFSET ${off})`;
  return `WITH k AS (${totalSql(byStatus)})
SELECT k.n, CASE WHEN ${offset} >= k.n THEN '{}'::int[]
  WHEN 2 * ${offset} + ${limit} > k.n THEN ${ids('ASC', `least(${limit}, k.n - ${offset})`, `greatest(0, k.n - ${offset} - ${limit})`)}
  ELSE ${ids('DESC', limit, offset)} END AS ids
FROM k`;
}

/**
 * Step 2 of a later page: the rows of the page's ids (`$2`, int[]), joined to
 * package, ONU and the spec's joins, newest first. Its plan does not depend on the values, so
 * PostgreSQL keeps one generic plan per connection (see pageIdsSql).
 */
function rowsByIdsSql(spec: CustomerListSpec<unknown>): string {
  return `SELECT ${spec.columns.join(', ')}
${fromSql(spec.joins)}
WHERE c.tenant_id = $1 AND c.id = ANY ($2::int[])
ORDER BY c.created_at DESC, c.id DESC`;
}

/** The statements of the counters strategy; values are `[status?, ...]` (status only when filtered). */
function counterStatements(spec: CustomerListSpec<unknown>, byStatus: boolean) {
  const n = `${spec.name}_customers${byStatus ? '_by_status' : ''}`;
  return {
    /** First page, literal LIMIT: [status?]. */
    firstPage: new Map(
      FIRST_PAGE_SIZES.map((size) => [size, tenantStatement(`${n}_first_${size}`, firstPageSql(spec, byStatus, size))]),
    ),
    /** First page of any other size: [status?, limit]. */
    firstPageAnySize: tenantStatement(`${n}_first`, firstPageSql(spec, byStatus, byStatus ? '$3' : '$2')),
    /** The exact total alone: [status?] -> {n}. */
    total: tenantStatement(`${n}_total`, totalSql(byStatus)),
  };
}

/** A later page's total and ids (pageIdsSql), shared by every spec: [status?, limit, offset] -> {n, ids}. */
const PAGE_IDS = {
  all: tenantStatement('customers_page_ids', pageIdsSql(false)),
  byStatus: tenantStatement('customers_by_status_page_ids', pageIdsSql(true)),
};

/**
 * The search-only list with plain words as ONE fixed statement: `$2` holds the distinct lowercased
 * prefix terms; each is expanded through the tenant's word dictionary (at most
 * MAX_PREFIX_EXPANSION exact words, else it stays a `:*` prefix; a term with no word makes the
 * tsquery NULL, so nothing matches), the GIN scan runs once into a materialised CTE that yields
 * both the exact total and the page (limit `$3`, offset `$4`), whose rows are then joined.
 * Same result as expandSearch + tsCondition (tests compare both with a plain `:*` query).
 *
 * The terms are read through `(SELECT $2::text[])`, not `$2` itself: given the array, PostgreSQL
 * estimates its length exactly in a custom plan (10 elements in a generic one), so the generic
 * plan always looked dearer and the statement was planned again on every call (0.5 ms of the
 * server's CPU). Behind a sub-select both plans see the same estimate and the generic plan is kept:
 * +20-35 % searches per second in-process (admin list, 10 concurrent calls).
 */
function searchPageSql(spec: CustomerListSpec<unknown>): string {
  return `WITH t AS (SELECT u.p FROM unnest((SELECT $2::text[])) AS u(p)),
e AS (
  SELECT t.p, count(*) AS n,
    string_agg('''' || replace(replace(w.word, '\\', '\\\\'), '''', '''''') || '''', ' | ' ORDER BY w.word) AS alts
  FROM t CROSS JOIN LATERAL (SELECT k.word FROM customer_search_words k
    WHERE k.tenant_id = $1 AND k.word >= t.p AND k.word < t.p || chr(1114111) AND k.n > 0
    ORDER BY k.word LIMIT ${MAX_PREFIX_EXPANSION + 1}) w
  GROUP BY t.p),
q AS (SELECT CASE WHEN (SELECT count(*) FROM e) < (SELECT count(*) FROM t) THEN NULL
  ELSE (SELECT string_agg(CASE WHEN e.n > ${MAX_PREFIX_EXPANSION} THEN '''' || e.p || ''':*' ELSE '(' || e.alts || ')' END, ' & ') FROM e)::tsquery END AS tsq),
m AS MATERIALIZED (
  SELECT ci.id, ci.created_at FROM customers ci WHERE ci.tenant_id = $1 AND ci.search_vector @@ (SELECT q.tsq FROM q))
SELECT ${spec.columns.join(', ')},
  (SELECT count(*) FROM m) AS _total
${fromSql(spec.joins)}
WHERE c.tenant_id = $1 AND c.id = ANY (ARRAY(SELECT m.id FROM m ORDER BY m.created_at DESC, m.id DESC LIMIT $3 OFFSET $4))
ORDER BY c.created_at DESC, c.id DESC`;
}

/** Rows with timestamptz as ISO strings: no Date objects for a page of 100 rows. */
const ISO = { timestamps: 'iso' } as const;

/** Prefix terms -> the tenant's words (api/external/query.ts expandSearch); one statement for every list. */
const wordLookup = tenantStatement('ext_customer_words', WORD_LOOKUP_SQL);

type Row = Record<string, any>;
const newestFirst = (alias: string, order: 'asc' | 'desc' = 'desc') => [
  { column: `${alias}.created_at`, order },
  { column: `${alias}.id`, order },
];

/** True when the query has a filter the counters cannot answer (anything but the status). */
function hasExtraFilter(query: CustomerListFilters): boolean {
  return (
    query.package_id !== undefined ||
    query.service_type !== undefined ||
    query.billing_cycle !== undefined ||
    query.nas_id !== undefined
  );
}

/** Applies the list filters to a customers query aliased `alias`. */
function filters(
  q: Knex.QueryBuilder,
  alias: string,
  query: CustomerListFilters,
  ts?: { sql: string; bindings: string[] } | null,
): Knex.QueryBuilder {
  if (query.status) q.where(`${alias}.status`, query.status);
  if (query.updated_since) q.where(`${alias}.updated_at`, '>=', new Date(query.updated_since));
  if (query.package_id !== undefined) q.where(`${alias}.package_id`, query.package_id);
  if (query.service_type !== undefined) q.where(`${alias}.service_type`, query.service_type);
  if (query.billing_cycle !== undefined) q.where(`${alias}.billing_cycle`, query.billing_cycle);
  if (query.nas_id !== undefined) q.where(`${alias}.nas_id`, query.nas_id);
  if (ts) q.whereRaw(ts.sql, ts.bindings);
  return q;
}

async function readTotal(q: Knex.QueryBuilder): Promise<number> {
  return Number(((await q.first()) as { n: number } | undefined)?.n ?? 0);
}

/**
 * Builds a customer list over the strategies of the table above, with the spec's select list,
 * joins and read shape. Statements are defined (and checked by tenantStatement) once, here.
 * @returns `(scope, query) => envelope` (DESIGN.md §4)
 */
export function customerLister<T>(spec: CustomerListSpec<T>) {
  const stmts = { all: counterStatements(spec, false), byStatus: counterStatements(spec, true) };
  const rowsByIds = tenantStatement(`${spec.name}_customers_by_ids`, rowsByIdsSql(spec));
  const searchPage = tenantStatement(`${spec.name}_customers_search_page`, searchPageSql(spec));
  const shape = spec.shape;

  /** Step 2 of a later page: the rows of `ids`, in list order, as an envelope. */
  async function pageOfIds(scope: TenantScope, query: CustomerListFilters, ids: number[], n: number) {
    const rows = ids.length ? await scope.run(rowsByIds, [ids], ISO) : [];
    return envelope(rows.map(shape), query.page, query.per_page, n);
  }

  /** No filter or status only: counters for the total; later pages read from the nearer end. */
  async function listByCounters(scope: TenantScope, query: CustomerListFilters) {
    const st = query.status ? stmts.byStatus : stmts.all;
    const status = query.status ? [query.status] : [];
    const pp = query.per_page;
    if (query.page === 1) {
      const first = st.firstPage.get(pp);
      const rows = first
        ? await scope.run(first, status, ISO)
        : await scope.run(st.firstPageAnySize, [...status, pp], ISO);
      const n = rows.length
        ? Number(rows[0]._total)
        : Number((await scope.run<{ n: number }>(st.total, status))[0]?.n ?? 0);
      return envelope(rows.map(shape), query.page, pp, n);
    }
    const ids = query.status ? PAGE_IDS.byStatus : PAGE_IDS.all;
    const [r] = await scope.run<{ n: number; ids: number[] }>(ids, [...status, pp, (query.page - 1) * pp]);
    return pageOfIds(scope, query, r.ids, Number(r.n));
  }

  /**
   * Runs the page statement: `ids` (a subquery yielding the page's customer ids) joined to the
   * customer, its package, its ONU and the spec's joins, plus `total` as an uncorrelated scalar
   * subquery (computed once); optional CTEs are attached to the statement. When the page is
   * empty, the total is read on its own.
   */
  async function runPage(
    scope: TenantScope,
    query: CustomerListFilters,
    ids: Knex.QueryBuilder,
    total: Knex.QueryBuilder,
    cte?: { name: string; query: Knex.QueryBuilder },
  ) {
    const withCte = (q: Knex.QueryBuilder) => (cte ? q.withMaterialized(cte.name, cte.query) : q);
    const raw = (sql: string) => scope.knex.raw(sql);
    const columns: (Knex.Raw | Knex.QueryBuilder)[] = [...spec.columns.map(raw), total.clone().as('_total')];
    const q = withCte(scope.table('customers', 'c'))
      .join(ids.as('pg'), 'pg.id', 'c.id')
      .leftJoin('packages as p', (j) => {
        j.on('p.id', 'c.package_id').andOn('p.tenant_id', 'c.tenant_id');
      })
      .joinRaw(CUSTOMER_ONU_JOIN);
    if (spec.joins) q.joinRaw(spec.joins);
    const rows: Row[] = await q.select(columns).orderBy(newestFirst('c'));
    const n = rows.length ? Number(rows[0]._total) : await readTotal(withCte(total));
    return envelope(rows.map(shape), query.page, query.per_page, n);
  }

  /**
   * Search: prefix terms expanded through the tenant's word dictionary (exact lexemes match far
   * faster than `:*` in the GIN index). Search alone with plain words: the fixed statement above;
   * otherwise one GIN scan into a materialised CTE `m` (knex) that yields both the page and the count.
   */
  async function listBySearch(scope: TenantScope, query: CustomerListFilters) {
    const words = searchWords(query.search);
    const alone = !query.status && !query.updated_since && !hasExtraFilter(query);
    if (words.length && alone && words.every((w) => /^[A-Za-z0-9]+$/.test(w))) {
      const plain = [...new Set(words.map((w) => w.toLowerCase()))];
      const rows = await scope.run(searchPage, [plain, query.per_page, (query.page - 1) * query.per_page], ISO);
      if (rows.length || query.page === 1) {
        return envelope(rows.map(shape), query.page, query.per_page, rows.length ? Number(rows[0]._total) : 0);
      }
    }
    const terms = await expandSearch(query.search, (plain) =>
      scope.run<{ p: string; word: string }>(wordLookup, [plain]),
    );
    if (terms === null) return listUnsearched(scope, query);
    if (terms === 'no-match') return envelope([], query.page, query.per_page, 0);
    const matches = filters(scope.table('customers', 'ci'), 'ci', query, tsCondition('ci.search_vector', terms)).select(
      'ci.id',
      'ci.created_at',
    );
    const ids = scope
      .knex('m')
      .select('m.id')
      .orderBy(newestFirst('m'))
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page);
    return runPage(scope, query, ids, scope.knex('m').count({ n: '*' }), { name: 'm', query: matches });
  }

  /** Filters the counters do not know (updated_since, admin filters): the created_at index, count(*). */
  async function listByCount(scope: TenantScope, query: CustomerListFilters) {
    const ids = filters(scope.table('customers', 'ci'), 'ci', query)
      .select('ci.id')
      .orderBy(newestFirst('ci'))
      .limit(query.per_page)
      .offset((query.page - 1) * query.per_page);
    return runPage(scope, query, ids, filters(scope.table('customers', 'cc'), 'cc', query).count({ n: '*' }));
  }

  /** Without a search: the counters when they can answer, else the count path. */
  function listUnsearched(scope: TenantScope, query: CustomerListFilters) {
    return query.updated_since || hasExtraFilter(query) ? listByCount(scope, query) : listByCounters(scope, query);
  }

  return async function list(scope: TenantScope, query: CustomerListFilters) {
    if (prefixTsQuery('x', query.search)) return listBySearch(scope, query);
    return listUnsearched(scope, query);
  };
}

/** The external list's spec: document 1's read shape; statements keep their `ext_` names. */
const externalList = customerLister({ name: 'ext', columns: CUSTOMER_COLUMNS, joins: '', shape: customerShape });

/**
 * GET /api/external/v1/customers: picks the strategy of the table above.
 * @param query validated page, per_page, search, status, updated_since
 * @returns the list envelope with customer read shapes
 */
export async function listCustomers(scope: TenantScope, query: CustomerListQuery) {
  return externalList(scope, query);
}
