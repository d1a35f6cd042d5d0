import type { Knex } from 'knex';
import { AppError, NotFound, ValidationFailed } from '../../errors.js';
import { hashPassword, issueToken, verifyPassword } from '../../auth/service.js';
import type { Clock } from '../../../lib/clock.js';
import { recordPlatformAudit } from '../audit.js';
import { resolvePlatformTenant, type PlatformTenantRow } from '../tenant-param.js';
import type { PlatformActor } from '../tenants-service.js';
import { readSource } from './module-read.js';
import { requirePhrase, TenantDbUnreachable } from './service.js';
import { readTenantDb, type TenantDbRow } from './state.js';
import {
  pilotAbilities,
  pilotTokensOf,
  PILOT_TOKEN_NAME,
  PILOT_TTL_MS,
  revokeTenantPilotTokens,
} from './pilot-tokens.js';

/**
 * Pilot logins of a tenant database (issue 15 item 8; admin-api.md "Tenant provisioning"): an
 * argon2id check of a copied user's password in the TENANT database (`auth-check`, nothing written),
 * a pilot token for the smoke routes (`pilot-login`), its status and its revocation. The password
 * check is issue 4's (api/auth/service.ts verifyPassword) and runs in constant time: an unknown
 * e-mail still verifies against a dummy argon2id hash.
 */

/** What the login routes pass in. */
export interface PilotLoginDeps {
  knex: Knex;
  appKey: Buffer;
  /** Expiry of the pilot tokens (ManualClock in tests). */
  clock: Clock;
}

/** The credentials of auth-check and pilot-login. */
export interface PilotCredentials {
  email: string;
  password: string;
  confirm_phrase?: string;
}

/** One message for an unknown e-mail and a wrong password (the e-mails of a tenant stay secret). */
export const BAD_CREDENTIALS = 'These credentials do not match the tenant database.';

/** 422 INVALID_TRANSITION with a message of its own (`errors.status` repeats it). */
function refused(message: string): AppError {
  return new AppError(422, 'INVALID_TRANSITION', message, { errors: { status: [message] } });
}

let dummyHash: Promise<string> | null = null;

/** A copied users row of the tenant database (only what the check needs). */
interface TenantUser {
  id: number;
  name: string;
  email: string;
  password_hash: string;
  is_active: boolean | null;
}

/**
 * The tenant and its database, which must serve reads: status `data_copied` or `production`,
 * use_tenant_db_read on, every shared migration applied.
 * @throws NotFound (404) unknown tenant; 422 INVALID_TRANSITION (flag off, not copied, migrations
 *   pending); 422 tenant_db_unreachable
 */
async function tenantUsers(deps: PilotLoginDeps, tenant: PlatformTenantRow): Promise<{ row: TenantDbRow; tk: Knex }> {
  const row = await readTenantDb(deps.knex, tenant.id);
  const src = await readSource(deps.knex, row, deps.appKey);
  if (src.tk) return { row, tk: src.tk };
  if (src.reason === 'tenant_db_unreachable')
    throw new TenantDbUnreachable(`The tenant database did not answer: ${src.detail}`);
  if (src.reason === 'flag_off')
    throw refused(
      `Pilot logins need use_tenant_db_read on (status ${row.status}); turn it on with tenant-db:read-flag --on.`,
    );
  throw refused(`Pilot logins need a copied tenant database (${src.detail}).`);
}

/**
 * Finds the user in the tenant database and verifies the password (argon2id); an unknown e-mail
 * verifies against a dummy hash, so both answers take the same time.
 * @throws TenantDbUnreachable (422) when the read fails
 */
async function checkPassword(tk: Knex, tenantId: number, input: PilotCredentials) {
  let user: TenantUser | undefined;
  try {
    user = (await tk('users')
      .where({ tenant_id: tenantId })
      .whereRaw('lower(email) = lower(?)', [input.email])
      .first('id', 'name', 'email', 'password_hash', 'is_active')) as TenantUser | undefined;
  } catch (err) {
    throw new TenantDbUnreachable(
      `The tenant database did not answer: ${String((err as Error).message).slice(0, 200)}`,
    );
  }
  if (!user) {
    dummyHash ??= hashPassword('not-a-real-password');
    await verifyPassword(await dummyHash, input.password);
    return { user: null, matches: false };
  }
  return { user, matches: await verifyPassword(user.password_hash, input.password) };
}

/**
 * POST tenant-db/auth-check: `{user_found, password_matches}` from the tenant database; no token,
 * no session, no write (no audit row either).
 */
export async function authCheck(deps: PilotLoginDeps, ref: string, input: PilotCredentials) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  const { tk } = await tenantUsers(deps, tenant);
  const { user, matches } = await checkPassword(tk, tenant.id, input);
  return { user_found: !!user, password_matches: matches };
}

/**
 * POST tenant-db/pilot-login: checks the password in the tenant database and issues a pilot token
 * (`ispp_`, abilities `pilot:tenant-db-login` and `tenant:<id>`, 60 minutes by the clock) for the
 * shared users row of the same id (identity stays shared, issue 15 item 4). Audited
 * `platform.tenant_db_pilot_login`.
 * @throws ValidationFailed (422) phrase, or BAD_CREDENTIALS in `errors.email` (unknown e-mail, wrong
 *   password, a tenant-database user without its shared row), or a deactivated account (after a
 *   correct password only); the errors of tenantUsers
 */
export async function pilotLogin(
  deps: PilotLoginDeps,
  actor: PlatformActor & { userAgent?: string },
  ref: string,
  input: PilotCredentials,
) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  requirePhrase('pilot_login', input.confirm_phrase);
  const { tk } = await tenantUsers(deps, tenant);
  const { user, matches } = await checkPassword(tk, tenant.id, input);
  if (!user || !matches) throw new ValidationFailed({ email: [BAD_CREDENTIALS] });
  const shared = (await deps.knex('users').where({ id: user.id, tenant_id: tenant.id }).first('id', 'is_active')) as
    { id: number; is_active: boolean | null } | undefined;
  if (!shared) throw new ValidationFailed({ email: [BAD_CREDENTIALS] });
  if (user.is_active === false || shared.is_active === false)
    throw new ValidationFailed({ email: ['This account is deactivated.'] });
  const expiresAt = new Date(deps.clock.now().getTime() + PILOT_TTL_MS);
  const abilities = pilotAbilities(tenant.id);
  const issued = await deps.knex.transaction(async (trx) => {
    const t = await issueToken(trx, 'pilot', {
      tenant_id: tenant.id,
      user_id: user.id,
      name: PILOT_TOKEN_NAME,
      abilities,
      expires_at: expiresAt,
      ip: actor.ip ?? null,
      user_agent: actor.userAgent ?? null,
    });
    await recordPlatformAudit(trx, {
      userId: actor.userId,
      action: 'platform.tenant_db_pilot_login',
      subject: { type: 'tenant', id: tenant.id },
      after: { token_id: t.id, user_id: user.id, expires_at: expiresAt.toISOString() },
      ip: actor.ip,
    });
    return t;
  });
  return {
    data: {
      token_id: issued.id,
      token_type: 'Bearer' as const,
      expires_at: expiresAt.toISOString(),
      abilities,
      user: { id: Number(user.id), name: user.name, email: user.email },
      tenant: { id: tenant.id, slug: tenant.slug },
    },
    token: issued.token,
  };
}

/**
 * The tenant's user of an e-mail (case-insensitive) in the shared users table, where identity lives.
 * @throws NotFound (404) when the e-mail is not a user of this tenant
 */
async function sharedUserOf(knex: Knex, tenantId: number, email: string): Promise<{ id: number; email: string }> {
  const u = (await knex('users')
    .where({ tenant_id: tenantId })
    .whereRaw('lower(email) = lower(?)', [email])
    .first('id', 'email')) as { id: number; email: string } | undefined;
  if (!u) throw new NotFound('User');
  return u;
}

/** GET tenant-db/pilot-token/status?email=: the user's pilot tokens (not revoked; expired ones marked). */
export async function pilotTokenStatus(deps: PilotLoginDeps, ref: string, email: string) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  const user = await sharedUserOf(deps.knex, tenant.id, email);
  const tokens = await pilotTokensOf(deps.knex, tenant.id, user.id, deps.clock.now());
  return { user: { id: user.id, email: user.email }, tokens };
}

/**
 * POST tenant-db/pilot-token/revoke: revokes the user's pilot tokens (login and integration tokens
 * spared). Audited `platform.tenant_db_pilot_token_revoke`.
 * @throws ValidationFailed (phrase), NotFound (404) for an e-mail not of this tenant
 */
export async function revokePilotTokens(
  deps: PilotLoginDeps,
  actor: PlatformActor,
  ref: string,
  input: { email: string; confirm_phrase?: string },
) {
  const tenant = await resolvePlatformTenant(deps.knex, ref);
  requirePhrase('pilot_token_revoke', input.confirm_phrase);
  const user = await sharedUserOf(deps.knex, tenant.id, input.email);
  const revoked = await deps.knex.transaction(async (trx) => {
    const n = await revokeTenantPilotTokens(trx, tenant.id, deps.clock.now(), user.id);
    await recordPlatformAudit(trx, {
      userId: actor.userId,
      action: 'platform.tenant_db_pilot_token_revoke',
      subject: { type: 'tenant', id: tenant.id },
      after: { user_id: user.id, revoked: n },
      ip: actor.ip,
    });
    return n;
  });
  return { revoked };
}
