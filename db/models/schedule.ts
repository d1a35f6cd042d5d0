import { Model } from 'objection';
import { Customer } from './customer.js';
import { Ticket } from './ticket.js';
import { User } from './user.js';

/** Status of a schedule (issue 8 item 5): scheduled -> in_progress -> done, or -> cancelled. */
export type ScheduleStatus = 'scheduled' | 'in_progress' | 'done' | 'cancelled';

/** Row of `schedules`. Tenant-scoped: query it through TenantScope.query(), never bare. */
export class Schedule extends Model {
  static tableName = 'schedules';
  id!: number;
  tenant_id!: number;
  scheduled_at!: Date;
  job_type!: string | null;
  technician_id!: number | null;
  customer_id!: number | null;
  ticket_id!: number | null;
  /** Planned length in minutes (1..1440), or null when not planned. */
  duration_minutes!: number | null;
  notes!: string | null;
  status!: ScheduleStatus;
  started_at!: Date | null;
  finished_at!: Date | null;
  created_by!: number | null;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    technician: {
      relation: Model.BelongsToOneRelation,
      modelClass: User,
      join: { from: 'schedules.technician_id', to: 'users.id' },
    },
    customer: {
      relation: Model.BelongsToOneRelation,
      modelClass: Customer,
      join: { from: 'schedules.customer_id', to: 'customers.id' },
    },
    ticket: {
      relation: Model.BelongsToOneRelation,
      modelClass: Ticket,
      join: { from: 'schedules.ticket_id', to: 'tickets.id' },
    },
  });
}
