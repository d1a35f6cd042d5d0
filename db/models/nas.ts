import { Model } from 'objection';

/**
 * Row of `nas` (issue 8 item 3): a network access server (router) customers connect through. Its
 * id is the `router_id` other modules refer to (DHCP lease bind, customers.nas_id). Tenant-scoped:
 * query it through TenantScope.query(), never bare.
 */
export class Nas extends Model {
  static tableName = 'nas';
  id!: number;
  tenant_id!: number;
  name!: string;
  /** Unique per tenant, case-insensitive (the partner customer create names the NAS by it). */
  nas_key!: string;
  /** The network adapter that talks to it ('fake' for now). */
  driver!: string;
  host!: string;
  /** TCP port of the router's API, 1..65535. */
  port!: number;
  /** Sealed credentials (lib/crypto.ts, APP_KEY); never sent to a client. */
  credentials_enc!: string | null;
  /** The router profile (or address list) isolated customers are put in. */
  isolation_profile!: string | null;
  is_active!: boolean;
  created_at!: Date;
  updated_at!: Date;
}
