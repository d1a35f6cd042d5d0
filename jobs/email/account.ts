import type { Knex } from 'knex';
import { ExternalEmailAccount } from '../../db/models/index.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { openEmailPassword } from '../../db/credentials.js';
import type { MailboxCredentials } from '../adapters/mailbox-client/index.js';

/**
 * The tenant's e-mail account as the jobs use it (issue 9): the row and its logins, passwords
 * opened in memory only (never in job data, logs or errors).
 */

/** Logins of an account: IMAP/POP3 with the incoming username, SMTP with the outgoing one. */
export interface AccountLogins {
  incoming: MailboxCredentials;
  outgoing: MailboxCredentials;
  /** the incoming password, to scrub it from server texts */
  secrets: string[];
}

/**
 * Loads the account of a tenant.
 * @returns the row, or undefined when the tenant has none (or another id)
 */
export async function loadAccount(knex: Knex, tenantId: number, accountId?: number) {
  const q = new TenantScope(knex, tenantId).query(ExternalEmailAccount);
  return accountId === undefined ? q.first() : q.findById(accountId);
}

/**
 * Opens the account's passwords and builds the logins. The outgoing password falls back to the
 * incoming one until one is set (issue 9 item 1).
 * @param appKey APP_KEY
 * @throws Error when there is no APP_KEY, no incoming password, or a sealed value does not open
 */
export function accountLogins(a: ExternalEmailAccount, appKey: Buffer | undefined): AccountLogins {
  if (!appKey) throw new Error('APP_KEY is not configured: the e-mail account password cannot be opened');
  if (!a.incoming_password_enc) throw new Error('the e-mail account has no incoming password');
  const inPw = openEmailPassword(appKey, 'incoming', a.tenant_id, a.incoming_password_enc);
  const outPw = a.outgoing_password_enc
    ? openEmailPassword(appKey, 'outgoing', a.tenant_id, a.outgoing_password_enc)
    : inPw;
  const imap = { host: a.incoming_host, port: a.incoming_port, security: a.incoming_encryption };
  const smtp = { host: a.outgoing_host, port: a.outgoing_port, security: a.outgoing_encryption };
  return {
    incoming: { email: a.incoming_username, password: inPw, imap, smtp },
    outgoing: { email: a.outgoing_username, password: outPw, imap, smtp },
    secrets: [inPw, outPw],
  };
}
