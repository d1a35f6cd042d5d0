import { Model } from 'objection';

/** Row of `olts` (issue 2 data model). Tenant-scoped: query it through TenantScope.query(), never bare. */
export class Olt extends Model {
  static tableName = 'olts';
  id!: number;
  tenant_id!: number;
  name!: string;
  vendor!: string | null;
  model!: string | null;
  ip_address!: string | null;
  location!: string | null;
  status!: 'online' | 'offline';
  pon_ports!: number;
  created_at!: Date;
  updated_at!: Date;
}
