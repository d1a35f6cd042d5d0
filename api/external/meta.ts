import type { AppContext } from '../context.js';
import { iso } from '../shared/schemas.js';

/** health and me of the External v1 API (document 1; shapes in DESIGN.md §6). */

/** Public fields of the token's tenant. */
function tenantOf(ctx: AppContext) {
  const t = ctx.state.tenant!;
  return { id: t.id, slug: t.slug, name: t.name, demo_mode: t.demo_mode };
}

/**
 * GET /api/external/v1/health: reached only when the token and its tenant are valid (the auth
 * middleware has read both from the database).
 * @returns {status: "ok", tenant, api_version: "v1", time}
 */
export function health(ctx: AppContext) {
  return { status: 'ok' as const, tenant: tenantOf(ctx), api_version: 'v1' as const, time: new Date().toISOString() };
}

/**
 * GET /api/external/v1/me: the tenant, the owner user of the token (the admin who created it,
 * null when that user was deleted) and the token's id, name, access, abilities and expires_at.
 * Never the token itself.
 */
export async function me(ctx: AppContext) {
  const auth = ctx.state.auth!;
  const tenant = tenantOf(ctx);
  const token = await ctx.deps
    .knex('auth_tokens')
    .select('id', 'name', 'access', 'abilities', 'expires_at', 'user_id')
    .where({ id: auth.tokenId, tenant_id: tenant.id, type: 'integration' })
    .first();
  const user = token?.user_id
    ? await ctx.deps
        .knex('users')
        .select('id', 'name', 'email')
        .where({ id: token.user_id, tenant_id: tenant.id })
        .first()
    : null;
  return {
    tenant,
    user: user ? { id: user.id, name: user.name, email: user.email } : null,
    token: {
      id: Number(auth.tokenId),
      name: token?.name ?? null,
      access: auth.access,
      abilities: auth.abilities,
      expires_at: iso(auth.expiresAt),
    },
  };
}
