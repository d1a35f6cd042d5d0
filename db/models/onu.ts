import { Model } from 'objection';
import { Olt } from './olt.js';
import { Customer } from './customer.js';

/** Row of `onus` (issue 2 data model). Tenant-scoped: query it through TenantScope.query(), never bare. */
export class Onu extends Model {
  static tableName = 'onus';
  id!: number;
  tenant_id!: number;
  olt_id!: number | null;
  customer_id!: number | null;
  serial_number!: string;
  pon_port!: string | null;
  rx_power!: number | null;
  tx_power!: number | null;
  bandwidth_pct!: number | null;
  status!: 'online' | 'offline' | 'los' | 'power_fail';
  uptime!: number | null;
  last_seen!: Date | null;
  is_active!: boolean;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    olt: { relation: Model.BelongsToOneRelation, modelClass: Olt, join: { from: 'onus.olt_id', to: 'olts.id' } },
    customer: {
      relation: Model.BelongsToOneRelation,
      modelClass: Customer,
      join: { from: 'onus.customer_id', to: 'customers.id' },
    },
  });
}
