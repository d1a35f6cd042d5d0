import { Model } from 'objection';

/** Status of a billing run: queued -> running -> completed, or failed (retried by its job). */
export type BillingRunStatus = 'queued' | 'running' | 'completed' | 'failed';

/**
 * Row of `billing_runs` (issue 8 item 4): one run of the billing cycle for a tenant and an as_of
 * day, manual (POST /api/invoices/billing-runs) or scheduled (the daily billing-cycle job), with its
 * counts. Tenant-scoped: query it through TenantScope.query(), never bare.
 */
export class BillingRun extends Model {
  static tableName = 'billing_runs';
  id!: number;
  tenant_id!: number;
  /** The day billed, YYYY-MM-DD in the tenant's time zone. */
  as_of!: string;
  trigger!: 'manual' | 'schedule';
  status!: BillingRunStatus;
  job_id!: string | null;
  requested_by!: number | null;
  /** Invoices this run created. */
  created!: number;
  /** Billable customers whose invoice for the period was already there. */
  existing!: number;
  /** Active or suspended customers not billable (no priced package, service not started). */
  skipped!: number;
  error!: string | null;
  started_at!: Date | null;
  finished_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;
}
