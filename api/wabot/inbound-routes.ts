import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { singleLine, type Schema } from '../http/validation.js';
import type { AppContext } from '../context.js';
import { ValidationFailed } from '../errors.js';
import { tenantScopeOf } from '../../db/tenant-routing.js';
import { authenticateInbound, receiveInbound, type InboundTenant } from './inbound.js';
import { rotateWebhookSecret } from './webhook-secret.js';
import { ACCOUNT_ID_PATTERN } from './schemas.js';

/**
 * Issue 11 item 1 (document 2 "Chat bot", "Events"): the providers' inbound webhook (public,
 * authenticated by the tenant's webhook key), Messenger's verification GET, and the rotation of
 * the webhook secret (admin).
 */

const params: Schema = {
  type: 'object',
  required: ['tenant_slug'],
  properties: { tenant_slug: { type: 'string', minLength: 1, maxLength: 100, ...singleLine } },
};

const inboundQuery: Schema = {
  type: 'object',
  properties: {
    key: { type: 'string', maxLength: 200, description: "The tenant's webhook secret (from webhook_url)." },
    account: {
      type: 'string',
      pattern: ACCOUNT_ID_PATTERN,
      description: 'The receiving account (GET /api/wabot/config lists a URL per account); absent: detected.',
    },
  },
};

const verifyQuery: Schema = {
  type: 'object',
  required: ['hub.mode', 'hub.verify_token', 'hub.challenge'],
  properties: {
    'hub.mode': { type: 'string', enum: ['subscribe'] },
    'hub.verify_token': { type: 'string', maxLength: 200, description: "The tenant's webhook secret." },
    'hub.challenge': { type: 'string', pattern: '^[A-Za-z0-9._-]{1,256}$' },
  },
};

const okShape: Schema = { type: 'object', properties: { ok: { type: 'boolean', const: true } } };

/** The tenant the guard found (ctx.state.tenant carries the TenantInfo, this the settings too). */
const found = new WeakMap<AppContext, InboundTenant>();

/** Guard of the inbound routes: slug, key (the `key` parameter, or Messenger's verify token), module. */
function inboundGuard(keyParam: 'key' | 'hub.verify_token') {
  return async (ctx: AppContext, next: () => Promise<unknown>) => {
    const slug = String((ctx.params as Record<string, string>).tenant_slug ?? '');
    const at = await authenticateInbound(ctx.deps.knex, ctx.deps.config.appKey, slug, ctx.query[keyParam]);
    ctx.state.tenant = at.tenant;
    ctx.state.scope = await tenantScopeOf(ctx.deps.knex, at.tenant.id, ctx.deps.config.appKey);
    found.set(ctx, at);
    await next();
  };
}

const publicBase = { tag: 'wabot', auth: 'public', params } as const;

export const wabotInboundRoutes: AnyWebRoute[] = [
  webRoute<{ tenant_slug: string }, { key?: string; account?: string }>({
    ...publicBase,
    method: 'post',
    path: '/api/wabot/inbound/:tenant_slug',
    query: inboundQuery,
    guard: inboundGuard('key'),
    summary:
      "Providers' webhook for incoming messages and delivery reports (no login; the tenant's key in ?key=). JSON or form, at most 1 MB",
    description:
      'Read with the parser of each of the tenant’s providers (wablas, fonnte, ruangwa, waha, messenger, watzap, starsender shapes), or of `account`’s provider. New messages are stored as `received` inbound rows (counterpart normalised, customer when exactly one customer has that phone) and published as `inbound_chat_message`; receipts move outbound rows to sent, delivered, read or failed; own messages, echoes and (with ignore_groups) group messages are dropped. A redelivered message adds nothing. 200 `{ok: true}` also for payloads deliberately ignored.',
    responses: {
      200: { description: 'Accepted (stored, applied or deliberately ignored)', schema: okShape },
      401: { description: 'Missing or wrong key (UNAUTHENTICATED)' },
      403: { description: 'The wabot module is switched off (module_disabled)' },
      404: { description: 'Unknown tenant slug' },
      422: { description: 'Unknown account, or no parser of the tenant’s providers reads the payload' },
    },
    async handler(ctx) {
      const at = found.get(ctx)!;
      await receiveInbound(
        ctx.deps.knex,
        ctx.deps.config.appKey,
        at,
        ctx.state.query.account,
        ctx.request.body,
        undefined,
        ctx.state.scope,
      );
      ctx.body = { ok: true };
    },
  }),
  webRoute<{ tenant_slug: string }, Record<string, string>>({
    ...publicBase,
    method: 'get',
    path: '/api/wabot/inbound/:tenant_slug',
    query: verifyQuery,
    guard: inboundGuard('hub.verify_token'),
    summary:
      "Messenger's webhook verification: echoes hub.challenge when hub.verify_token is the tenant's webhook secret",
    responses: {
      200: { description: 'The challenge, as text', media: { 'text/plain': { type: 'string' } } },
      401: { description: 'Missing or wrong verify token (UNAUTHENTICATED)' },
      403: { description: 'The wabot module is switched off (module_disabled)' },
      404: { description: 'Unknown tenant slug' },
    },
    async handler(ctx) {
      const challenge = ctx.state.query['hub.challenge'];
      if (typeof challenge !== 'string') throw new ValidationFailed({ 'hub.challenge': ['Required.'] });
      ctx.type = 'text/plain';
      ctx.body = challenge;
    },
  }),
  webRoute<Input, Input, Input>({
    tag: 'wabot',
    auth: 'login',
    tenant: true,
    permission: 'wabot.manage',
    module: 'wabot',
    method: 'post',
    path: '/api/wabot/webhook-secret/rotate',
    summary: 'Replace the inbound webhook secret: the old key is refused at once; answers the new webhook_url',
    responses: {
      200: {
        description: 'The new webhook URL',
        schema: {
          type: 'object',
          properties: { data: { type: 'object', properties: { webhook_url: { type: 'string' } } } },
        },
      },
      422: { description: 'No chat-bot configuration saved yet' },
    },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const base = { publicBaseUrl: ctx.deps.config.publicBaseUrl, tenantSlug: ctx.state.tenant!.slug };
      ctx.body = { data: await rotateWebhookSecret(ctx.state.scope!, ctx.deps.config.appKey, actor, base) };
    },
  }),
];
