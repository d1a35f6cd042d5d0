import type { Knex } from 'knex';
import { hashPassword, verifyPassword } from '../../auth/service.js';
import { mintToken, parseToken, tokenMatches } from '../../../lib/token.js';
import { ValidationFailed, type FieldErrors } from '../../errors.js';

/**
 * Operators of the Mailbox API dashboard (issue 3 §5, document 3 "What the service does": the
 * dashboard at {mail_api_base_url}/login). Passwords are hashed with argon2id (api/auth/service.ts);
 * sessions use the shared token design (lib/token.ts, kind 'operator', prefix `mbxs`), stored in
 * mail_operator_sessions as SHA-256 only, valid 12 hours.
 */

/** Dashboard sessions last 12 hours (ms). */
export const OPERATOR_SESSION_TTL_MS = 12 * 3600 * 1000;
/** Minimum operator password length (characters). */
export const OPERATOR_PASSWORD_MIN = 10;

/** An operator as shown by the dashboard and the CLI (never the hash). */
export interface OperatorView {
  id: number;
  email: string;
  name: string;
  created_at: string;
}

/** A verified dashboard session. */
export interface OperatorSession {
  sessionId: number;
  operator: OperatorView;
  expiresAt: Date;
}

const EMAIL =
  /^[^\s@]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

function view(r: { id: number; email: string; name: string; created_at: Date | string }): OperatorView {
  return { id: Number(r.id), email: r.email, name: r.name, created_at: new Date(r.created_at).toISOString() };
}

/**
 * Creates an operator.
 * @param input.email login e-mail (stored as given, unique case-insensitively)
 * @param input.password at least 10 characters; stored as an argon2id hash only
 * @param input.name display name (defaults to the e-mail's local part)
 * @returns the operator (no hash)
 * @throws ValidationFailed (422) with field errors (email, password, name), including a taken e-mail
 */
export async function createOperator(
  knex: Knex,
  input: { email?: unknown; password?: unknown; name?: unknown },
): Promise<OperatorView> {
  const errors: FieldErrors = {};
  const email = typeof input.email === 'string' ? input.email.trim() : '';
  const password = typeof input.password === 'string' ? input.password : '';
  const name = typeof input.name === 'string' && input.name.trim() ? input.name.trim() : email.split('@')[0];
  if (!email) errors.email = ['The email field is required.'];
  else if (email.length > 190 || !EMAIL.test(email)) errors.email = ['The email field must be a valid email address.'];
  if (!password) errors.password = ['The password field is required.'];
  else if (password.length < OPERATOR_PASSWORD_MIN)
    errors.password = [`The password field must be at least ${OPERATOR_PASSWORD_MIN} characters.`];
  else if (password.length > 1024) errors.password = ['The password field must not be greater than 1024 characters.'];
  if (name && name.length > 190) errors.name = ['The name field must not be greater than 190 characters.'];
  if (Object.keys(errors).length) throw new ValidationFailed(errors);
  if (await knex('mail_operators').whereRaw('lower(email) = lower(?)', [email]).first('id')) {
    throw new ValidationFailed({ email: ['An operator with this email already exists.'] });
  }
  const password_hash = await hashPassword(password);
  try {
    const [row] = await knex('mail_operators')
      .insert({ email, name, password_hash })
      .returning(['id', 'email', 'name', 'created_at']);
    return view(row);
  } catch (e) {
    if ((e as { code?: string }).code === '23505')
      throw new ValidationFailed({ email: ['An operator with this email already exists.'] });
    throw e;
  }
}

/** Lists operators, oldest first. */
export async function listOperators(knex: Knex): Promise<OperatorView[]> {
  const rows = await knex('mail_operators').select('id', 'email', 'name', 'created_at').orderBy('id');
  return rows.map(view);
}

// A real hash to verify against when the e-mail is unknown, so timing does not reveal which e-mails exist.
let dummyHash: Promise<string> | null = null;

/**
 * Checks e-mail and password and opens a dashboard session.
 * @returns the plain session token (cookie value; stored as SHA-256 only), its expiry and the
 *   operator; null for an unknown e-mail or a wrong password (the caller cannot tell which)
 */
export async function loginOperator(
  knex: Knex,
  input: { email: string; password: string },
): Promise<{ token: string; expiresAt: Date; operator: OperatorView } | null> {
  const row = input.email
    ? await knex('mail_operators').whereRaw('lower(email) = lower(?)', [input.email.trim()]).first()
    : null;
  if (!row) {
    dummyHash ??= hashPassword('not-a-real-password');
    await verifyPassword(await dummyHash, input.password ?? '');
    return null;
  }
  if (!(await verifyPassword(row.password_hash, input.password ?? ''))) return null;
  const expiresAt = new Date(Date.now() + OPERATOR_SESSION_TTL_MS);
  const token = await knex.transaction(async (trx) => {
    const { rows } = await trx.raw(`SELECT nextval(pg_get_serial_sequence('mail_operator_sessions', 'id')) AS id`);
    const id = Number(rows[0].id);
    const minted = mintToken('operator', id);
    await trx('mail_operator_sessions').insert({
      id,
      operator_id: row.id,
      token_hash: minted.hash,
      expires_at: expiresAt,
    });
    return minted.token;
  });
  return { token, expiresAt, operator: view(row) };
}

/**
 * Verifies a session token (the cookie value): shape and checksum first (no query for garbage),
 * then one query checking expiry and revocation, then a constant-time hash comparison.
 * Writes last_used_at at most once a minute.
 * @returns the session, or null (-> the dashboard redirects to /login)
 */
export async function verifyOperatorSession(
  knex: Knex,
  raw: string | null | undefined,
): Promise<OperatorSession | null> {
  const parsed = parseToken(raw);
  if (!parsed || parsed.kind !== 'operator') return null;
  const row = await knex('mail_operator_sessions as s')
    .join('mail_operators as o', 'o.id', 's.operator_id')
    .where('s.id', parsed.id)
    .whereNull('s.revoked_at')
    .where('s.expires_at', '>', knex.fn.now())
    .first(
      's.id',
      's.token_hash',
      's.expires_at',
      's.last_used_at',
      'o.id as operator_id',
      'o.email',
      'o.name',
      'o.created_at',
    );
  if (!row || !tokenMatches(parsed.token, row.token_hash)) return null;
  if (!row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() > 60_000) {
    await knex('mail_operator_sessions').where({ id: row.id }).update({ last_used_at: knex.fn.now() });
  }
  return {
    sessionId: Number(row.id),
    expiresAt: new Date(row.expires_at),
    operator: view({ id: row.operator_id, email: row.email, name: row.name, created_at: row.created_at }),
  };
}

/** Ends a session (logout). Unknown or already revoked sessions are ignored. */
export async function revokeOperatorSession(knex: Knex, sessionId: number): Promise<void> {
  await knex('mail_operator_sessions')
    .where({ id: sessionId })
    .whereNull('revoked_at')
    .update({ revoked_at: knex.fn.now() });
}
