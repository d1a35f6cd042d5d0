import { Model } from 'objection';
import { Customer } from './customer.js';

/** Row of `invoices` (issue 2 data model). Tenant-scoped: query it through TenantScope.query(), never bare. */
export class Invoice extends Model {
  static tableName = 'invoices';
  id!: number;
  tenant_id!: number;
  invoice_number!: string;
  customer_id!: number;
  package_id!: number | null;
  amount!: number;
  status!: 'unpaid' | 'paid' | 'overdue' | 'cancelled';
  due_date!: string;
  paid_at!: Date | null;
  period_start!: string | null;
  period_end!: string | null;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    customer: {
      relation: Model.BelongsToOneRelation,
      modelClass: Customer,
      join: { from: 'invoices.customer_id', to: 'customers.id' },
    },
  });
}
