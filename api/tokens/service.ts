import type { Knex } from 'knex';
import { issueToken } from '../auth/service.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';

/** Abilities of an integration token: its tenant and its access (document 1, DESIGN.md §5). */
export function abilitiesFor(tenantId: number, access: 'read' | 'read_write'): string[] {
  return access === 'read_write' ? [`tenant:${tenantId}`, 'read', 'write'] : [`tenant:${tenantId}`, 'read'];
}

interface TokenListRow {
  id: number; name: string; access: string; abilities: string[]; last_used_at: Date | null; expires_at: Date | null;
  created_at: Date | null; creator_id: number | null; creator_name: string | null; creator_email: string | null;
}

/** Row -> info shape of document 1. */
export function tokenInfo(r: TokenListRow) {
  return {
    id: Number(r.id), name: r.name, access: r.access, abilities: r.abilities,
    created_by: r.creator_id === null && r.creator_name === null ? null : { id: r.creator_id, name: r.creator_name, email: r.creator_email },
    last_used_at: iso(r.last_used_at), expires_at: iso(r.expires_at), created_at: iso(r.created_at),
  };
}

function baseQuery(knex: Knex, tenantId: number) {
  return knex('auth_tokens as t').leftJoin('users as u', 'u.id', 't.user_id')
    .where({ 't.tenant_id': tenantId, 't.type': 'integration' }).whereNull('t.revoked_at')
    .select('t.id', 't.name', 't.access', 't.abilities', 't.last_used_at', 't.expires_at', 't.created_at',
      'u.id as creator_id', 'u.name as creator_name', 'u.email as creator_email');
}

/**
 * GET /api/integrations/api-tokens (document 1): every integration token of the tenant that is not
 * revoked (expired ones included, so an admin sees why an integration stopped), any creator,
 * newest first.
 */
export async function listTokens(knex: Knex, tenantId: number) {
  const rows = await baseQuery(knex, tenantId).orderBy([{ column: 't.created_at', order: 'desc' }, { column: 't.id', order: 'desc' }]);
  return rows.map(tokenInfo);
}

/**
 * POST /api/integrations/api-tokens: creates a token of the tenant, owned by the admin.
 * @param input name, access (read | read_write), expires_at (ISO date-time in the future, or null)
 * @returns `{data: info, token: plain}`: the plain token appears here and nowhere else
 * @throws ValidationFailed when expires_at is not in the future
 */
export async function createToken(knex: Knex, tenantId: number, userId: number, input: { name: string; access: 'read' | 'read_write'; expires_at?: string | null }) {
  const expires = input.expires_at ? new Date(input.expires_at) : null;
  if (expires && expires.getTime() <= Date.now()) throw new ValidationFailed({ expires_at: ['The expires at field must be a date after now.'] });
  const { id, token } = await issueToken(knex, 'integration', {
    tenant_id: tenantId, user_id: userId, name: input.name, access: input.access, abilities: abilitiesFor(tenantId, input.access), expires_at: expires,
  });
  const row = await baseQuery(knex, tenantId).where('t.id', id).first();
  return { data: tokenInfo(row), token };
}

/**
 * DELETE /api/integrations/api-tokens/{id}: revokes a token of the tenant (any admin of the tenant).
 * @throws NotFound for an unknown id, another tenant's id, or an already revoked token
 */
export async function revokeIntegrationToken(knex: Knex, tenantId: number, id: number) {
  const row = await baseQuery(knex, tenantId).where('t.id', id).first();
  if (!row) throw new NotFound('Token');
  await knex('auth_tokens').where({ id, tenant_id: tenantId, type: 'integration' }).whereNull('revoked_at')
    .update({ revoked_at: knex.fn.now(), updated_at: knex.fn.now() });
  return { message: 'Token revoked.', data: tokenInfo(row) };
}
