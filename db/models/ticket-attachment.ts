import { Model } from 'objection';
import { Ticket } from './ticket.js';
import { User } from './user.js';

/**
 * Row of `ticket_attachments`: metadata of a file in a ticket's append-only work record (issue 8
 * item 6); the bytes are in the storage driver (lib/storage) under `storage_key`.
 * Tenant-scoped: query it through TenantScope.query(), never bare.
 */
export class TicketAttachment extends Model {
  static tableName = 'ticket_attachments';
  id!: number;
  tenant_id!: number;
  ticket_id!: number;
  user_id!: number | null;
  /** The name the file is downloaded as (its extension matches the detected type). */
  file_name!: string;
  /** MIME type detected from the content (magic bytes), never from the name or the request. */
  mime_type!: string;
  size_bytes!: number;
  /** SHA-256 of the content, lower-case hex. */
  sha256!: string;
  storage_key!: string;
  created_at!: Date;

  static relationMappings = () => ({
    ticket: {
      relation: Model.BelongsToOneRelation,
      modelClass: Ticket,
      join: { from: 'ticket_attachments.ticket_id', to: 'tickets.id' },
    },
    user: {
      relation: Model.BelongsToOneRelation,
      modelClass: User,
      join: { from: 'ticket_attachments.user_id', to: 'users.id' },
    },
  });
}
