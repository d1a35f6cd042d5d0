import { Model } from 'objection';

/** Kind of stock location: a warehouse, a POP, or the stock a technician holds. */
export type InventoryLocationType = 'warehouse' | 'pop' | 'technician';

/**
 * Row of `inventory_locations` (issue 16 item 1): where stock is; a `technician` location is held
 * by a user (holder_user_id). Tenant-scoped: query it through TenantScope.query().
 */
export class InventoryLocation extends Model {
  static tableName = 'inventory_locations';
  id!: number;
  tenant_id!: number;
  name!: string;
  type!: InventoryLocationType;
  holder_user_id!: number | null;
  address!: string | null;
  is_active!: boolean;
  created_at!: Date;
  updated_at!: Date;
}
