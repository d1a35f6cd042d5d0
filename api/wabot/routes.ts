import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { configBody, configOne } from './schemas.js';
import { getWabotConfig, saveWabotConfig } from './service.js';
import type { ConfigInput } from './validate.js';
import { requestWebhookRegistration } from './webhook-registration.js';

/** Guards every chat-bot route shares: admin login, wabot.manage, module wabot (issue 10). */
const base = {
  tag: 'wabot',
  auth: 'login',
  tenant: true,
  permission: 'wabot.manage',
  module: 'wabot',
} as const;

/** The chat-bot configuration (issue 10 item 2; document 2 "Chat bot (logged-in panel, tenant-scoped)"). */
export const wabotRoutes: AnyWebRoute[] = [
  webRoute({
    ...base,
    method: 'get',
    path: '/api/wabot/config',
    summary:
      'The chat-bot configuration: provider, credential status, inbound webhook_url, settings, accounts; never a secret',
    responses: { 200: { description: 'The configuration', schema: configOne } },
    async handler(ctx) {
      const webhook = { publicBaseUrl: ctx.deps.config.publicBaseUrl, tenantSlug: ctx.state.tenant!.slug };
      ctx.body = { data: await getWabotConfig(ctx.state.scope!, ctx.deps.config.appKey, webhook) };
    },
  }),
  webRoute<Input, Input, ConfigInput>({
    ...base,
    method: 'put',
    path: '/api/wabot/config',
    body: configBody,
    summary:
      'Save the chat-bot configuration (secrets write-only, stored encrypted; absent or empty keeps them). 422 for a missing wablas/waha base URL, messenger page token or page id, a base URL on a fixed-root provider, bounds. With settings.webhook_auto_register each enabled account gets a `wabot-webhook-register` job (its webhook_registration `pending` until then; not for a demo tenant)',
    responses: { 200: { description: 'The saved configuration', schema: configOne } },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const webhook = { publicBaseUrl: ctx.deps.config.publicBaseUrl, tenantSlug: ctx.state.tenant!.slug };
      const scope = ctx.state.scope!;
      const saved = await saveWabotConfig(scope, ctx.deps.config.appKey, actor, webhook, ctx.state.body);
      // issue 11 item 6: webhook_auto_register enqueues one registration per enabled account (after the commit)
      const enqueued = await requestWebhookRegistration(
        scope,
        ctx.deps.queues,
        ctx.state.tenant!,
        ctx.deps.config.publicBaseUrl,
        saved,
      );
      ctx.body = { data: enqueued.length ? await getWabotConfig(scope, ctx.deps.config.appKey, webhook) : saved };
    },
  }),
];
