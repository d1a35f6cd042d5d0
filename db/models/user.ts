import { Model } from 'objection';
import { Tenant } from './tenant.js';
import { Role } from './role.js';

/** Row of `users` (issue 2 data model). Platform-level table. */
export class User extends Model {
  static tableName = 'users';
  id!: number;
  tenant_id!: number | null;
  name!: string;
  email!: string;
  password_hash!: string;
  is_platform_admin!: boolean;
  /** False: cannot log in, sessions revoked (issue 8 item 1). */
  is_active!: boolean;
  /** E.164 (e.g. +6281234567890) or null. */
  phone!: string | null;
  /** The user's home base (home_bases, issue 8 item 3) or null. */
  home_base_id!: number | null;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    tenant: {
      relation: Model.BelongsToOneRelation,
      modelClass: Tenant,
      join: { from: 'users.tenant_id', to: 'tenants.id' },
    },
    roles: {
      relation: Model.ManyToManyRelation,
      modelClass: Role,
      join: { from: 'users.id', through: { from: 'user_roles.user_id', to: 'user_roles.role_id' }, to: 'roles.id' },
    },
  });
  /** The password hash never leaves the model in JSON. */
  $formatJson(json: Record<string, unknown>) {
    const j = super.$formatJson(json);
    delete j.password_hash;
    return j;
  }
}
