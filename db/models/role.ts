import { Model } from 'objection';
import { Permission } from './permission.js';

/** Row of `roles` (issue 2 data model). Platform-level table. */
export class Role extends Model {
  static tableName = 'roles';
  id!: number;
  tenant_id!: number | null;
  name!: string;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    permissions: {
      relation: Model.ManyToManyRelation,
      modelClass: Permission,
      join: {
        from: 'roles.id',
        through: { from: 'role_permissions.role_id', to: 'role_permissions.permission_id' },
        to: 'permissions.id',
      },
    },
  });
}
