import type { Knex } from 'knex';
import type { Model, ModelClass, QueryBuilder } from 'objection';

/** Tables whose rows carry tenant_id (DESIGN.md §5). */
export type TenantTable = 'packages' | 'customers' | 'invoices' | 'tickets' | 'olts' | 'onus' | 'idempotency_keys' | 'tenant_counters'
  | 'customer_status_counts';

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
  constructor(readonly knex: Knex | Knex.Transaction, readonly tenantId: number) {}

  /** `knex(table).where(table.tenant_id = tenantId)`; alias as in knex ("customers as c"). */
  table(table: TenantTable, alias?: string): Knex.QueryBuilder {
    const q = alias ? this.knex(`${table} as ${alias}`) : this.knex(table);
    return q.where(`${alias ?? table}.tenant_id`, this.tenantId);
  }

  /** Objection query of a tenant-scoped model, filtered by tenant. */
  query<M extends Model>(model: ModelClass<M>, trx?: Knex.Transaction): QueryBuilder<M, M[]> {
    const tableName = (model as unknown as { tableName: string }).tableName;
    return model.query(trx ?? (this.knex as Knex)).where(`${tableName}.tenant_id`, this.tenantId) as unknown as QueryBuilder<M, M[]>;
  }

  /** Inserts rows into a tenant table with tenant_id forced to this tenant; returns the inserted rows. */
  async insert<T extends Record<string, unknown>>(table: TenantTable, row: T, trx?: Knex.Transaction): Promise<T & { id: number }> {
    const [r] = await (trx ?? this.knex)(table).insert({ ...row, tenant_id: this.tenantId }).returning('*');
    return r;
  }

  /** The same scope bound to a transaction. */
  withTransaction(trx: Knex.Transaction): TenantScope {
    return new TenantScope(trx, this.tenantId);
  }

  /**
   * Next value of a per-tenant counter (customer codes, ticket and invoice numbers), atomic under
   * concurrency (row lock on the counter).
   * @param name counter name, e.g. "customer"
   */
  async nextNumber(name: string, trx?: Knex.Transaction): Promise<number> {
    const k = trx ?? this.knex;
    const r = await k.raw(
      `INSERT INTO tenant_counters (tenant_id, name, value) VALUES (?, ?, 1)
       ON CONFLICT (tenant_id, name) DO UPDATE SET value = tenant_counters.value + 1 RETURNING value`,
      [this.tenantId, name],
    );
    return Number(r.rows[0].value);
  }
}
