import { Model } from 'objection';

/** Row of `inventory_counts` (issue 16 item 2): a stock count of one location. Tenant-scoped. */
export class InventoryCount extends Model {
  static tableName = 'inventory_counts';
  id!: number;
  tenant_id!: number;
  location_id!: number;
  reason!: string;
  created_by!: number | null;
  created_at!: Date;
  updated_at!: Date;
}
