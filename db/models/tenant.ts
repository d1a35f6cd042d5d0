import { Model } from 'objection';

/** Row of `tenants` (issue 2 data model). Platform-level table. */
export class Tenant extends Model {
  static tableName = 'tenants';
  id!: number;
  slug!: string;
  name!: string;
  demo_mode!: boolean;
  modules!: string[];
  settings!: Record<string, unknown>;
  created_at!: Date;
  updated_at!: Date;

}
