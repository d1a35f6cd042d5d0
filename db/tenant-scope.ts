import type { Knex } from 'knex';
import type { Model, ModelClass, ModelConstructor, PartialModelObject, QueryBuilderType } from 'objection';
import { runStatement, statement, type RunOptions, type Statement } from './statement.js';
import { nextNumber } from './numbering.js';
import { isWriteSql } from './autocommit-gate.js';

/** Tables whose rows carry tenant_id (DESIGN.md §5). */
export type TenantTable =
  | 'packages'
  | 'customers'
  | 'invoices'
  | 'tickets'
  | 'olts'
  | 'onus'
  | 'idempotency_keys'
  | 'tenant_counters'
  | 'customer_status_counts'
  | 'customer_search_words'
  | 'audit_log'
  | 'auth_tokens'
  | 'schedules'
  | 'ticket_comments'
  | 'ticket_attachments'
  | 'ticket_check_ins'
  | 'home_bases'
  | 'nas'
  | 'billing_runs'
  | 'network_fake_sessions'
  | 'network_fake_failures'
  | 'external_email_accounts'
  | 'communication_messages'
  | 'communication_attachments'
  | 'email_seen_uidls'
  | 'wabot_settings'
  | 'wabot_accounts'
  | 'inventory_items'
  | 'inventory_locations'
  | 'suppliers'
  | 'supplier_items'
  | 'wabot_account_states'
  | 'wabot_groups'
  | 'wabot_group_notices'
  | 'inventory_stock'
  | 'inventory_serials'
  | 'inventory_mutations'
  | 'inventory_purchases'
  | 'inventory_counts'
  | 'inventory_count_lines'
  | 'inventory_requests'
  | 'inventory_request_items'
  | 'inventory_request_history'
  | 'home_base_inventory_locations'
  | 'apk_keystores'
  | 'apk_app_configs'
  | 'apk_builds'
  | 'supplier_import_previews'
  | 'supplier_imports'
  | 'customer_mailboxes';

export const TENANT_TABLES: readonly TenantTable[] = [
  'packages',
  'customers',
  'invoices',
  'tickets',
  'olts',
  'onus',
  'idempotency_keys',
  'customer_search_words',
  'tenant_counters',
  'customer_status_counts',
  'audit_log',
  'auth_tokens',
  'schedules',
  'ticket_comments',
  'ticket_attachments',
  'ticket_check_ins',
  'home_bases',
  'nas',
  'billing_runs',
  'network_fake_sessions',
  'network_fake_failures',
  'external_email_accounts',
  'communication_messages',
  'communication_attachments',
  'email_seen_uidls',
  'wabot_settings',
  'wabot_accounts',
  'inventory_items',
  'inventory_locations',
  'suppliers',
  'supplier_items',
  'wabot_account_states',
  'wabot_groups',
  'wabot_group_notices',
  'inventory_stock',
  'inventory_serials',
  'inventory_mutations',
  'inventory_purchases',
  'inventory_counts',
  'inventory_count_lines',
  'inventory_requests',
  'inventory_request_items',
  'inventory_request_history',
  'home_base_inventory_locations',
  'apk_keystores',
  'apk_app_configs',
  'apk_builds',
  'supplier_import_previews',
  'supplier_imports',
  'customer_mailboxes',
];

/**
 * Tables a scope reaches in the shared database although its knex is a tenant database (issue 15:
 * a cut-over tenant's auth_tokens and idempotency_keys; db/tenant-routing.ts). Such a write is
 * not part of the scope's transaction.
 */
export interface SharedTables {
  knex: Knex;
  tables: readonly string[];
}

/** A fixed SQL statement over tenant tables whose `$1` is the tenant id (see tenantStatement). */
export interface TenantStatement extends Statement {
  readonly tenantBound: true;
  /** The text writes (db/autocommit-gate.ts isWriteSql): run() runs it in a gated transaction. */
  readonly writes: boolean;
}

/**
 * Defines a fixed SQL statement for TenantScope.run (db/statement.ts), checked at definition so
 * that forgetting the tenant stays impossible: every tenant table the text reads
 * (`FROM|JOIN <table> <alias>`) must be pinned to `$1`, directly (`alias.tenant_id = $1`) or
 * through an alias that is (`p.tenant_id = c.tenant_id`).
 * @param name prepared-statement name (unique)
 * @param text SQL with `$1` = tenant id and `$2..$n` for the caller's values
 * @throws Error naming the alias that is not pinned to the tenant
 */
export function tenantStatement(name: string, text: string): TenantStatement {
  const aliases = new Map<string, string>();
  for (const m of text.matchAll(/\b(?:FROM|JOIN)\s+(\w+)\s+(?:AS\s+)?(\w+)/gi)) {
    if ((TENANT_TABLES as readonly string[]).includes(m[1])) aliases.set(m[2], m[1]);
  }
  if (!aliases.size) throw new Error(`SQL statement "${name}" reads no tenant table`);
  const pinned = new Set<string>();
  for (const m of text.matchAll(/\b(\w+)\.tenant_id\s*=\s*\$1\b/g)) pinned.add(m[1]);
  const links = [...text.matchAll(/\b(\w+)\.tenant_id\s*=\s*(\w+)\.tenant_id\b/g)].map((m) => [m[1], m[2]] as const);
  for (let grew = true; grew;) {
    grew = false;
    for (const [a, b] of links) {
      if (pinned.has(a) !== pinned.has(b)) {
        pinned.add(a);
        pinned.add(b);
        grew = true;
      }
    }
  }
  for (const [alias, table] of aliases) {
    if (!pinned.has(alias))
      throw new Error(`SQL statement "${name}": ${table} ${alias} is not confined to the tenant ($1)`);
  }
  return Object.freeze({ ...statement(name, text), tenantBound: true as const, writes: isWriteSql(text) });
}

/**
 * The only door to tenant-scoped rows: every query built through it is filtered by tenant_id, and
 * every insert gets the tenant_id set, so forgetting the tenant is impossible by construction.
 * Services receive a TenantScope (ctx.state.scope), never a bare knex for tenant data.
 */
export class TenantScope {
  /**
   * @param knex the process knex (or a transaction)
   * @param tenantId the tenant every query is confined to
   */
  constructor(
    readonly knex: Knex | Knex.Transaction,
    readonly tenantId: number,
    readonly shared?: SharedTables,
  ) {}

  /** The knex of a table: the shared database for a table that stays there (issue 15), else `k`. */
  private on(table: string, k: Knex | Knex.Transaction): Knex | Knex.Transaction {
    return this.shared?.tables.includes(table) ? this.shared.knex : k;
  }

  /** `knex(table).where(table.tenant_id = tenantId)`; alias as in knex ("customers as c"). */
  table(table: TenantTable, alias?: string): Knex.QueryBuilder {
    const k = this.on(table, this.knex);
    const q = alias ? k(`${table} as ${alias}`) : k(table);
    return q.where(`${alias ?? table}.tenant_id`, this.tenantId);
  }

  /**
   * Objection query of a tenant-scoped model, filtered by tenant: the way CRUD reaches tenant rows
   * (DESIGN.md §3). Raw SQL is kept for measured hot paths only (tenantStatement + run()).
   * @param model a model of db/models whose table carries tenant_id
   * @param opts `alias` names the table in the query ("c" for `customers as c`); `trx` runs it in a
   *   transaction (default: this scope's knex, itself a transaction after withTransaction)
   */
  query<M extends Model>(
    model: ModelConstructor<M>,
    opts: { alias?: string; trx?: Knex.Transaction } = {},
  ): QueryBuilderType<M> {
    const mc = model as ModelClass<M>; // typed as a constructor so that M is inferred from the class
    const q = mc.query(this.on(mc.tableName, opts.trx ?? this.knex) as Knex);
    if (opts.alias) q.alias(opts.alias);
    return q.where(`${opts.alias ?? mc.tableName}.tenant_id`, this.tenantId);
  }

  /**
   * Inserts one row of a tenant-scoped model with tenant_id forced to this tenant.
   * @returns the inserted model instance (every column, RETURNING *)
   */
  async create<M extends Model>(
    model: ModelConstructor<M>,
    row: PartialModelObject<M>,
    trx?: Knex.Transaction,
  ): Promise<M> {
    const mc = model as ModelClass<M>; // see query()
    const q = mc.query(this.on(mc.tableName, trx ?? this.knex) as Knex).insert({ ...row, tenant_id: this.tenantId });
    // insert() of one object resolves to one instance; returning('*') keeps that shape
    return (await q.returning('*')) as unknown as M;
  }

  /** Inserts rows into a tenant table with tenant_id forced to this tenant; returns the inserted rows. */
  async insert<T extends Record<string, unknown>>(
    table: TenantTable,
    row: T,
    trx?: Knex.Transaction,
  ): Promise<T & { id: number }> {
    const [r] = await this.on(
      table,
      trx ?? this.knex,
    )(table)
      .insert({ ...row, tenant_id: this.tenantId })
      .returning('*');
    return r;
  }

  /**
   * Runs a fixed tenant statement (tenantStatement) as a named prepared statement, with this
   * scope's tenant id bound as `$1`.
   * @param values bind values for `$2..$n`
   * A statement that writes (TenantStatement.writes), called outside a transaction, runs in the
   * scope's transaction (gated: db/autocommit-gate.ts).
   * @param opts `timestamps: 'iso'` returns timestamptz columns as ISO 8601 strings (db/statement.ts)
   * @returns the rows
   */
  run<R = Record<string, any>>(stmt: TenantStatement, values: unknown[] = [], opts?: RunOptions): Promise<R[]> {
    // a writing statement outside a transaction goes through the scope's (gated) transaction
    if (stmt.writes && !(this.knex as Knex.Transaction).isTransaction)
      return this.knex.transaction((trx) => runStatement<R>(trx, stmt, [this.tenantId, ...values], opts));
    return runStatement<R>(this.knex, stmt, [this.tenantId, ...values], opts);
  }

  /** The same scope bound to a transaction. */
  withTransaction(trx: Knex.Transaction): TenantScope {
    return new TenantScope(trx, this.tenantId, this.shared);
  }

  /**
   * Next value of a per-tenant counter (customer codes, ticket and invoice numbers), atomic under
   * concurrency (row lock on the counter).
   * @param name counter name, e.g. "customer"
   */
  async nextNumber(name: string, trx?: Knex.Transaction): Promise<number> {
    if (trx) return nextNumber(trx, this.tenantId, name);
    if ((this.knex as Knex.Transaction).isTransaction)
      return nextNumber(this.knex as Knex.Transaction, this.tenantId, name);
    return this.knex.transaction((t) => nextNumber(t, this.tenantId, name));
  }
}
