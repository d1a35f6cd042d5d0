/**
 * Issue 9 fixtures: a tenant whose e-mail account (external_email_accounts) is a fresh mailbox of
 * the run's Dovecot (test/helpers/mail.ts), saved through the service with the test APP_KEY.
 */
import { env } from './env.js';
import { makeTenant, type TenantFixture } from './fixtures.js';
import { TEST_WEB_APP_KEY } from './http.js';
import type { MailStack } from './mail.js';
import { saveEmailSettings, type EmailSettingsInput } from '../../api/email/settings.js';

/** A tenant (new unless given) whose e-mail account is a fresh Dovecot mailbox (plain IMAP, the SMTP relay). */
export async function accountFixture(stack: MailStack, f?: TenantFixture) {
  const t = f ?? (await makeTenant());
  const box = await stack.newMailbox({ local: 'cs' });
  await saveEmailSettings(
    t.scope,
    TEST_WEB_APP_KEY,
    { userId: t.admin.id },
    {
      email: box.email,
      incoming_protocol: 'imap',
      incoming_host: stack.imap.host,
      incoming_port: stack.imap.port,
      incoming_encryption: 'none',
      incoming_username: box.email,
      incoming_password: box.password,
      outgoing_host: stack.smtp.host,
      outgoing_port: stack.smtp.port,
      outgoing_encryption: 'none',
      outgoing_username: box.email,
    },
  );
  const account = await env.knex('external_email_accounts').where({ tenant_id: t.tenant.id }).first();
  return { t, box, account };
}

/**
 * A tenant whose e-mail account reads a fresh Dovecot mailbox over POP3 (plain, the run's POP3 port).
 * @param over fields of the saved settings to change (e.g. another incoming port)
 */
export async function pop3AccountFixture(stack: MailStack, over: Partial<EmailSettingsInput> = {}) {
  const t = await makeTenant();
  const box = await stack.newMailbox({ local: 'pop' });
  await saveEmailSettings(
    t.scope,
    TEST_WEB_APP_KEY,
    { userId: t.admin.id },
    {
      email: box.email,
      incoming_protocol: 'pop3',
      incoming_host: stack.dovecot.host,
      incoming_port: stack.dovecot.pop3Port,
      incoming_encryption: 'none',
      incoming_username: box.email,
      incoming_password: box.password,
      outgoing_host: stack.smtp.host,
      outgoing_port: stack.smtp.port,
      outgoing_encryption: 'none',
      outgoing_username: box.email,
      ...over,
    },
  );
  const account = await env.knex('external_email_accounts').where({ tenant_id: t.tenant.id }).first();
  return { t, box, account };
}
