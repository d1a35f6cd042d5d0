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
  /** subscription (the billing cycle), manual (POST /api/invoices; the default) or sales (issue 8 item 4). */
  type!: 'subscription' | 'manual' | 'sales';
  description!: string | null;
  /** Why the invoice was voided (status cancelled through POST /api/invoices/{id}/void). */
  void_reason!: string | null;
  voided_at!: Date | null;
  /** The billing run that created a subscription invoice. */
  billing_run_id!: number | null;
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
