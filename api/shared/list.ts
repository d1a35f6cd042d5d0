import type { Model, QueryBuilder } from 'objection';
import { envelope } from './schemas.js';

/**
 * List helpers of every list endpoint (DESIGN.md §4 "lists"): page/per_page, an order on a column
 * pair with id as tie-breaker, an exact total, and safe substring search.
 */

/** An Objection query of any model (the lists' filters work on every one). */
type AnyQuery = QueryBuilder<any, any>;

/** Validated paging parameters (page >= 1, per_page 1..100, defaults applied by the schema). */
export interface PageParams {
  page: number;
  per_page: number;
}

/**
 * `%term%` for ILIKE with the user's `%`, `_` and `\` escaped (PostgreSQL's default LIKE escape
 * character is the backslash), so a search is always a literal substring match.
 */
export function ilikeContains(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`;
}

/**
 * Adds `(col1 ILIKE %term% OR col2 ILIKE %term% ...)` to a query when `term` is non-blank.
 * @param columns qualified column names (identifiers, never user input)
 */
export function whereContains<Q extends AnyQuery>(q: Q, columns: string[], term: unknown): Q {
  if (typeof term !== 'string' || !term.trim()) return q;
  const pattern = ilikeContains(term.trim());
  q.where((w) => {
    for (const c of columns) w.orWhere(c, 'ilike', pattern);
  });
  return q;
}

/**
 * Runs a filtered list query as a page plus its exact total (two queries in parallel).
 * @param filtered the query with its FROM, joins and WHERE (no select, no order)
 * @param columns the select list of the page
 * @param order the sort column then the id tie-breaker (e.g. ['i.created_at', 'i.id'])
 * @param map row -> read shape
 * @param direction 'desc' (newest first, the default of DESIGN.md §4) or 'asc' (e.g. schedules by time)
 * @returns the list envelope of DESIGN.md §4
 */
export async function paginate<M extends Model, T>(
  filtered: QueryBuilder<M, M[]>,
  columns: string[],
  order: [string, string],
  p: PageParams,
  map: (row: M) => T,
  direction: 'asc' | 'desc' = 'desc',
) {
  const [rows, [count]] = await Promise.all([
    filtered
      .clone()
      .select(columns)
      .orderBy([
        { column: order[0], order: direction },
        { column: order[1], order: direction },
      ])
      .limit(p.per_page)
      .offset((p.page - 1) * p.per_page),
    filtered.clone().clearSelect().count('* as n').castTo<{ n: string }[]>(),
  ]);
  return envelope(rows.map(map), p.page, p.per_page, Number(count?.n ?? 0));
}
