import type { Next } from 'koa';
import { MailApiError } from '../errors.js';
import { MAILBOX_PASSWORD_MAX_LENGTH } from '../schemas.js';
import type { MailContext, ResolvedMailbox } from '../context.js';

/**
 * Resolves `:mailbox` of the path (document 3: the mailbox is URL-encoded, `@` as `%40`; the router
 * has decoded it) to a registered mailbox and checks the key may use it. Comparison is
 * case-insensitive (addresses are stored lowercase). Order: mailbox_not_found before
 * mailbox_not_allowed (docs/mailbox-api.md "Order of checks").
 * @throws MailApiError 404 mailbox_not_found (not in mail_mailboxes), 403 mailbox_not_allowed (not
 *   one of the key's mailboxes)
 */
export function resolveMailbox() {
  return async (ctx: MailContext, next: Next): Promise<void> => {
    const email = String(ctx.params.mailbox ?? '')
      .trim()
      .toLowerCase();
    const row =
      email.length > 0 && email.length <= 320
        ? await ctx.deps
            .knex('mail_mailboxes as m')
            .join('mail_domains as d', 'd.id', 'm.domain_id')
            .where('m.email', email)
            .first(
              'm.id',
              'm.email',
              'm.domain_id',
              'd.name as domain',
              'd.imap_host',
              'd.imap_port',
              'd.imap_security',
              'd.smtp_host',
              'd.smtp_port',
              'd.smtp_security',
            )
        : undefined;
    if (!row)
      throw new MailApiError(
        'mailbox_not_found',
        `The mailbox ${email || '(empty)'} is not registered in the service.`,
      );
    if (!ctx.state.key?.mailboxes.includes(row.email))
      throw new MailApiError('mailbox_not_allowed', `The API key may not access the mailbox ${row.email}.`);
    const mailbox: ResolvedMailbox = {
      id: row.id,
      email: row.email,
      domain_id: row.domain_id,
      domain: row.domain,
      imap: { host: row.imap_host, port: row.imap_port, security: row.imap_security },
      smtp: { host: row.smtp_host, port: row.smtp_port, security: row.smtp_security },
    };
    ctx.state.mailbox = mailbox;
    return next();
  };
}

/**
 * Resolves `:domain` of the path for the create-mailbox routes: it must be the key's domain.
 * Order: domain_not_found (unknown to the service) before domain_not_allowed (another domain).
 * @throws MailApiError 404 domain_not_found, 403 domain_not_allowed
 */
export function resolveDomain() {
  return async (ctx: MailContext, next: Next): Promise<void> => {
    const name = String(ctx.params.domain ?? '')
      .trim()
      .toLowerCase()
      .replace(/\.$/, '');
    const row =
      name.length > 0 && name.length <= 253
        ? await ctx.deps
            .knex('mail_domains')
            .where('name', name)
            .first('id', 'name', 'imap_host', 'imap_port', 'smtp_host', 'smtp_port', 'panel_type')
        : undefined;
    if (!row)
      throw new MailApiError('domain_not_found', `The domain ${name || '(empty)'} is not registered in the service.`);
    if (row.id !== ctx.state.key?.domain_id)
      throw new MailApiError('domain_not_allowed', `The API key may not create mailboxes in ${row.name}.`);
    ctx.state.domain = row;
    return next();
  };
}

/**
 * Takes the mailbox password (document 3 "Authentication" 2) from the X-Mailbox-Password header or,
 * when the header is absent or empty, from the validated body field mailbox_password. The value is
 * moved to ctx.state.mailboxPassword (memory only, for this request) and removed from the body.
 * Runs after validation, so a payload error answers invalid_request first.
 * @throws MailApiError 422 invalid_request when the header is longer than MAILBOX_PASSWORD_MAX_LENGTH
 *   (1024) characters (the body field has the same bound in its schema); 422 mailbox_password_required
 *   when neither carries a non-empty value
 */
export function requireMailboxPassword() {
  return async (ctx: MailContext, next: Next): Promise<void> => {
    const header = ctx.get('x-mailbox-password');
    if (header.length > MAILBOX_PASSWORD_MAX_LENGTH) {
      const reason = `The X-Mailbox-Password header must not be longer than ${MAILBOX_PASSWORD_MAX_LENGTH} characters.`;
      throw new MailApiError('invalid_request', reason, { errors: { 'X-Mailbox-Password': [reason] } });
    }
    const fromBody = ctx.state.body.mailbox_password;
    delete ctx.state.body.mailbox_password;
    const password = header !== '' ? header : typeof fromBody === 'string' ? fromBody : '';
    if (!password) throw new MailApiError('mailbox_password_required');
    ctx.state.mailboxPassword = password;
    ctx.state.secrets.push(password);
    return next();
  };
}
