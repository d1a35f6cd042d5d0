import { Model } from 'objection';

/**
 * Row of `suppliers` (issue 16 item 1): name, contact, phone, email, address; deactivated instead
 * of deleted once used. Tenant-scoped: query it through TenantScope.query().
 */
export class Supplier extends Model {
  static tableName = 'suppliers';
  id!: number;
  tenant_id!: number;
  name!: string;
  contact!: string | null;
  phone!: string | null;
  email!: string | null;
  address!: string | null;
  is_active!: boolean;
  created_at!: Date;
  updated_at!: Date;
}
