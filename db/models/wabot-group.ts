import { Model } from 'objection';

/**
 * Row of `wabot_groups` (issue 11 item 4; document 2 "Events": chat groups "that have ticked this
 * event in bot settings"): a WhatsApp group that receives event notices through one of the
 * tenant's chat accounts. Tenant-scoped: query it through TenantScope.query(), never bare.
 */
export class WabotGroup extends Model {
  static tableName = 'wabot_groups';
  /** `events` is jsonb: Objection writes it as JSON (a JS array would become a PostgreSQL array). */
  static jsonAttributes = ['events'];
  id!: number;
  tenant_id!: number;
  name!: string;
  /** network_operations, technicians or other */
  kind!: string;
  /** the sending account's id in the chat-bot settings (`default` without configured accounts) */
  account_id!: string;
  /** the provider's group id, passed to it untouched */
  group_id!: string;
  /** the event names ticked (api/wabot/group-schemas.ts EVENT_CATALOGUE) */
  events!: string[];
  enabled!: boolean;
  created_at!: Date;
  updated_at!: Date;
}
