import { Model } from 'objection';

/**
 * Row of `home_bases` (issue 8 item 3): a technicians' base (POP, office, warehouse) with its
 * address and position in degrees (WGS 84). Tenant-scoped: query it through TenantScope.query().
 */
export class HomeBase extends Model {
  static tableName = 'home_bases';
  id!: number;
  tenant_id!: number;
  name!: string;
  address!: string;
  /** Degrees, -90..90. */
  latitude!: number;
  /** Degrees, -180..180. */
  longitude!: number;
  created_at!: Date;
  updated_at!: Date;
}
