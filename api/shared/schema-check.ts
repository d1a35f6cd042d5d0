import type { Knex } from 'knex';
import { SchemaMissing, type SchemaMissingCode } from '../errors.js';

/** Table sets found complete in this process (a found set stays found: tables are not dropped at run time). */
const present = new Set<string>();
/** When a missing set was last checked, in ms since the epoch (re-checked at most every RECHECK_MS). */
const missingAt = new Map<string, { at: number; missing: string[] }>();
/** How long a "missing" answer is reused before information_schema is asked again, in ms. */
export const RECHECK_MS = 30_000;

/**
 * The spec's 503 for a module whose tables are missing (document 2 "Errors"; DESIGN.md §10 "spec
 * 503s"): checks once per process per table set in information_schema (public schema). A complete
 * set is remembered for the life of the process; a missing one is re-checked after RECHECK_MS, so
 * running the migrations heals a running process within half a minute.
 * @param knex the process knex
 * @param code the spec's code, e.g. `sales_schema_missing`
 * @param tables the module's tables
 * @param now current time in ms (tests pass a clock)
 * @throws SchemaMissing (503 with the code and Retry-After) naming the missing tables
 */
export async function requireTables(
  knex: Knex,
  code: SchemaMissingCode,
  tables: readonly string[],
  now: number = Date.now(),
): Promise<void> {
  const key = [...tables].sort().join(',');
  if (present.has(key)) return;
  const cached = missingAt.get(key);
  if (cached && now - cached.at < RECHECK_MS) throw new SchemaMissing(code, cached.missing);
  const rows: { table_name: string }[] = await knex('information_schema.tables')
    .where('table_schema', knex.raw('current_schema()'))
    .whereIn('table_name', [...tables])
    .select('table_name');
  const found = new Set(rows.map((r) => r.table_name));
  const missing = tables.filter((t) => !found.has(t));
  if (!missing.length) {
    present.add(key);
    missingAt.delete(key);
    return;
  }
  missingAt.set(key, { at: now, missing });
  throw new SchemaMissing(code, missing);
}

/**
 * A route middleware for WebGuards.middleware: answers the spec's 503 when the tables are missing.
 * @returns the middleware
 */
export function schemaGuard(code: SchemaMissingCode, tables: readonly string[]) {
  return async (ctx: { deps: { knex: Knex } }, next: () => Promise<unknown>): Promise<void> => {
    await requireTables(ctx.deps.knex, code, tables);
    await next();
  };
}

/** Forgets what was checked (tests). */
export function resetSchemaChecks(): void {
  present.clear();
  missingAt.clear();
}
