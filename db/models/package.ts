import { Model } from 'objection';

/** Row of `packages` (issue 2 data model). Tenant-scoped: query it through TenantScope.query(), never bare. */
export class Package extends Model {
  static tableName = 'packages';
  id!: number;
  tenant_id!: number;
  name!: string;
  description!: string | null;
  price!: number;
  speed_down_kbps!: number;
  speed_up_kbps!: number;
  service_type!: string;
  is_active!: boolean;
  is_partner_package!: boolean;
  created_at!: Date;
  updated_at!: Date;
}
