import type { Knex } from 'knex';
import { hashPassword, issueToken, revokeToken, verifyPassword } from '../auth/service.js';
import { parseToken, tokenMatches } from '../../lib/token.js';

/**
 * Sessions of bull-board (/admin/queues, DESIGN.md §1 and §5): only platform admins sign in.
 * A session is a token of kind 'board' (lib/token.ts design, `ispb_<id>_<secret><crc>`) stored as
 * SHA-256 in auth_tokens (type 'board', no tenant), valid 12 hours, carried in an HttpOnly cookie.
 * Each request re-checks the row (revocation, expiry) and that the user is still a platform admin.
 */

/** Board sessions last 12 hours. */
export const BOARD_SESSION_TTL_MS = 12 * 3600 * 1000;

/** The signed-in operator. */
export interface BoardSession {
  tokenId: number;
  userId: number;
  email: string;
  name: string;
  expiresAt: Date;
}

// Verified when the e-mail is unknown, so response time does not tell which e-mails exist.
let dummyHash: Promise<string> | null = null;

/**
 * Checks e-mail and password of a platform admin (argon2id, api/auth/service.ts verifyPassword).
 * A tenant user's correct credentials are refused exactly like a wrong password.
 * @returns the user, or null for an unknown e-mail, a wrong password or a user who is not an active
 *   platform admin
 */
export async function verifyPlatformAdmin(
  knex: Knex,
  email: string,
  password: string,
): Promise<{ id: number; email: string; name: string } | null> {
  const user = await knex('users')
    .whereRaw('lower(email) = lower(?)', [email])
    .first('id', 'email', 'name', 'password_hash', 'is_platform_admin', 'is_active');
  if (!user) {
    dummyHash ??= hashPassword('not-a-real-password');
    await verifyPassword(await dummyHash, password);
    return null;
  }
  const ok = await verifyPassword(user.password_hash, password);
  if (!ok || user.is_platform_admin !== true || user.is_active === false) return null;
  return { id: user.id, email: user.email, name: user.name };
}

/**
 * Opens a board session for a platform admin.
 * @returns the plain session token (goes into the cookie only) and its expiry
 */
export async function openBoardSession(
  knex: Knex,
  userId: number,
  meta: { ip?: string; userAgent?: string } = {},
): Promise<{ token: string; id: number; expiresAt: Date }> {
  const expiresAt = new Date(Date.now() + BOARD_SESSION_TTL_MS);
  const { id, token } = await issueToken(knex, 'board', {
    tenant_id: null,
    user_id: userId,
    name: 'bull-board',
    expires_at: expiresAt,
    ip: meta.ip ?? null,
    user_agent: meta.userAgent ?? null,
  });
  return { token, id, expiresAt };
}

/**
 * Looks up a session cookie value: malformed values are rejected before any query; then one query
 * checks type, revocation, expiry and that the user is a platform admin; the hash is compared in
 * constant time. Writes last_used_at at most once a minute.
 * @returns the session, or null
 */
export async function findBoardSession(knex: Knex, raw: string | undefined | null): Promise<BoardSession | null> {
  const parsed = parseToken(raw);
  if (!parsed || parsed.kind !== 'board') return null;
  const row = await knex('auth_tokens as t')
    .join('users as u', 'u.id', 't.user_id')
    .where({ 't.id': parsed.id, 't.type': 'board', 'u.is_platform_admin': true, 'u.is_active': true })
    .whereNull('t.revoked_at')
    .where('t.expires_at', '>', knex.fn.now())
    .first('t.id', 't.token_hash', 't.expires_at', 't.last_used_at', 'u.id as user_id', 'u.email', 'u.name');
  if (!row || !tokenMatches(parsed.token, row.token_hash)) return null;
  if (!row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() >= 60_000) {
    await knex('auth_tokens').where({ id: row.id }).update({ last_used_at: knex.fn.now() });
  }
  return {
    tokenId: Number(row.id),
    userId: row.user_id,
    email: row.email,
    name: row.name,
    expiresAt: new Date(row.expires_at),
  };
}

/** Revokes a board session (logout). Unknown or already revoked sessions are ignored. */
export async function closeBoardSession(knex: Knex, session: BoardSession): Promise<void> {
  await revokeToken(knex, session.tokenId);
}
