import { Model } from 'objection';
import { Ticket } from './ticket.js';
import { User } from './user.js';

/**
 * Row of `ticket_check_ins`: a field check-in in a ticket's append-only work record (issue 8 item 6).
 * Tenant-scoped: query it through TenantScope.query(), never bare.
 */
export class TicketCheckIn extends Model {
  static tableName = 'ticket_check_ins';
  id!: number;
  tenant_id!: number;
  ticket_id!: number;
  user_id!: number | null;
  /** Degrees, -90..90. */
  latitude!: number;
  /** Degrees, -180..180. */
  longitude!: number;
  /** GPS accuracy radius in metres (>= 0). */
  accuracy!: number;
  note!: string | null;
  created_at!: Date;

  static relationMappings = () => ({
    ticket: {
      relation: Model.BelongsToOneRelation,
      modelClass: Ticket,
      join: { from: 'ticket_check_ins.ticket_id', to: 'tickets.id' },
    },
    user: {
      relation: Model.BelongsToOneRelation,
      modelClass: User,
      join: { from: 'ticket_check_ins.user_id', to: 'users.id' },
    },
  });
}
