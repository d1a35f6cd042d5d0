/**
 * Query helpers shared by the External v1 lists (document 1 "Common list query parameters";
 * DESIGN.md §4): page/per_page, newest-first order with id tie-breaker, safe text search.
 */

export { ilikeContains, paginate, whereContains, type PageParams } from '../shared/list.js';

/** Characters with a meaning in tsquery syntax; removed from user terms. */
const TSQUERY_SPECIAL = /[&|!():*<>'\\]/g;
/** At most this many words of a search are used. */
export const MAX_SEARCH_TERMS = 8;

/**
 * Builds the prefix full-text condition over a `simple`-config tsvector column: every
 * whitespace-separated word must match (AND), each as a prefix (`:*`). Operators and quotes are
 * stripped from the words first, and the words only ever travel as bind parameters.
 *
 * Each word is matched in two ways, OR-ed, because the `simple` parser splits some tokens
 * differently when they are cut short (`john.doe@exa` is one lexeme prefix of the stored
 * `john.doe@example.com`, while `cust-0001` parses to `cust <-> -0001`):
 * - the lowercased word as one lexeme prefix (`'word':*`::tsquery, no parsing);
 * - the word run through to_tsquery('simple', ...) as a quoted phrase with prefix matching,
 *   which tokenises it exactly as the stored vector was.
 * @param column the tsvector column (identifier, not user input)
 * @param search the user's search string
 * @returns SQL and bindings for whereRaw, or null when no usable word remains (no filter)
 */
export function prefixTsQuery(column: string, search: unknown): { sql: string; bindings: string[] } | null {
  if (typeof search !== 'string') return null;
  const words = search
    .replace(TSQUERY_SPECIAL, ' ')
    .split(/\s+/)
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .slice(0, MAX_SEARCH_TERMS);
  if (!words.length) return null;
  const bindings: string[] = [];
  const parts = words.map((w) => {
    bindings.push(`'${w.toLowerCase()}':*`);
    // a plain ASCII word parses to itself: the second form would only repeat the first
    if (/^[A-Za-z0-9]+$/.test(w)) return '?::tsquery';
    bindings.push(`'${w}':*`);
    return `(?::tsquery || to_tsquery('simple', ?))`;
  });
  return { sql: `${column} @@ (${parts.join(' && ')})`, bindings };
}

/** At most this many dictionary words replace one prefix term; beyond that it stays a `:*` prefix. */
export const MAX_PREFIX_EXPANSION = 32;

/** Quotes a lexeme for tsquery text (`'it''s'`), so it is taken as one exact lexeme. */
function tsLexeme(w: string): string {
  return `'${w.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The whereRaw condition for expanded terms (AND of all terms). */
export function tsCondition(column: string, terms: ExpandedTerm[]): { sql: string; bindings: string[] } {
  const bindings: string[] = [];
  const parts = terms.map((t) => {
    if (t.kind === 'query') {
      bindings.push(t.text);
      return '?::tsquery';
    }
    bindings.push(`'${t.word.toLowerCase()}':*`, `'${t.word}':*`);
    return `(?::tsquery || to_tsquery('simple', ?))`;
  });
  return { sql: `${column} @@ (${parts.join(' && ')})`, bindings };
}

/**
 * The dictionary lookup behind the expansion: for each prefix `p` of `$2` (text[]), at most
 * MAX_PREFIX_EXPANSION + 1 words of tenant `$1` starting with it (a btree range scan: `word` is in
 * the C collation, so every word with prefix p lies in [p, p || U+10FFFF)).
 */
export const WORD_LOOKUP_SQL = `SELECT t.p, w.word FROM unnest($2::text[]) AS t(p)
CROSS JOIN LATERAL (SELECT k.word FROM customer_search_words k
  WHERE k.tenant_id = $1 AND k.word >= t.p AND k.word < t.p || chr(1114111) AND k.n > 0
  ORDER BY k.word LIMIT ${MAX_PREFIX_EXPANSION + 1}) w`;

/** The usable words of a search (tsquery operators and quotes stripped, at most MAX_SEARCH_TERMS). */
export function searchWords(search: unknown): string[] {
  if (typeof search !== 'string') return [];
  return search
    .replace(TSQUERY_SPECIAL, ' ')
    .split(/\s+/)
    .filter((w) => /[\p{L}\p{N}]/u.test(w))
    .slice(0, MAX_SEARCH_TERMS);
}

/**
 * One search term after expansion: a tsquery text of exact lexemes (or a `:*` prefix), or a word left to the
 * two-form match.
 */
export type ExpandedTerm = { kind: 'query'; text: string } | { kind: 'word'; word: string };

/**
 * Splits a search into terms and expands the plain ones ([A-Za-z0-9]+) through the dictionary.
 * @param lookup runs WORD_LOOKUP_SQL for the distinct lowercased plain terms
 * @returns the terms in order; 'no-match' when a plain term completes to no word; null when no usable word remains
 */
export async function expandSearch(
  search: unknown,
  lookup: (plain: string[]) => Promise<{ p: string; word: string }[]>,
): Promise<ExpandedTerm[] | 'no-match' | null> {
  const words = searchWords(search);
  if (!words.length) return null;
  const plain = [...new Set(words.filter((w) => /^[A-Za-z0-9]+$/.test(w)).map((w) => w.toLowerCase()))];
  const found = new Map<string, string[]>(plain.map((p) => [p, []]));
  if (plain.length) for (const r of await lookup(plain)) found.get(r.p)!.push(r.word);
  const out: ExpandedTerm[] = [];
  for (const w of words) {
    if (!/^[A-Za-z0-9]+$/.test(w)) {
      out.push({ kind: 'word', word: w });
      continue;
    }
    const p = w.toLowerCase();
    const list = found.get(p)!;
    if (!list.length) return 'no-match';
    out.push({
      kind: 'query',
      text: list.length > MAX_PREFIX_EXPANSION ? `${tsLexeme(p)}:*` : `(${list.map(tsLexeme).join(' | ')})`,
    });
  }
  return out;
}

/** Query flag `true|false|1|0` (already validated) -> boolean, or undefined when absent. */
export function flag(v: unknown): boolean | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  return v === 'true' || v === '1' || v === true;
}
