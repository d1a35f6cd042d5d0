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
 * Built to serve 100,000-customer tenants fast (issue 2 benchmark; docs/external-api.md). Every
 * page is one statement, the total included. How the page and the total are found depends on the
 * filters:
 *
 * | filters                  | total                                       | page                                     |
 * |--------------------------|---------------------------------------------|------------------------------------------|
 * | none, or status only     | customer_status_counts (trigger-maintained, | first page: straight off the             |
 * | (fixed named statements, | see migration 20261121010000): at most 3    | (tenant_id[, status], created_at DESC,   |
 * | the hot path)            | rows summed                                 | id DESC) index; later pages: ids by an   |
 * |                          |                                             | index-only scan of it, then joined (a    |
 * |                          |                                             | deferred join); deep pages in the back   |
 * |                          |                                             | half read from the oldest end            |
 * | search (+ any other)     | count(*) of one GIN scan, materialised in a | top-N of the same CTE                    |
 * |                          | CTE that also feeds the page (the search    |                                          |
 * |                          | runs once)                                  |                                          |
 * | updated_since (+ status) | count(*) with the same filters              | the created_at index, filtered           |
 */

/** Validated query of the customers list. */
export interface CustomerListQuery extends PageParams {
  search?: string;
  status?: string;
  updated_since?: string;
}

/**
 * From this OFFSET on, a trigger-counted list reads its total first, so that a page in the back
 * half of the list is read from the oldest end (ORDER BY ... ASC with the smaller OFFSET) and a
 * page past the end costs no scan at all. Below it, one statement does everything.
 */
export const REVERSE_SCAN_MIN_OFFSET = 1000;

// ---- no filter or status only: fixed statements (the hot path) ---------------------------------

/**
 * per_page values whose first page has its own statement with a literal LIMIT. With LIMIT and
 * OFFSET as parameters PostgreSQL plans the statement again on every call (a generic plan has to
 * assume 10 % of the table); with a literal LIMIT and no OFFSET it keeps one generic plan per
 * connection, which saves about 40 % of the server's CPU for a first page. Bounded so that a
 * client cycling through page sizes cannot fill the server's plan cache; other sizes use `$n`.
 */
export const FIRST_PAGE_SIZES: readonly number[] = [10, 15, 20, 25, 50, 100];

const selectList = CUSTOMER_COLUMNS.join(', ');
/** `$2` is the status in every statement of the status-filtered list. */
const statusCond = (alias: string, byStatus: boolean) => (byStatus ? ` AND ${alias}.status = $2` : '');
/** The exact total from the counters (one value `n`). */
const totalSql = (byStatus: boolean) =>
  `SELECT coalesce(sum(k.n), 0)::bigint AS n FROM customer_status_counts k WHERE k.tenant_id = $1${statusCond('k', byStatus)}`;

/**
 * First page: the newest rows straight off the (tenant_id[, status], created_at DESC, id DESC)
 * index, joined to package and ONU, with the exact total from the counters as `_total`.
 * @param limit a literal row count, or the placeholder that carries it
 */
function firstPageSql(byStatus: boolean, limit: number | string): string {
  return `SELECT ${selectList},
  (${totalSql(byStatus)}) AS _total
FROM customers c
LEFT JOIN packages p ON p.id = c.package_id AND p.tenant_id = c.tenant_id
${CUSTOMER_ONU_JOIN}
WHERE c.tenant_id = $1${statusCond('c', byStatus)}
ORDER BY c.created_at DESC, c.id DESC
LIMIT ${limit}`;
}

/**
 * Later pages: the page's ids from an index-only scan of the same index (limit and offset as the
 * last two placeholders, newest or oldest first), collected into an array, and only those rows
 * joined (a deferred join: a skipped row costs an index entry, not a join). The array form plans
 * ~15 % cheaper than joining a subquery (customers appears once in the join).
 */
function laterPageSql(byStatus: boolean, order: 'DESC' | 'ASC', withTotal: boolean): string {
  const [limit, offset] = byStatus ? ['$3', '$4'] : ['$2', '$3'];
  return `SELECT ${selectList}${withTotal ? `,\n  (${totalSql(byStatus)}) AS _total` : ''}
FROM customers c
LEFT JOIN packages p ON p.id = c.package_id AND p.tenant_id = c.tenant_id
${CUSTOMER_ONU_JOIN}
WHERE c.tenant_id = $1 AND c.id = ANY (ARRAY(
  SELECT ci.id FROM customers ci WHERE ci.tenant_id = $1${statusCond('ci', byStatus)}
  ORDER BY ci.created_at ${order}, ci.id ${order} LIMIT ${limit} OFFSET ${offset}))
ORDER BY c.created_at DESC, c.id DESC`;
}

/** The statements of the counters strategy; values are `[status?, ...]` (status only when filtered). */
function counterStatements(byStatus: boolean) {
  const n = byStatus ? 'ext_customers_by_status' : 'ext_customers';
  return {
    /** First page, literal LIMIT: [status?]. */
    firstPage: new Map(
      FIRST_PAGE_SIZES.map((size) => [size, tenantStatement(`${n}_first_${size}`, firstPageSql(byStatus, size))]),
    ),
    /** First page of any other size: [status?, limit]. */
    firstPageAnySize: tenantStatement(`${n}_first`, firstPageSql(byStatus, byStatus ? '$3' : '$2')),
    /** Page plus total: [status?, limit, offset]. */
    pageWithTotal: tenantStatement(`${n}_page_total`, laterPageSql(byStatus, 'DESC', true)),
    /** Page read newest first: [status?, limit, offset]. */
    newestFirst: tenantStatement(`${n}_page_desc`, laterPageSql(byStatus, 'DESC', false)),
    /** Page read from the oldest end: [status?, limit, offset from the oldest]. */
    oldestFirst: tenantStatement(`${n}_page_asc`, laterPageSql(byStatus, 'ASC', false)),
    /** The exact total alone: [status?] -> {n}. */
    total: tenantStatement(`${n}_total`, totalSql(byStatus)),
  };
}

const COUNTER_STATEMENTS = { all: counterStatements(false), byStatus: counterStatements(true) };
/** Rows with timestamptz as ISO strings: no Date objects for a page of 100 rows. */
const ISO = { timestamps: 'iso' } as const;

/** No filter or status only: counters for the total; deep pages read from the nearer end. */
async function listByCounters(scope: TenantScope, query: CustomerListQuery) {
  const stmts = query.status ? COUNTER_STATEMENTS.byStatus : COUNTER_STATEMENTS.all;
  const status = query.status ? [query.status] : [];
  const pp = query.per_page;
  const offset = (query.page - 1) * pp;
  const readTotal = async () => Number((await scope.run<{ n: number }>(stmts.total, status))[0]?.n ?? 0);
  if (offset < REVERSE_SCAN_MIN_OFFSET) {
    const first = offset === 0 ? stmts.firstPage.get(pp) : undefined;
    const rows = first
      ? await scope.run(first, status, ISO)
      : offset === 0
        ? await scope.run(stmts.firstPageAnySize, [...status, pp], ISO)
        : await scope.run(stmts.pageWithTotal, [...status, pp, offset], ISO);
    const total = rows.length ? Number(rows[0]._total) : await readTotal();
    return envelope(rows.map(customerShape), query.page, pp, total);
  }
  const total = await readTotal();
  if (offset >= total) return envelope([], query.page, pp, total);
  // rows offset .. offset+pp-1 counted from the newest are rows total-offset-pp .. total-offset-1 from the oldest
  const rows =
    2 * offset + pp > total
      ? await scope.run(
          stmts.oldestFirst,
          [...status, Math.min(pp, total - offset), Math.max(0, total - offset - pp)],
          ISO,
        )
      : await scope.run(stmts.newestFirst, [...status, pp, offset], ISO);
  return envelope(rows.map(customerShape), query.page, pp, total);
}

// ---- search, updated_since: built with knex ---------------------------------------------------

type Row = Record<string, any>;
const newestFirst = (alias: string, order: 'asc' | 'desc' = 'desc') => [
  { column: `${alias}.created_at`, order },
  { column: `${alias}.id`, order },
];

/** Applies the list filters to a customers query aliased `alias`. */
function filters(
  q: Knex.QueryBuilder,
  alias: string,
  query: CustomerListQuery,
  ts?: { sql: string; bindings: string[] } | null,
): Knex.QueryBuilder {
  if (query.status) q.where(`${alias}.status`, query.status);
  if (query.updated_since) q.where(`${alias}.updated_at`, '>=', new Date(query.updated_since));
  if (ts) q.whereRaw(ts.sql, ts.bindings);
  return q;
}

async function readTotal(q: Knex.QueryBuilder): Promise<number> {
  return Number(((await q.first()) as { n: number } | undefined)?.n ?? 0);
}

/**
 * Runs the page statement: `ids` (a subquery yielding the page's customer ids) joined to the
 * customer, its package and its ONU, plus `total` as an uncorrelated scalar subquery (computed
 * once); optional CTEs are attached to the statement. When the page is empty, the total is read
 * on its own.
 */
async function runPage(
  scope: TenantScope,
  query: CustomerListQuery,
  ids: Knex.QueryBuilder,
  total: Knex.QueryBuilder,
  cte?: { name: string; query: Knex.QueryBuilder },
) {
  const withCte = (q: Knex.QueryBuilder) => (cte ? q.withMaterialized(cte.name, cte.query) : q);
  const columns: (string | Knex.QueryBuilder)[] = [...CUSTOMER_COLUMNS, total.clone().as('_total')];
  const rows: Row[] = await withCte(scope.table('customers', 'c'))
    .join(ids.as('pg'), 'pg.id', 'c.id')
    .leftJoin('packages as p', (j) => {
      j.on('p.id', 'c.package_id').andOn('p.tenant_id', 'c.tenant_id');
    })
    .joinRaw(CUSTOMER_ONU_JOIN)
    .select(columns)
    .orderBy(newestFirst('c'));
  const n = rows.length ? Number(rows[0]._total) : await readTotal(withCte(total));
  return envelope(rows.map(customerShape), query.page, query.per_page, n);
}

// ---- search ------------------------------------------------------------------------------------

/** Prefix terms -> the tenant's words (api/external/query.ts expandSearch). */
const wordLookup = tenantStatement('ext_customer_words', WORD_LOOKUP_SQL);

/**
 * The search-only list with plain words as ONE fixed statement: `$2` holds the distinct lowercased
 * prefix terms; each is expanded through the tenant's word dictionary (at most
 * MAX_PREFIX_EXPANSION exact words, else it stays a `:*` prefix; a term with no word makes the
 * tsquery NULL, so nothing matches), the GIN scan runs once into a materialised CTE that yields
 * both the exact total and the page (limit `$3`, offset `$4`), whose rows are then joined.
 * Same result as expandSearch + tsCondition (tests compare both with a plain `:*` query).
 */
const searchPage = tenantStatement(
  'ext_customers_search',
  `WITH t AS (SELECT u.p FROM unnest($2::text[]) AS u(p)),
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
SELECT ${selectList},
  (SELECT count(*) FROM m) AS _total
FROM customers c
LEFT JOIN packages p ON p.id = c.package_id AND p.tenant_id = c.tenant_id
${CUSTOMER_ONU_JOIN}
WHERE c.tenant_id = $1 AND c.id = ANY (ARRAY(SELECT m.id FROM m ORDER BY m.created_at DESC, m.id DESC LIMIT $3 OFFSET $4))
ORDER BY c.created_at DESC, c.id DESC`,
);

/**
 * Search: prefix terms expanded through the tenant's word dictionary (exact lexemes match far
 * faster than `:*` in the GIN index). Search alone with plain words: the fixed statement above;
 * otherwise one GIN scan into a materialised CTE `m` (knex) that yields both the page and the count.
 */
async function listBySearch(scope: TenantScope, query: CustomerListQuery) {
  const words = searchWords(query.search);
  if (words.length && !query.status && !query.updated_since && words.every((w) => /^[A-Za-z0-9]+$/.test(w))) {
    const plain = [...new Set(words.map((w) => w.toLowerCase()))];
    const rows = await scope.run(searchPage, [plain, query.per_page, (query.page - 1) * query.per_page], ISO);
    if (rows.length || query.page === 1) {
      return envelope(rows.map(customerShape), query.page, query.per_page, rows.length ? Number(rows[0]._total) : 0);
    }
  }
  const terms = await expandSearch(query.search, (plain) =>
    scope.run<{ p: string; word: string }>(wordLookup, [plain]),
  );
  if (terms === null) return query.updated_since ? listByCount(scope, query) : listByCounters(scope, query);
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

/** updated_since without search: the page by the created_at index, the total by count(*). */
async function listByCount(scope: TenantScope, query: CustomerListQuery) {
  const ids = filters(scope.table('customers', 'ci'), 'ci', query)
    .select('ci.id')
    .orderBy(newestFirst('ci'))
    .limit(query.per_page)
    .offset((query.page - 1) * query.per_page);
  return runPage(scope, query, ids, filters(scope.table('customers', 'cc'), 'cc', query).count({ n: '*' }));
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
