import { Model } from 'objection';
import { User } from './user.js';

/** Row of `audit_log` (DESIGN.md §10 "audit"). Tenant-scoped: query it through TenantScope.query(), never bare. */
export class AuditLog extends Model {
  static tableName = 'audit_log';
  id!: number;
  tenant_id!: number;
  user_id!: number | null;
  /** `<module>.<verb>`, e.g. `integrations.token_created`. */
  action!: string;
  subject_type!: string | null;
  subject_id!: number | null;
  before!: Record<string, unknown> | null;
  after!: Record<string, unknown> | null;
  ip!: string | null;
  at!: Date;

  static relationMappings = () => ({
    user: {
      relation: Model.BelongsToOneRelation,
      modelClass: User,
      join: { from: 'audit_log.user_id', to: 'users.id' },
    },
  });
}
