import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { idParams } from '../shared/schemas.js';
import { communicationOne } from '../communications/schemas.js';
import { configBody, configOne, testBody, testResult } from './schemas.js';
import { getWabotConfig, saveWabotConfig } from './service.js';
import { testWabot, type WabotTestInput } from './test.js';
import { resendMessage } from './resend.js';
import type { ConfigInput } from './validate.js';

/** Guards every chat-bot route shares: admin login, wabot.manage, module wabot (issue 10). */
const base = {
  tag: 'wabot',
  auth: 'login',
  tenant: true,
  permission: 'wabot.manage',
  module: 'wabot',
} as const;

const queueDown = {
  503: { description: 'QUEUE_UNAVAILABLE: the job queue (Redis) did not answer; a written message stays queued' },
};

/**
 * The chat-bot configuration, test and resend (issue 10 items 2, 4, 5; document 2 "Chat bot
 * (logged-in panel, tenant-scoped)").
 */
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
      'Save the chat-bot configuration (secrets write-only, stored encrypted; absent or empty keeps them). 422 for a missing wablas/waha base URL, messenger page token or page id, a base URL on a fixed-root provider, bounds',
    responses: { 200: { description: 'The saved configuration', schema: configOne } },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const webhook = { publicBaseUrl: ctx.deps.config.publicBaseUrl, tenantSlug: ctx.state.tenant!.slug };
      ctx.body = {
        data: await saveWabotConfig(ctx.state.scope!, ctx.deps.config.appKey, actor, webhook, ctx.state.body),
      };
    },
  }),
  webRoute<Input, Input, WabotTestInput>({
    ...base,
    method: 'post',
    path: '/api/wabot/test',
    demoAction: 'wabot.send',
    body: testBody,
    summary:
      'Test the gateway: without a message a connection check (no send) of account_id or each enabled account; with one a real send through the routing and the limiter to phone or wa_number, waited up to 15 s (still queued: available_at). Audited',
    responses: {
      200: {
        description: 'The check (data: one entry per account) or the send (data: the outbox row)',
        schema: testResult,
      },
      422: {
        description:
          'VALIDATION_FAILED: bounds, nothing saved, unknown account_id (disabled for a send), no enabled account, no recipient, is_group off wablas',
      },
      ...queueDown,
    },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      ctx.body = await testWabot(ctx.state.scope!, actor, ctx.state.body, {
        redis: ctx.deps.redis,
        queues: ctx.deps.queues,
        appKey: ctx.deps.config.appKey,
        waitMs: ctx.deps.config.wabotTestWaitMs,
      });
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'post',
    path: '/api/communications/:id/resend',
    demoAction: 'wabot.send',
    params: idParams,
    summary:
      'Resend a failed outbound WhatsApp or Messenger message: a new queued row (resent_from_id), routed afresh, sent by the wabot-send job; the original stays failed. Audited',
    responses: {
      202: { description: 'The new message (queued)', schema: communicationOne },
      404: { description: 'Not a message of the tenant (or deleted)' },
      409: {
        description: 'CONFLICT: a resend of this message is still queued (`resend_id` names it)',
        schema: {
          type: 'object',
          properties: { message: { type: 'string' }, code: { type: 'string' }, resend_id: { type: 'integer' } },
        },
      },
      422: { description: 'INVALID_TRANSITION: not an outbound chat message in status failed' },
      ...queueDown,
    },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const data = await resendMessage(ctx.state.scope!, actor, ctx.state.params.id, {
        redis: ctx.deps.redis,
        queues: ctx.deps.queues,
        appKey: ctx.deps.config.appKey,
      });
      ctx.status = 202;
      ctx.body = { data };
    },
  }),
];
