import { Model } from 'objection';
import { Customer } from './customer.js';
import { Onu } from './onu.js';
import { User } from './user.js';

/** Row of `tickets` (issue 2 data model). Tenant-scoped: query it through TenantScope.query(), never bare. */
export class Ticket extends Model {
  static tableName = 'tickets';
  id!: number;
  tenant_id!: number;
  ticket_number!: string;
  source!: string;
  external_id!: string | null;
  customer_id!: number | null;
  onu_id!: number | null;
  assigned_to!: number | null;
  type!: string;
  priority!: 'high' | 'medium' | 'low';
  status!: 'open' | 'inprogress' | 'resolved' | 'closed';
  description!: string | null;
  location_text!: string | null;
  contact_name!: string | null;
  contact_phone!: string | null;
  sla_breached!: boolean;
  response_due_at!: Date | null;
  resolution_due_at!: Date | null;
  responded_at!: Date | null;
  resolved_at!: Date | null;
  closed_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    customer: {
      relation: Model.BelongsToOneRelation,
      modelClass: Customer,
      join: { from: 'tickets.customer_id', to: 'customers.id' },
    },
    onu: { relation: Model.BelongsToOneRelation, modelClass: Onu, join: { from: 'tickets.onu_id', to: 'onus.id' } },
    assignee: {
      relation: Model.BelongsToOneRelation,
      modelClass: User,
      join: { from: 'tickets.assigned_to', to: 'users.id' },
    },
  });
}
