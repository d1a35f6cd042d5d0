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
