/**
 * The demo e-mail account of `npm start` (issue 9 "Done when"): tenant demo-isp's account
 * (external_email_accounts) points at the third demo mailbox `cs@demo.mail.test` on the demo
 * Dovecot, which holds a few e-mails from seeded customers (their e-mail addresses). The e-mails
 * carry the Message-IDs of the demo inbox rows the seed wrote (db/seeds/demo-communications.ts), so
 * a sync of the account finds them already there and imports only what arrives later.
 * Called by bin/dev-mail.ts startMailDemo (so never with MAIL_DEMO=off); idempotent.
 */
import nodemailer from 'nodemailer';
import type { Knex } from '../db/knex.js';
import { TenantScope } from '../db/tenant-scope.js';
import { openEmailPassword } from '../db/credentials.js';
import { saveEmailSettings } from '../api/email/settings.js';
import { DEMO_INBOX, DEMO_INBOX_MESSAGES, demoInboxMessageId } from '../db/seeds/demo-communications.js';
import type { LocalDovecot } from '../lib/infra/dovecot.js';

/** The demo account's mailbox (the seed's demo inbox address). */
export const DEMO_ACCOUNT_EMAIL = DEMO_INBOX;
/** The tenant whose account points at it. */
export const DEMO_ACCOUNT_TENANT = 'demo-isp';

/** What {@link ensureDemoEmailAccount} did. */
export interface DemoAccountResult {
  /** false when the tenant does not exist (a database that was not seeded by npm start) */
  tenant: boolean;
  /** e-mails delivered into the mailbox by this call (0 when it was done before) */
  delivered: number;
  /** true when the account row was created or repointed */
  saved: boolean;
}

/**
 * Makes sure the tenant's account points at the demo mailbox and the mailbox holds the customers'
 * e-mails.
 * - Delivery: once per mailbox (`o.delivered` true skips it), over LMTP, from the tenant's first
 *   customers with an e-mail (the ones the seed's demo inbox uses), dated in the two days before now.
 * - Account: created when the tenant has none; repointed when it is the demo mailbox but the demo
 *   server's ports changed or the saved password does not open to the current one (new APP_KEY or
 *   password); left alone when the tenant saved another mailbox. Saved through saveEmailSettings
 *   (password sealed with APP_KEY, audited, plain IMAP and SMTP on loopback).
 * @param o.appKey APP_KEY (32 bytes)
 * @param o.tenantSlug the tenant (default demo-isp)
 * @throws Error when the database or Dovecot's LMTP fails
 */
export async function ensureDemoEmailAccount(
  knex: Knex,
  dc: LocalDovecot,
  o: { appKey: Buffer; password: string; smtpPort: number; delivered: boolean; tenantSlug?: string; now?: Date },
): Promise<DemoAccountResult> {
  const tenant = await knex('tenants')
    .where({ slug: o.tenantSlug ?? DEMO_ACCOUNT_TENANT })
    .first('id');
  if (!tenant) return { tenant: false, delivered: 0, saved: false };
  const scope = new TenantScope(knex, Number(tenant.id));
  const delivered = o.delivered ? 0 : await deliverCustomerMail(scope, dc, o.now ?? new Date());
  const current = await scope.table('external_email_accounts').first();
  const stale =
    current &&
    current.email === DEMO_ACCOUNT_EMAIL &&
    (current.incoming_port !== dc.imapPort ||
      current.outgoing_port !== o.smtpPort ||
      !opens(o.appKey, scope.tenantId, current.incoming_password_enc, o.password));
  if (current && !stale) return { tenant: true, delivered, saved: false };
  await saveEmailSettings(
    scope,
    o.appKey,
    { userId: null },
    {
      email: DEMO_ACCOUNT_EMAIL,
      incoming_protocol: 'imap',
      incoming_host: dc.host,
      incoming_port: dc.imapPort,
      incoming_encryption: 'none',
      incoming_username: DEMO_ACCOUNT_EMAIL,
      incoming_password: o.password,
      outgoing_host: dc.host,
      outgoing_port: o.smtpPort,
      outgoing_encryption: 'none',
      outgoing_username: DEMO_ACCOUNT_EMAIL,
    },
  );
  return { tenant: true, delivered, saved: true };
}

/** True when the sealed password opens to `password` with this key. */
function opens(appKey: Buffer, tenantId: number, sealed: string | null, password: string): boolean {
  if (!sealed) return false;
  try {
    return openEmailPassword(appKey, 'incoming', tenantId, sealed) === password;
  } catch {
    return false;
  }
}

/** Delivers the demo inbox's e-mails from the tenant's customers into the mailbox. @returns how many */
async function deliverCustomerMail(scope: TenantScope, dc: LocalDovecot, now: Date): Promise<number> {
  const customers = await scope
    .table('customers')
    .whereNotNull('email')
    .orderBy('id')
    .limit(DEMO_INBOX_MESSAGES.length)
    .select('id', 'name', 'email');
  const lmtp = nodemailer.createTransport({
    host: dc.host,
    port: dc.lmtpPort,
    lmtp: true,
    ignoreTLS: true,
    secure: false,
    logger: false,
  });
  try {
    for (const [i, c] of customers.entries()) {
      const m = DEMO_INBOX_MESSAGES[i];
      const email = String(c.email).toLowerCase();
      await lmtp.sendMail({
        from: { name: String(c.name), address: email },
        to: DEMO_ACCOUNT_EMAIL,
        subject: m.subject,
        text: m.text,
        date: new Date(now.getTime() - (DEMO_INBOX_MESSAGES.length - i) * 11 * 3_600_000),
        messageId: demoInboxMessageId(scope.tenantId, i + 1),
        envelope: { from: email, to: DEMO_ACCOUNT_EMAIL },
      });
    }
  } finally {
    lmtp.close();
  }
  return customers.length;
}
