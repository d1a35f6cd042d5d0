import { Model } from 'objection';
import { Ticket } from './ticket.js';
import { User } from './user.js';

/** Kind of a ticket comment: `comment` (part of the conversation) or `note` (internal). */
export type TicketCommentKind = 'comment' | 'note';

/**
 * Row of `ticket_comments`: one entry of a ticket's append-only work record (issue 8 item 6).
 * Tenant-scoped: query it through TenantScope.query(), never bare.
 */
export class TicketComment extends Model {
  static tableName = 'ticket_comments';
  id!: number;
  tenant_id!: number;
  ticket_id!: number;
  user_id!: number | null;
  kind!: TicketCommentKind;
  body!: string;
  created_at!: Date;

  static relationMappings = () => ({
    ticket: {
      relation: Model.BelongsToOneRelation,
      modelClass: Ticket,
      join: { from: 'ticket_comments.ticket_id', to: 'tickets.id' },
    },
    user: {
      relation: Model.BelongsToOneRelation,
      modelClass: User,
      join: { from: 'ticket_comments.user_id', to: 'users.id' },
    },
  });
}
