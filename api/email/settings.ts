import type { PartialModelObject } from 'objection';
import type { TenantScope } from '../../db/tenant-scope.js';
import { ExternalEmailAccount } from '../../db/models/index.js';
import { sealEmailPassword } from '../../db/credentials.js';
import { recordAudit } from '../audit-logs/service.js';
import { ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';

/**
 * The tenant's e-mail account setting (issue 9 item 1; document 2 "E-mail account setting",
 * "E-mail client (account menu)"): one account per tenant, filling the tenant's shared inbox.
 * Passwords are write-only: sealed with APP_KEY, answered only as `*_password_set`.
 */

/** Body of PUT /api/auth/email-settings after schema validation. */
export interface EmailSettingsInput {
  email: string;
  incoming_protocol: 'imap' | 'pop3';
  incoming_host: string;
  incoming_port: number;
  incoming_encryption: 'none' | 'ssl' | 'starttls';
  incoming_username: string;
  incoming_password?: string;
  outgoing_host: string;
  outgoing_port: number;
  outgoing_encryption: 'none' | 'ssl' | 'starttls';
  outgoing_username: string;
  outgoing_password?: string;
  leave_on_server?: boolean;
}

/** Who acts, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

/**
 * Masks a login for mail-panel defaults: the first two characters of the local part, then `***`,
 * then the domain (`info@isp.test` -> `in***@isp.test`).
 */
export function maskUsername(u: string): string {
  const at = u.lastIndexOf('@');
  const local = at >= 0 ? u.slice(0, at) : u;
  const domain = at >= 0 ? u.slice(at) : '';
  return `${local.slice(0, 2)}***${domain}`;
}

/** The sync part of the read shape. */
function syncShape(a: Pick<ExternalEmailAccount, 'sync_status' | 'last_synced_at' | 'last_error'> | null) {
  return {
    status: a?.sync_status ?? 'never',
    last_synced_at: iso(a?.last_synced_at ?? null),
    last_error: a?.last_error ?? null,
  };
}

/** Read shape of a saved account: never a password. */
export function savedShape(a: ExternalEmailAccount) {
  return {
    ...summary(a)!,
    leave_on_server: true as const,
    source: 'saved' as const,
    sync: syncShape(a),
  };
}

/**
 * The defaults of the tenant's provisioned mailbox (issue 11 writes `tenants.settings.mailbox_email`
 * when it creates it on the mail panel): the mailbox's domain servers from `mail_domains`, the
 * username masked, no password. Null when the tenant has none.
 */
async function mailPanelDefaults(scope: TenantScope) {
  const t = await scope.knex('tenants').where({ id: scope.tenantId }).first('settings');
  const address = typeof t?.settings?.mailbox_email === 'string' ? t.settings.mailbox_email.toLowerCase() : null;
  if (!address) return null;
  const box = await scope
    .knex('mail_mailboxes as m')
    .join('mail_domains as d', 'd.id', 'm.domain_id')
    .where('m.email', address)
    .first('m.email', 'd.imap_host', 'd.imap_port', 'd.imap_security', 'd.smtp_host', 'd.smtp_port', 'd.smtp_security');
  if (!box) return null;
  const masked = maskUsername(box.email);
  return {
    email: box.email as string,
    incoming_protocol: 'imap' as const,
    incoming_host: box.imap_host as string,
    incoming_port: box.imap_port as number,
    incoming_encryption: box.imap_security as string,
    incoming_username: masked,
    outgoing_host: box.smtp_host as string,
    outgoing_port: box.smtp_port as number,
    outgoing_encryption: box.smtp_security as string,
    outgoing_username: masked,
    leave_on_server: true as const,
    incoming_password_set: false,
    outgoing_password_set: false,
    source: 'mail_panel' as const,
    sync: syncShape(null),
  };
}

/** The shape when nothing is saved and no mailbox was provisioned: the usual IMAP/SMTP ports over TLS. */
function noneShape() {
  return {
    email: null,
    incoming_protocol: 'imap' as const,
    incoming_host: null,
    incoming_port: 993,
    incoming_encryption: 'ssl' as const,
    incoming_username: null,
    outgoing_host: null,
    outgoing_port: 465,
    outgoing_encryption: 'ssl' as const,
    outgoing_username: null,
    leave_on_server: true as const,
    incoming_password_set: false,
    outgoing_password_set: false,
    source: 'none' as const,
    sync: syncShape(null),
  };
}

/**
 * GET /api/auth/email-settings: the saved account, else the provisioned mailbox's defaults (masked),
 * else empty defaults.
 */
export async function getEmailSettings(scope: TenantScope) {
  const a = await scope.query(ExternalEmailAccount).first();
  if (a) return savedShape(a);
  return (await mailPanelDefaults(scope)) ?? noneShape();
}

/** The settings without passwords, only whether they are set: the audit summary and the core of the read shape. */
function summary(a: Partial<ExternalEmailAccount> | undefined) {
  if (!a) return null;
  return {
    email: a.email,
    incoming_protocol: a.incoming_protocol,
    incoming_host: a.incoming_host,
    incoming_port: a.incoming_port,
    incoming_encryption: a.incoming_encryption,
    incoming_username: a.incoming_username,
    outgoing_host: a.outgoing_host,
    outgoing_port: a.outgoing_port,
    outgoing_encryption: a.outgoing_encryption,
    outgoing_username: a.outgoing_username,
    incoming_password_set: a.incoming_password_enc != null,
    outgoing_password_set: a.outgoing_password_enc != null,
  };
}

/**
 * PUT /api/auth/email-settings: saves the tenant's account (creates it on the first save).
 * `leave_on_server` is stored true whatever was sent. A password left out or empty keeps the stored
 * one; the incoming password is required on the first save. A change of address, incoming server,
 * protocol or login restarts the sync cursor; any save clears `auth_failed` (and its error).
 * Audited as `email.settings.updated` (no password in it).
 * @param appKey APP_KEY, to seal the passwords
 * @throws ValidationFailed (422 incoming_password) on a first save without one
 * @throws Error when a password is given and the app has no APP_KEY (configuration fault)
 */
export async function saveEmailSettings(
  scope: TenantScope,
  appKey: Buffer | undefined,
  actor: Actor,
  input: EmailSettingsInput,
) {
  return scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const before = await s.query(ExternalEmailAccount).forUpdate().first();
    if (!before && !input.incoming_password)
      throw new ValidationFailed({ incoming_password: ['The incoming password is required on the first save.'] });
    const seal = (kind: 'incoming' | 'outgoing', pw: string) => {
      if (!appKey) throw new Error('APP_KEY is not configured: passwords cannot be stored');
      return sealEmailPassword(appKey, kind, scope.tenantId, pw);
    };
    const email = input.email.trim().toLowerCase();
    const cols: PartialModelObject<ExternalEmailAccount> = {
      email,
      incoming_protocol: input.incoming_protocol,
      incoming_host: input.incoming_host.toLowerCase(),
      incoming_port: input.incoming_port,
      incoming_encryption: input.incoming_encryption,
      incoming_username: input.incoming_username,
      outgoing_host: input.outgoing_host.toLowerCase(),
      outgoing_port: input.outgoing_port,
      outgoing_encryption: input.outgoing_encryption,
      outgoing_username: input.outgoing_username,
      leave_on_server: true,
      updated_at: new Date(),
    };
    if (input.incoming_password) cols.incoming_password_enc = seal('incoming', input.incoming_password);
    if (input.outgoing_password) cols.outgoing_password_enc = seal('outgoing', input.outgoing_password);
    const moved =
      before &&
      (before.email !== email ||
        before.incoming_protocol !== cols.incoming_protocol ||
        before.incoming_host !== cols.incoming_host ||
        before.incoming_port !== cols.incoming_port ||
        before.incoming_username !== cols.incoming_username);
    if (moved) {
      cols.imap_uidvalidity = null;
      cols.imap_last_uid = null;
      await s.table('email_seen_uidls').where({ account_id: before.id }).delete();
    }
    if (!before || before.sync_status === 'auth_failed' || moved) {
      cols.sync_status = 'never';
      cols.last_error = null;
    }
    let after: ExternalEmailAccount;
    if (before) {
      await s.query(ExternalEmailAccount).findById(before.id).patch(cols);
      after = (await s.query(ExternalEmailAccount).findById(before.id))!;
    } else {
      after = await s.create(ExternalEmailAccount, { ...cols, created_at: new Date() }, trx);
    }
    await recordAudit(s, {
      userId: actor.userId,
      action: 'email.settings.updated',
      subject: { type: 'external_email_accounts', id: after.id },
      before: summary(before),
      after: summary(after),
      ip: actor.ip ?? null,
    });
    return savedShape(after);
  });
}
