import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import type { Knex } from 'knex';
import { mintToken, type TokenKind } from '../../lib/token.js';
import { Unauthenticated } from '../errors.js';

/**
 * Loads a user's roles and permissions. The built-in Super Admin role (tenant_id null) holds every
 * permission; a custom role can never carry its name (check roles_custom_not_builtin).
 * @returns role names and permission names (sorted)
 */
export async function rolesAndPermissions(
  knex: Knex,
  userId: number,
): Promise<{ roles: string[]; permissions: string[] }> {
  const rows: { role: string; builtin: boolean; permission: string | null }[] = await knex('user_roles as ur')
    .join('roles as r', 'r.id', 'ur.role_id')
    .leftJoin('role_permissions as rp', 'rp.role_id', 'r.id')
    .leftJoin('permissions as p', 'p.id', 'rp.permission_id')
    .where('ur.user_id', userId)
    .select('r.name as role', knex.raw('r.tenant_id IS NULL AS builtin'), 'p.name as permission');
  const roles = [...new Set(rows.map((r) => r.role))].sort();
  let permissions = [...new Set(rows.map((r) => r.permission).filter((p): p is string => !!p))];
  if (rows.some((r) => r.builtin && r.role === 'Super Admin'))
    permissions = (await knex('permissions').pluck('name')) as string[];
  return { roles, permissions: permissions.sort() };
}

/** Login sessions last 12 hours. */
export const LOGIN_TTL_MS = 12 * 3600 * 1000;

/** argon2id with the library's defaults (m=19 MiB, t=2, p=1: OWASP's minimum). */
export function hashPassword(password: string): Promise<string> {
  return argonHash(password, { algorithm: 2 });
}

/** Verifies a password against an argon2id hash; false on any malformed hash. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argonVerify(hash, password);
  } catch {
    return false;
  }
}

// A real hash to verify against when the e-mail is unknown, so timing does not reveal which e-mails exist.
let dummyHash: Promise<string> | null = null;

/**
 * Inserts a token row and mints its plain text (DESIGN.md §5: id first, then the hash of the token).
 * @returns the row id and the plain token (show once)
 */
export async function issueToken(
  knex: Knex | Knex.Transaction,
  kind: TokenKind & ('login' | 'integration' | 'pilot' | 'board'),
  row: {
    tenant_id: number | null;
    user_id: number | null;
    name: string;
    access?: string | null;
    abilities?: string[];
    expires_at?: Date | null;
    ip?: string | null;
    user_agent?: string | null;
  },
): Promise<{ id: number; token: string }> {
  const { rows } = await knex.raw(`SELECT nextval(pg_get_serial_sequence('auth_tokens', 'id')) AS id`);
  const id = Number(rows[0].id);
  const minted = mintToken(kind, id);
  await knex('auth_tokens').insert({
    id,
    type: kind,
    tenant_id: row.tenant_id,
    user_id: row.user_id,
    name: row.name,
    token_hash: minted.hash,
    access: row.access ?? null,
    abilities: JSON.stringify(row.abilities ?? []),
    expires_at: row.expires_at ?? null,
    ip: row.ip ?? null,
    user_agent: row.user_agent?.slice(0, 255) ?? null,
  });
  return { id, token: minted.token };
}

/**
 * Checks e-mail and password and opens a login session (POST /api/auth/login, DESIGN.md §5).
 * @returns `{token, token_type, expires_at, user, tenant}`
 * @throws Unauthenticated (401) for an unknown e-mail or a wrong password (same message for both);
 *   for a deactivated user (is_active false, issue 8 item 1) after a correct password only
 */
export async function login(
  knex: Knex,
  input: { email: string; password: string; device_name?: string; ip?: string; userAgent?: string },
) {
  const user = await knex('users').whereRaw('lower(email) = lower(?)', [input.email]).first();
  if (!user) {
    dummyHash ??= hashPassword('not-a-real-password');
    await verifyPassword(await dummyHash, input.password);
    throw new Unauthenticated('These credentials do not match our records.');
  }
  if (!(await verifyPassword(user.password_hash, input.password)))
    throw new Unauthenticated('These credentials do not match our records.');
  if (user.is_active === false) throw new Unauthenticated('This account is deactivated.');
  const expiresAt = new Date(Date.now() + LOGIN_TTL_MS);
  const { token } = await issueToken(knex, 'login', {
    tenant_id: user.tenant_id,
    user_id: user.id,
    name: input.device_name ?? 'login',
    expires_at: expiresAt,
    ip: input.ip ?? null,
    user_agent: input.userAgent ?? null,
  });
  return {
    token,
    token_type: 'Bearer' as const,
    expires_at: expiresAt.toISOString(),
    ...(await profile(knex, user.id)),
  };
}

/** The user and tenant shapes of login and me. */
export async function profile(knex: Knex, userId: number) {
  const user = await knex('users').where({ id: userId }).first();
  const { roles, permissions } = await rolesAndPermissions(knex, userId);
  const tenant = user.tenant_id
    ? await knex('tenants').select('id', 'slug', 'name', 'demo_mode', 'modules').where({ id: user.tenant_id }).first()
    : null;
  return {
    user: {
      id: user.id,
      name: user.name,
      email: user.email,
      roles,
      permissions,
      is_platform_admin: user.is_platform_admin,
    },
    tenant: tenant ?? null,
  };
}

/** Revokes one token (logout). */
export async function revokeToken(knex: Knex, tokenId: number): Promise<void> {
  await knex('auth_tokens')
    .where({ id: tokenId })
    .whereNull('revoked_at')
    .update({ revoked_at: knex.fn.now(), updated_at: knex.fn.now() });
}
