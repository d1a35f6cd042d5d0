import { Model } from 'objection';
import { User } from './user.js';

/** Row of `auth_tokens` (issue 2 data model). Platform-level table. */
export class AuthToken extends Model {
  static tableName = 'auth_tokens';
  id!: number;
  type!: 'login' | 'integration' | 'pilot' | 'board';
  tenant_id!: number | null;
  user_id!: number | null;
  name!: string;
  token_hash!: Buffer;
  access!: 'read' | 'read_write' | null;
  abilities!: string[];
  last_used_at!: Date | null;
  expires_at!: Date | null;
  revoked_at!: Date | null;
  created_at!: Date;
  updated_at!: Date;

  static relationMappings = () => ({
    user: {
      relation: Model.BelongsToOneRelation,
      modelClass: User,
      join: { from: 'auth_tokens.user_id', to: 'users.id' },
    },
  });
  /** The hash never leaves the model in JSON. */
  $formatJson(json: Record<string, unknown>) {
    const j = super.$formatJson(json);
    delete j.token_hash;
    return j;
  }
}
