import { Model } from 'objection';

/** How an item is counted: by quantity, or one serial number per unit. */
export type InventoryTracking = 'quantity' | 'serial';
/** Kind of item (admin-api.md "Sales item" item_type without `service`). */
export type InventoryItemType = 'goods' | 'material' | 'device';

/**
 * Row of `inventory_items` (issue 16 item 1): a master item of the catalogue. Quantities and money
 * are numeric(14,2) (strings from pg). Tenant-scoped: query it through TenantScope.query().
 */
export class InventoryItem extends Model {
  static tableName = 'inventory_items';
  id!: number;
  tenant_id!: number;
  name!: string;
  sku!: string | null;
  category!: string | null;
  unit!: string;
  notes!: string | null;
  item_type!: InventoryItemType;
  tracking!: InventoryTracking;
  sell_price!: string | number;
  min_stock!: string | number;
  is_active!: boolean;
  created_at!: Date;
  updated_at!: Date;
}
