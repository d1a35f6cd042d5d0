import type { Next } from 'koa';
import { bearer, parseToken, tokenMatches } from '../../lib/token.js';
import { systemClock } from '../../lib/clock.js';
import { Unauthenticated } from '../errors.js';
import { PILOT_ABILITY } from '../platform/tenant-db/pilot-tokens.js';
import type { AppContext } from '../context.js';

/**
 * Authentication of the smoke routes of issue 15 item 9 (`auth: 'pilot'`): a live pilot token
 * (`ispp_`, issued by `tenant-db/pilot-login`) and nothing else. Every other route refuses pilot
 * tokens (api/middleware/auth.ts accepts only the kind it asks for), and these routes refuse every
 * other kind. Expiry is decided by the clock of AppDeps.config.tenantDbPilot (default the system
 * clock), the same clock that set it, so a test moves a ManualClock instead of waiting an hour.
 */

interface PilotRow {
  id: number;
  tenant_id: number | null;
  user_id: number | null;
  token_hash: Buffer;
  abilities: unknown;
  last_used_at: Date | null;
  expires_at: Date | null;
  u_active: boolean | null;
  u_tenant_id: number | null;
}

/** A minute: last_used_at is written at most this often per token (as for the other kinds). */
const TOUCH_MS = 60_000;

/**
 * Koa middleware: sets ctx.state.auth (kind `pilot`, tenantId of the token) for a live pilot token
 * holding `pilot:tenant-db-login` and `tenant:<its tenant>`, whose user is still an active user of
 * that tenant; records last_used_at (awaited, so a status read right after sees it; at most once a minute, by
 * the clock; a failed write is logged, never fails the request). Sets no
 * ctx.state.tenant or scope: the smoke route reads the tenant database itself.
 * @throws Unauthenticated (401) for a missing, malformed, non-pilot, unknown, revoked or expired
 *   token, missing abilities, or a user gone or deactivated
 */
export async function authenticatePilot(ctx: AppContext, next: Next): Promise<void> {
  const raw = bearer(ctx.get('authorization'));
  const parsed = parseToken(raw);
  if (!raw || !parsed || parsed.kind !== 'pilot') throw new Unauthenticated();
  const knex = ctx.deps.knex;
  const row = (await knex('auth_tokens as t')
    .leftJoin('users as u', 'u.id', 't.user_id')
    .where({ 't.id': parsed.id, 't.type': 'pilot' })
    .whereNull('t.revoked_at')
    .first(
      't.id',
      't.tenant_id',
      't.user_id',
      't.token_hash',
      't.abilities',
      't.last_used_at',
      't.expires_at',
      'u.is_active as u_active',
      'u.tenant_id as u_tenant_id',
    )) as PilotRow | undefined;
  if (!row || !tokenMatches(raw, row.token_hash)) throw new Unauthenticated();
  const now = (ctx.deps.config.tenantDbPilot?.clock ?? systemClock).now();
  if (!row.expires_at || row.expires_at.getTime() <= now.getTime()) throw new Unauthenticated();
  const abilities = Array.isArray(row.abilities) ? (row.abilities as string[]) : [];
  if (
    row.tenant_id === null ||
    !abilities.includes(PILOT_ABILITY) ||
    !abilities.includes(`tenant:${row.tenant_id}`) ||
    row.u_tenant_id !== row.tenant_id ||
    row.u_active === false
  )
    throw new Unauthenticated();
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= TOUCH_MS)
    await knex('auth_tokens')
      .where({ id: row.id })
      .update({ last_used_at: now })
      .catch((err: unknown) => ctx.deps.logger.warn({ err, token_id: row.id }, 'last_used_at update failed'));
  ctx.state.auth = {
    kind: 'pilot',
    tokenId: Number(row.id),
    userId: row.user_id,
    tenantId: row.tenant_id,
    access: null,
    abilities,
    roles: [],
    permissions: [],
    isPlatformAdmin: false,
    expiresAt: row.expires_at,
  };
  return next();
}
