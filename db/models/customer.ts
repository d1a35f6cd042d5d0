import { Model } from 'objection';
import { Package } from './package.js';
import { Onu } from './onu.js';
import { Invoice } from './invoice.js';
import { Ticket } from './ticket.js';

/** Row of `customers` (issue 2 data model). Tenant-scoped: query it through TenantScope.query(), never bare. */
export class Customer extends Model {
  static tableName = 'customers';
  id!: number;
  tenant_id!: number;
  code!: string;
  name!: string;
  email!: string | null;
  phone!: string;
  address!: string;
  latitude!: number | null;
  longitude!: number | null;
  package_id!: number | null;
  status!: 'active' | 'suspended' | 'terminated';
  service_type!: 'pppoe' | 'hotspot' | 'dhcp' | 'static';
  billing_cycle!: 'prepaid' | 'prepaid_rolling' | 'postpaid';
  billing_day!: number | null;
  customer_tier!: string;
  mac_address!: string | null;
  /** The NAS the customer connects through (issue 8 item 2); a NAS of the same tenant. */
  nas_id!: number | null;
  /** PPPoE login on the NAS; unique per tenant in any case. */
  pppoe_username!: string | null;
  /** Sealed PPPoE password (db/credentials.ts, table 'customers'); never sent to a client. */
  pppoe_password_enc!: string | null;
  /** Why a suspended customer is suspended: manual (the status endpoint) or overdue (billing); null otherwise. */
  suspend_reason!: 'manual' | 'overdue' | null;
  /** The free-text reason of the last status change. */
  status_reason!: string | null;
  status_changed_at!: Date | null;
  /** Version of the network state; every network-relevant change takes a new one (customer-network job). */
  network_version!: string | number;
  network_sync_status!: 'none' | 'pending' | 'synced' | 'failed';
  /** What the NAS holds after the last successful push. */
  network_state!: 'active' | 'isolated' | 'removed' | null;
  /** A fixed, safe text of the last failed push. */
  network_error!: string | null;
  network_requested_at!: Date | null;
  network_synced_at!: Date | null;
  /** The NAS and username of the session the last push left (removed first when they change). */
  network_nas_id!: number | null;
  network_username!: string | null;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    package: {
      relation: Model.BelongsToOneRelation,
      modelClass: Package,
      join: { from: 'customers.package_id', to: 'packages.id' },
    },
    onu: { relation: Model.HasOneRelation, modelClass: Onu, join: { from: 'customers.id', to: 'onus.customer_id' } },
    invoices: {
      relation: Model.HasManyRelation,
      modelClass: Invoice,
      join: { from: 'customers.id', to: 'invoices.customer_id' },
    },
    tickets: {
      relation: Model.HasManyRelation,
      modelClass: Ticket,
      join: { from: 'customers.id', to: 'tickets.customer_id' },
    },
  });
}
