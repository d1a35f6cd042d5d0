import { Model } from 'objection';

/** Row of `tenants` (issue 2 data model). Platform-level table. */
export class Tenant extends Model {
  static tableName = 'tenants';
  /** jsonb columns: written as JSON (an array would otherwise go to pg as a PostgreSQL array literal). */
  static jsonAttributes = ['modules', 'settings'];
  id!: number;
  slug!: string;
  name!: string;
  demo_mode!: boolean;
  modules!: string[];
  settings!: Record<string, unknown>;
  /** IANA time zone (default Asia/Jakarta); "today" of the tenant is computed in it (lib/clock.ts). */
  timezone!: string;
  created_at!: Date;
  updated_at!: Date;
}
