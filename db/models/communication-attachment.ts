import { Model } from 'objection';

/**
 * Row of `communication_attachments` (issue 9 item 4): metadata of a message's attachment; the bytes
 * live in the storage driver under storage_key (null: over the size limit, or the message was
 * deleted). Tenant-scoped.
 */
export class CommunicationAttachment extends Model {
  static tableName = 'communication_attachments';
  id!: number;
  tenant_id!: number;
  message_id!: number;
  filename!: string | null;
  /** Detected from the content (magic bytes). */
  content_type!: string;
  /** As the message declared it. */
  declared_type!: string | null;
  size_bytes!: number;
  content_id!: string | null;
  sha256!: string | null;
  storage_key!: string | null;
  created_at!: Date;
}
