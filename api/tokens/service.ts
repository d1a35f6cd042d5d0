import type { Knex } from 'knex';
import { issueToken } from '../auth/service.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';
import { AuthToken } from '../../db/models/index.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { recordAudit } from '../audit-logs/service.js';

/** Abilities of an integration token: its tenant and its access (document 1, DESIGN.md §5). */
export function abilitiesFor(tenantId: number, access: 'read' | 'read_write'): string[] {
  return access === 'read_write' ? [`tenant:${tenantId}`, 'read', 'write'] : [`tenant:${tenantId}`, 'read'];
}

/** The validated body of POST /api/integrations/api-tokens (api/tokens/schemas.ts). */
export interface TokenInput {
  name: string;
  access: 'read' | 'read_write';
  expires_at?: string | null;
}

/** An integration token with its creator, as the list reads it. */
type TokenWithCreator = AuthToken & { user?: { id: number; name: string; email: string } | null };

/** Row -> info shape of document 1 (never the hash). */
export function tokenInfo(t: TokenWithCreator) {
  return {
    id: Number(t.id),
    name: t.name,
    access: t.access,
    abilities: t.abilities,
    created_by: t.user ? { id: t.user.id, name: t.user.name, email: t.user.email } : null,
    last_used_at: iso(t.last_used_at),
    expires_at: iso(t.expires_at),
    created_at: iso(t.created_at),
  };
}

/** The tenant's integration tokens that are not revoked, with their creator (AuthToken through the scope). */
function activeTokens(scope: TenantScope) {
  return scope
    .query(AuthToken)
    .where('auth_tokens.type', 'integration')
    .whereNull('auth_tokens.revoked_at')
    .withGraphJoined('user(creator)')
    .modifiers({ creator: (q) => q.select('users.id', 'users.name', 'users.email') });
}

/**
 * GET /api/integrations/api-tokens (document 1): every integration token of the tenant that is not
 * revoked (expired ones included, so an admin sees why an integration stopped), any creator,
 * newest first.
 * @param scope the caller's tenant
 */
export async function listTokens(scope: TenantScope) {
  const rows = await activeTokens(scope).orderBy([
    { column: 'auth_tokens.created_at', order: 'desc' },
    { column: 'auth_tokens.id', order: 'desc' },
  ]);
  return rows.map(tokenInfo);
}

/**
 * POST /api/integrations/api-tokens: creates a token of the tenant, owned by the admin.
 * @param scope the caller's tenant
 * @param userId the admin creating it
 * @param input name, access (read | read_write), expires_at (ISO date-time in the future, or null)
 * @param ip the caller's address, for the audit entry `integrations.token_created`
 * @returns `{data: info, token: plain}`: the plain token appears here and nowhere else
 * @throws ValidationFailed when expires_at is not in the future
 */
export async function createToken(scope: TenantScope, userId: number, input: TokenInput, ip: string | null = null) {
  const expires = input.expires_at ? new Date(input.expires_at) : null;
  if (expires && expires.getTime() <= Date.now()) {
    throw new ValidationFailed({ expires_at: ['The expires at field must be a date after now.'] });
  }
  // A cut-over tenant's auth_tokens stay in the shared database (issue 15 item 4): the token is
  // written there, in a shared transaction around the tenant one of the audit entry.
  const tokens = scope.shared?.tables.includes('auth_tokens') ? scope.shared.knex : null;
  const work = (tokenKnex: Knex.Transaction | null) =>
    scope.knex.transaction(async (trx) => {
      const issued = await issueToken(tokenKnex ?? trx, 'integration', {
        tenant_id: scope.tenantId,
        user_id: userId,
        name: input.name,
        access: input.access,
        abilities: abilitiesFor(scope.tenantId, input.access),
        expires_at: expires,
      });
      await recordAudit(scope.withTransaction(trx), {
        userId,
        action: 'integrations.token_created',
        subject: { type: 'auth_tokens', id: issued.id },
        ip,
        after: { name: input.name, access: input.access, expires_at: expires?.toISOString() ?? null },
      });
      return issued;
    });
  const { id, token } = tokens ? await tokens.transaction((st) => work(st)) : await work(null);
  const row = await activeTokens(scope).findById(id);
  return { data: tokenInfo(row!), token };
}

/**
 * DELETE /api/integrations/api-tokens/{id}: revokes a token of the tenant (any admin of the tenant).
 * @param scope the caller's tenant
 * @param id the token id
 * @param actor who revokes it, for the audit entry `integrations.token_revoked`
 * @throws NotFound for an unknown id, another tenant's id, or an already revoked token
 */
export async function revokeIntegrationToken(
  scope: TenantScope,
  id: number,
  actor: { userId: number | null; ip?: string | null },
) {
  const row = await activeTokens(scope).findById(id);
  if (!row) throw new NotFound('Token');
  await scope.knex.transaction(async (trx) => {
    const n = await scope
      .query(AuthToken, { trx })
      .where({ id, type: 'integration' })
      .whereNull('revoked_at')
      .patch({ revoked_at: new Date(), updated_at: new Date() });
    if (n) {
      await recordAudit(scope.withTransaction(trx), {
        userId: actor.userId,
        action: 'integrations.token_revoked',
        subject: { type: 'auth_tokens', id },
        ip: actor.ip ?? null,
        before: { name: row.name, access: row.access },
      });
    }
  });
  return { message: 'Token revoked.', data: tokenInfo(row) };
}
