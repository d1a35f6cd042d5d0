import { Model } from 'objection';

/** Row of `permissions` (issue 2 data model). Platform-level table. */
export class Permission extends Model {
  static tableName = 'permissions';
  id!: number;
  name!: string;
}
