import { Model } from 'objection';
import { HomeBase } from './home-base.js';

/**
 * Row of `olts` (issue 2 data model, issue 8 item 3). Tenant-scoped: query it through
 * TenantScope.query(), never bare.
 */
export class Olt extends Model {
  static tableName = 'olts';
  id!: number;
  tenant_id!: number;
  name!: string;
  vendor!: string | null;
  model!: string | null;
  ip_address!: string | null;
  location!: string | null;
  status!: 'online' | 'offline';
  pon_ports!: number;
  home_base_id!: number | null;
  /** The OltAdapter that polls it (jobs/adapters/olt; 'fake' for now). */
  driver!: string;
  /** Sealed credentials (lib/crypto.ts, APP_KEY); never sent to a client. */
  credentials_enc!: string | null;
  /** Inactive OLTs are not polled. */
  is_active!: boolean;
  /** When the last poll got an answer or found the OLT unreachable. */
  last_polled_at!: Date | null;
  /** Why the last poll failed (a fixed text: unreachable, authentication failed), null after a good one. */
  last_poll_error!: string | null;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    homeBase: {
      relation: Model.BelongsToOneRelation,
      modelClass: HomeBase,
      join: { from: 'olts.home_base_id', to: 'home_bases.id' },
    },
  });
}
