import type { Knex } from 'knex';

/**
 * Pilot tokens of a tenant database (issue 15 item 8): `auth_tokens` rows of type `pilot` (prefix
 * `ispp_`, lib/token.ts), in the shared table like every other kind, with the abilities
 * `pilot:tenant-db-login` and `tenant:<id>` and a 60-minute life counted by the clock. No HTTP
 * imports: jobs/tenant-db.ts calls revokeTenantPilotTokens from the rollbacks of issue 14.
 */

/** The ability every pilot token carries (beside `tenant:<id>`). */
export const PILOT_ABILITY = 'pilot:tenant-db-login';

/** How long a pilot token lives: 60 minutes (decision, docs/decisions.md "Issue 15"). */
export const PILOT_TTL_MS = 60 * 60 * 1000;

/** The `name` of a pilot token row. */
export const PILOT_TOKEN_NAME = 'tenant-db pilot login';

/** The abilities of a pilot token of a tenant. */
export const pilotAbilities = (tenantId: number): string[] => [PILOT_ABILITY, `tenant:${tenantId}`];

/** A pilot token as the status route answers it (never its hash). */
export interface PilotTokenView {
  id: number;
  created_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
  /** false once expired by the clock. */
  live: boolean;
}

/**
 * The pilot tokens of a tenant user that are not revoked, newest first (expired ones included,
 * marked `live: false`, so an operator sees why a smoke test stopped).
 * @param now the clock's now (expiry)
 */
export async function pilotTokensOf(
  knex: Knex,
  tenantId: number,
  userId: number,
  now: Date,
): Promise<PilotTokenView[]> {
  const rows = (await knex('auth_tokens')
    .where({ type: 'pilot', tenant_id: tenantId, user_id: userId })
    .whereNull('revoked_at')
    .orderBy('id', 'desc')
    .select('id', 'created_at', 'expires_at', 'last_used_at')) as Omit<PilotTokenView, 'live'>[];
  return rows.map((r) => ({ ...r, id: Number(r.id), live: r.expires_at.getTime() > now.getTime() }));
}

/**
 * Revokes the not yet revoked pilot tokens of a tenant (of one user when `userId` is given). Login,
 * integration and board tokens are never touched. Idempotent (a retried job revokes 0 the second time).
 * @param knex the shared database or a transaction
 * @param now the clock's now, written to revoked_at
 * @returns how many tokens were revoked
 */
export async function revokeTenantPilotTokens(
  knex: Knex | Knex.Transaction,
  tenantId: number,
  now: Date,
  userId?: number,
): Promise<number> {
  return knex('auth_tokens')
    .where({ type: 'pilot', tenant_id: tenantId })
    .modify((q) => {
      if (userId !== undefined) q.where({ user_id: userId });
    })
    .whereNull('revoked_at')
    .update({ revoked_at: now, updated_at: now });
}
