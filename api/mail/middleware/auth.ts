import type { Next } from 'koa';
import { bearer } from '../../../lib/token.js';
import { verifyApiKey, type MailScope } from '../keys/service.js';
import { MailApiError } from '../errors.js';
import type { MailContext } from '../context.js';

/**
 * Authentication of the Mailbox API (document 3 "Authentication" 1): `Authorization: Bearer
 * <API_KEY>` verified with verifyApiKey (shape and checksum first, then one query checking
 * revocation and expiry, constant-time hash comparison). Sets ctx.state.key.
 * @throws MailApiError 401 unauthorized when the header is missing, not Bearer, or the key is
 *   malformed, unknown, revoked or expired
 */
export function apiKeyAuth() {
  return async (ctx: MailContext, next: Next): Promise<void> => {
    const key = await verifyApiKey(ctx.deps.knex, bearer(ctx.get('authorization')));
    if (!key) throw new MailApiError('unauthorized');
    ctx.state.key = key;
    return next();
  };
}

/**
 * Scope check (document 3 "Authentication" 3).
 * @throws MailApiError 403 forbidden naming the missing scope
 */
export function requireScope(scope: MailScope) {
  return async (ctx: MailContext, next: Next): Promise<void> => {
    if (!ctx.state.key?.scopes.includes(scope))
      throw new MailApiError('forbidden', `The API key lacks the scope ${scope}.`);
    return next();
  };
}
