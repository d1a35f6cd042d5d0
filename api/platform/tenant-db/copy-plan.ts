import type { Knex } from 'knex';
import { ident } from './state.js';

/**
 * What the data copy reads and writes (issue 14 item 6): users, customers, invoices, tickets and
 * every table they reference (tenant row, packages, OLTs, ONUs and whatever else their foreign keys
 * name), in foreign-key order; each table's non-generated columns, the tenant's rows only.
 */

/**
 * The tables the issue names, plus the users' roles (user_roles, role_permissions: the read shape
 * shows roles and permissions); their foreign-key parents (roles, permissions, ...) are added by copyPlan.
 */
export const COPY_TABLES = [
  'tenants',
  'packages',
  'olts',
  'onus',
  'users',
  'user_roles',
  'role_permissions',
  'customers',
  'invoices',
  'tickets',
];

/**
 * Tables whose tenant's rows are not `tenant_id = ?` (`?` the tenant id): the built-in roles
 * (tenant_id null) and the permission catalog are shared by every tenant, so each copy carries them;
 * the link tables follow their users and roles.
 */
const FILTERS: Record<string, string> = {
  tenants: 'id = ?',
  roles: 'tenant_id = ? OR tenant_id IS NULL',
  permissions: 'true',
  user_roles: 'user_id IN (SELECT u.id FROM users u WHERE u.tenant_id = ?)',
  role_permissions: 'role_id IN (SELECT r.id FROM roles r WHERE r.tenant_id = ? OR r.tenant_id IS NULL)',
};

/** One table of the plan. */
export interface CopyTable {
  table: string;
  columns: string[];
  /** SQL condition selecting the tenant's rows (`?` for the tenant id; see whereOf). */
  filter: string;
  /** Unique keys other than the primary key (plain columns, no predicate). */
  uniqueKeys: string[][];
  /** Columns a row of the same id must agree on, or it is a collision (tenant_id; tenants: slug; else its pair). */
  owner: string[];
}

/** The table's filter with the tenant id in place of `?` (a number: safe to inline), parenthesised. */
export const whereOf = (t: CopyTable, tenantId: number): string =>
  `(${t.filter.replaceAll('?', String(Number(tenantId)))})`;

/**
 * Computes the plan from the shared database's catalog.
 * @param roots the tables wanted (default COPY_TABLES; issue 15's cutover passes every moved table)
 * @throws Error when a foreign-key cycle or a table without tenant_id makes the order undefined
 */
export async function copyPlan(knex: Knex, roots: readonly string[] = COPY_TABLES): Promise<CopyTable[]> {
  const fks = (
    await knex.raw<{ rows: { child: string; parent: string }[] }>(
      `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
         FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace`,
    )
  ).rows.filter((r) => r.child !== r.parent);
  const parents = new Map<string, Set<string>>();
  for (const r of fks) parents.set(r.child, (parents.get(r.child) ?? new Set()).add(r.parent));
  const wanted = new Set<string>();
  const add = (t: string) => {
    if (wanted.has(t)) return;
    wanted.add(t);
    for (const p of parents.get(t) ?? []) add(p);
  };
  roots.forEach(add);
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (t: string) => {
    if (state.get(t) === 'done') return;
    if (state.get(t) === 'visiting') throw new Error(`foreign-key cycle through ${t}`);
    state.set(t, 'visiting');
    for (const p of [...(parents.get(t) ?? [])].sort()) if (wanted.has(p)) visit(p);
    state.set(t, 'done');
    order.push(t);
  };
  [...roots, ...[...wanted].sort()].forEach(visit);
  const cols = (
    await knex.raw<{ rows: { table_name: string; column_name: string }[] }>(
      `SELECT c.relname AS table_name, a.attname AS column_name
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY(?) AND a.attnum > 0
          AND NOT a.attisdropped AND a.attgenerated = ''
        ORDER BY c.relname, a.attnum`,
      [order],
    )
  ).rows;
  const uniques = (
    await knex.raw<{ rows: { table_name: string; cols: string[] }[] }>(
      `SELECT c.relname AS table_name,
              array(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(n, o)
                      JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o)::text[] AS cols
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
        WHERE c.relnamespace = 'public'::regnamespace AND c.relname = ANY(?) AND i.indisunique
          AND NOT i.indisprimary AND i.indpred IS NULL AND i.indexprs IS NULL`,
      [order],
    )
  ).rows;
  return order.map((table) => {
    const columns = cols.filter((c) => c.table_name === table).map((c) => c.column_name);
    if (!FILTERS[table] && !columns.includes('tenant_id')) throw new Error(`table ${table} has no tenant_id`);
    const uniqueKeys = uniques.filter((u) => u.table_name === table).map((u) => u.cols);
    const owner =
      table === 'tenants' ? ['slug'] : columns.includes('tenant_id') ? ['tenant_id'] : (uniqueKeys[0] ?? []);
    return { table, columns, filter: FILTERS[table] ?? 'tenant_id = ?', uniqueKeys, owner };
  });
}

/** `ROW(c1, c2, ...)` of a table alias, for md5 over a row's text in a fixed column list. */
export const rowExpr = (alias: string, columns: string[]): string =>
  `ROW(${columns.map((c) => `${alias}.${ident(c)}`).join(', ')})`;

/** The column list `"c1", "c2", ...`. */
export const columnList = (columns: string[]): string => columns.map(ident).join(', ');
