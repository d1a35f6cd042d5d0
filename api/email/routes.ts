import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { schemaGuard } from '../shared/schema-check.js';
import { emailSettingsBody, emailSettingsOne, syncAccepted, testIncomingResult } from './schemas.js';
import { requestSync, testIncoming } from './sync.js';
import { QUEUE as IMAP_SYNC } from '../../jobs/imap-sync.js';
import { getEmailSettings, saveEmailSettings, type EmailSettingsInput } from './settings.js';

/** The tables of the e-mail client; without them its routes answer 503 external_email_accounts_missing. */
export const EMAIL_TABLES = ['external_email_accounts', 'communication_messages', 'communication_attachments'];

/** Guards every e-mail account route shares: admin login, email.manage, module email, the tables present. */
const base = {
  tag: 'email',
  auth: 'login',
  tenant: true,
  permission: 'email.manage',
  module: 'email',
} as const;
/** The 503 guard, spread into every route of the module. */
export const emailTablesGuard = { middleware: [schemaGuard('external_email_accounts_missing', EMAIL_TABLES)] };
const missing = { 503: { description: 'external_email_accounts_missing: the e-mail tables are not migrated' } };

/**
 * The e-mail account setting of the account menu (issue 9 items 1-3; document 2 "E-mail client
 * (account menu)").
 */
export const emailRoutes: AnyWebRoute[] = [
  webRoute({
    ...base,
    ...emailTablesGuard,
    method: 'get',
    path: '/api/auth/email-settings',
    summary: "The tenant's e-mail account (saved, else the provisioned mailbox's masked defaults); never a password",
    responses: { 200: { description: 'The account setting', schema: emailSettingsOne }, ...missing },
    async handler(ctx) {
      ctx.body = { data: await getEmailSettings(ctx.state.scope!) };
    },
  }),
  webRoute<Input, Input, EmailSettingsInput>({
    ...base,
    ...emailTablesGuard,
    method: 'put',
    path: '/api/auth/email-settings',
    body: emailSettingsBody,
    summary: 'Save the e-mail account (passwords write-only, stored encrypted; leave_on_server always true)',
    responses: { 200: { description: 'The saved setting', schema: emailSettingsOne }, ...missing },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      ctx.body = { data: await saveEmailSettings(ctx.state.scope!, ctx.deps.config.appKey, actor, ctx.state.body) };
    },
  }),
  webRoute({
    ...base,
    ...emailTablesGuard,
    method: 'post',
    path: '/api/auth/email-settings/test-incoming',
    demoAction: 'email.sync',
    summary: 'Test the incoming connection and import at most 1 e-mail (waits up to 30 s)',
    responses: {
      200: { description: '{ok: true, data} or {ok: false, error: {code, message}}', schema: testIncomingResult },
      ...missing,
    },
    async handler(ctx) {
      ctx.body = await testIncoming(ctx.state.scope!, ctx.deps.queues.get(IMAP_SYNC), ctx.deps.config.emailTestWaitMs);
    },
  }),
  webRoute({
    ...base,
    ...emailTablesGuard,
    method: 'post',
    path: '/api/auth/email-settings/sync',
    demoAction: 'email.sync',
    summary: 'Pull new mail into the inbox (202; one waiting or running sync is reused); outcome in GET sync',
    responses: { 202: { description: 'The sync job', schema: syncAccepted }, ...missing },
    async handler(ctx) {
      ctx.status = 202;
      ctx.body = { data: await requestSync(ctx.state.scope!, ctx.deps.queues.get(IMAP_SYNC)) };
    },
  }),
];
