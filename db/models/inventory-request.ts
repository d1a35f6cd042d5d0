import { Model } from 'objection';

/** The eight statuses of an inventory request (admin-api.md "States and transitions"). */
export type InventoryRequestStatus =
  'draft' | 'pending' | 'deferred' | 'approved' | 'rejected' | 'processing' | 'completed' | 'cancelled';
/** stock_out (out of the source), transfer (source -> destination), return (technician -> warehouse or POP). */
export type InventoryRequestType = 'stock_out' | 'transfer' | 'return';
/** What a request is for. */
export type InventoryReferenceType = 'sales_order' | 'ticket' | 'schedule';

/** Row of `inventory_requests` (issue 16 item 4). Tenant-scoped: query it through TenantScope.query(). */
export class InventoryRequest extends Model {
  static tableName = 'inventory_requests';
  id!: number;
  tenant_id!: number;
  /** IR-000001 per tenant. */
  number!: string;
  type!: InventoryRequestType;
  status!: InventoryRequestStatus;
  source_location_id!: number;
  destination_location_id!: number | null;
  reference_type!: InventoryReferenceType | null;
  reference_id!: number | null;
  note!: string | null;
  /** The reason of the last reject or defer. */
  reason!: string | null;
  requested_by!: number | null;
  decided_by!: number | null;
  decided_at!: Date | null;
  processed_by!: number | null;
  processed_at!: Date | null;
  completed_at!: Date | null;
  cancelled_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;
}
