import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import type { AppContext } from '../context.js';
import { idParams } from '../shared/schemas.js';
import { contentDisposition } from '../../lib/storage/index.js';
import { DEFAULT_TIMEZONE } from '../tenants/catalog.js';
import { emailTablesGuard } from '../email/routes.js';
import {
  attachmentParams,
  communicationList,
  communicationListQuery,
  communicationOne,
  replyEmailBody,
  replyEmailFailed,
} from './schemas.js';
import { replyByEmail, type ReplyEmailInput } from './reply.js';
import { QUEUE as EMAIL_SEND } from '../../jobs/email-send.js';
import {
  allowedChannels,
  communicationById,
  deleteCommunication,
  listCommunications,
  openCommunicationAttachment,
  type CommunicationListQuery,
} from './service.js';

/**
 * Guards of the inbox routes: admin login of a tenant user. The channel checks (module and
 * permission per channel) are made per request by allowedChannels, since one list spans channels.
 */
const base = { tag: 'communications', auth: 'login', tenant: true } as const;
const notFound = { 404: { description: 'Not a message of the tenant (or deleted)' } };
const refused = { 403: { description: 'FORBIDDEN (no channel permission) or module_disabled' } };

/** The channels the caller may see (403 when none). */
function channelsOf(ctx: AppContext) {
  const auth = ctx.state.auth!;
  return allowedChannels(auth.kind === 'login' ? auth.permissions : [], ctx.state.tenant!.modules);
}

/** The inbox and outbox of every channel (issue 9 item 4). */
export const communicationRoutes: AnyWebRoute[] = [
  webRoute<Input, CommunicationListQuery>({
    ...base,
    ...emailTablesGuard,
    method: 'get',
    path: '/api/communications',
    query: communicationListQuery,
    summary:
      'Inbox and outbox, newest first; filters channel, direction, status, customer_id, account_ref, search, dates',
    responses: { 200: { description: 'Page of messages (no bodies)', schema: communicationList }, ...refused },
    async handler(ctx) {
      const channels = channelsOf(ctx);
      const tz = ctx.state.tenant!.timezone ?? DEFAULT_TIMEZONE;
      ctx.body = await listCommunications(ctx.state.scope!, ctx.state.query, tz, channels);
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    ...emailTablesGuard,
    method: 'get',
    path: '/api/communications/:id',
    params: idParams,
    summary: 'One message: bodies (sanitised HTML), headers, attachments, replies',
    responses: { 200: { description: 'The message', schema: communicationOne }, ...refused, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await communicationById(ctx.state.scope!, ctx.state.params.id, channelsOf(ctx)) };
    },
  }),
  webRoute<{ id: number; attachment_id: number }>({
    ...base,
    ...emailTablesGuard,
    method: 'get',
    path: '/api/communications/:id/attachments/:attachment_id',
    params: attachmentParams,
    summary: 'Download an attachment of a message (streamed, type detected from the content)',
    responses: {
      200: { description: 'The file', media: { 'application/octet-stream': { type: 'string', format: 'binary' } } },
      ...refused,
      404: { description: 'Not an attachment of this message, or kept as metadata only' },
    },
    async handler(ctx) {
      if (!ctx.deps.storage) throw new Error('no storage driver configured (AppDeps.storage)');
      const { id, attachment_id } = ctx.state.params;
      const f = await openCommunicationAttachment(
        ctx.state.scope!,
        ctx.deps.storage,
        id,
        attachment_id,
        channelsOf(ctx),
      );
      ctx.type = f.type;
      ctx.length = f.size;
      ctx.set('Content-Disposition', contentDisposition(f.filename));
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      ctx.body = f.stream;
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    ...emailTablesGuard,
    method: 'delete',
    path: '/api/communications/:id',
    params: idParams,
    summary: 'Delete the local copy (bodies, files); a tombstone stays so no sync imports it again',
    responses: {
      200: {
        description: 'Deleted',
        schema: { type: 'object', properties: { data: { type: 'object' } } },
      },
      ...refused,
      ...notFound,
    },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      ctx.body = {
        data: await deleteCommunication(
          ctx.state.scope!,
          ctx.deps.storage,
          actor,
          ctx.state.params.id,
          channelsOf(ctx),
        ),
      };
    },
  }),
  webRoute<{ id: number }, Input, ReplyEmailInput>({
    ...base,
    ...emailTablesGuard,
    method: 'post',
    path: '/api/communications/:id/reply-email',
    permission: 'email.manage',
    module: 'email',
    demoAction: 'email.send',
    params: idParams,
    body: replyEmailBody,
    summary:
      "Answer an inbound e-mail in thread from the tenant's account (queue email-send; waits up to 30 s for SMTP)",
    responses: {
      200: { description: 'Sent: the SMTP server accepted it (status sent)', schema: communicationOne },
      202: {
        description: 'Still queued after 30 s (retrying); the outcome shows in the message',
        schema: communicationOne,
      },
      ...notFound,
      422: { description: 'VALIDATION_FAILED: a field, `id` not an inbound e-mail, or `email` no account saved' },
      502: {
        description: 'mail_server_error: refused by the SMTP server, or delivery unknown',
        schema: replyEmailFailed,
      },
      503: {
        description:
          'QUEUE_UNAVAILABLE: the job queue (Redis) did not take the send; the message stays queued and is sent later',
      },
    },
    async handler(ctx) {
      const actor = { userId: ctx.state.auth!.userId, ip: ctx.ip };
      const { status, data } = await replyByEmail(ctx.state.scope!, actor, ctx.state.params.id, ctx.state.body, {
        queue: ctx.deps.queues.get(EMAIL_SEND),
        enqueueTimeoutMs: ctx.deps.queues.enqueueTimeoutMs,
        waitMs: ctx.deps.config.emailReplyWaitMs,
      });
      ctx.status = status;
      ctx.body = { data };
    },
  }),
];
