import { webRoute, type AnyWebRoute } from '../http/web-route.js';
import type { Input } from '../http/route.js';
import { receiveFile } from '../http/multipart.js';
import { contentDisposition } from '../../lib/storage/index.js';
import { idParams } from '../shared/schemas.js';
import {
  attachmentParams,
  dataOf,
  ticketAttachmentRead,
  ticketAttachmentUpload,
  ticketCheckInBody,
  ticketCheckInRead,
  ticketCommentBody,
  ticketCommentRead,
  ticketCreateBody,
  ticketDetailRead,
  ticketList,
  ticketListQuery,
  ticketRead,
  ticketStatusBody,
  ticketUpdateBody,
} from './schemas.js';
import {
  changeStatus,
  createTicket,
  listTickets,
  ticketById,
  updateTicket,
  type Actor,
  type TicketFilters,
  type TicketInput,
  type TicketStatus,
  type TicketUpdateInput,
} from './service.js';
import {
  addAttachment,
  addCheckIn,
  addComment,
  ATTACHMENT_MAX_BYTES,
  ATTACHMENT_TYPES,
  openAttachment,
  ticketDetail,
  type CheckInInput,
  type CommentInput,
} from './work-record.js';
import type { PageParams } from '../shared/list.js';
import type { AppContext } from '../context.js';
import type { Storage } from '../../lib/storage/index.js';

/** Guards every ticket route shares: a login token of a tenant user, the tickets module switched on. */
const base = { tag: 'tickets', auth: 'login', tenant: true, module: 'tickets' } as const;
const notFound = { 404: { description: 'Not a ticket of the tenant' } };

/** The caller as the services see it. */
const actorOf = (ctx: AppContext): Actor => ({
  userId: ctx.state.auth!.userId,
  permissions: ctx.state.auth!.permissions,
  ip: ctx.ip,
});

/** The app's storage driver; an app built without one cannot take or give files. */
function storageOf(ctx: AppContext): Storage {
  if (!ctx.deps.storage) throw new Error('no storage driver configured (AppDeps.storage)');
  return ctx.deps.storage;
}

/**
 * Admin ticket endpoints (document 2 "Tickets"; document 1 ticket fields and state table; issue 8
 * item 6): CRUD, the status change with the reopen rule, and the append-only work record
 * (comments and notes, attachments, check-ins). Reads need tickets.view, writes tickets.update.
 */
export const ticketRoutes: AnyWebRoute[] = [
  webRoute<Input, TicketFilters & PageParams>({
    ...base,
    method: 'get',
    path: '/api/tickets',
    permission: 'tickets.view',
    query: ticketListQuery,
    summary: 'List tickets, newest first; filters search, status, priority, customer_id, assigned_to',
    responses: { 200: { description: 'Page of tickets', schema: ticketList } },
    async handler(ctx) {
      ctx.body = await listTickets(ctx.state.scope!, ctx.state.query);
    },
  }),
  webRoute<Input, Record<string, never>, TicketInput>({
    ...base,
    method: 'post',
    path: '/api/tickets',
    permission: 'tickets.update',
    body: ticketCreateBody,
    idempotent: true,
    summary: 'Create a ticket (source admin; SLA due dates from the priority); honours Idempotency-Key',
    responses: {
      201: { description: 'The new ticket with its (empty) work record', schema: dataOf(ticketDetailRead) },
      409: { description: 'Idempotency-Key reused with a different body' },
    },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const settings = ctx.state.tenant!.settings ?? {};
      const id = await createTicket(scope, settings, ctx.state.body, 'admin', { actor: actorOf(ctx) });
      ctx.status = 201;
      ctx.body = { data: await ticketDetail(scope, id) };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'get',
    path: '/api/tickets/:id',
    permission: 'tickets.view',
    params: idParams,
    summary: 'Show a ticket with its work record and resolution_requirements',
    responses: { 200: { description: 'The ticket', schema: dataOf(ticketDetailRead) }, ...notFound },
    async handler(ctx) {
      ctx.body = { data: await ticketDetail(ctx.state.scope!, ctx.state.params.id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, TicketUpdateInput>({
    ...base,
    method: 'put',
    path: '/api/tickets/:id',
    permission: 'tickets.update',
    params: idParams,
    body: ticketUpdateBody,
    summary: 'Replace the editable fields of a ticket (not its status; changing assigned_to needs tickets.assign)',
    responses: { 200: { description: 'The updated ticket', schema: dataOf(ticketDetailRead) }, ...notFound },
    async handler(ctx) {
      const scope = ctx.state.scope!;
      const { id } = ctx.state.params;
      await updateTicket(scope, ctx.state.tenant!.settings ?? {}, actorOf(ctx), id, ctx.state.body);
      ctx.body = { data: await ticketDetail(scope, id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, { status: TicketStatus }>({
    ...base,
    method: 'patch',
    path: '/api/tickets/:id',
    permission: 'tickets.update',
    demoAction: 'tickets.status.update',
    summary: "Change a ticket's status; reopening a resolved or closed ticket needs Administrator or Super Admin",
    params: idParams,
    body: ticketStatusBody,
    responses: {
      200: { description: 'Updated ticket', schema: dataOf(ticketRead) },
      ...notFound,
    },
    async handler(ctx) {
      const { id } = ctx.state.params;
      await changeStatus(ctx.state.scope!, id, ctx.state.body.status, ctx.state.auth!.roles);
      ctx.body = { data: await ticketById(ctx.state.scope!, id) };
    },
  }),
  webRoute<{ id: number }, Record<string, never>, CommentInput>({
    ...base,
    method: 'post',
    path: '/api/tickets/:id/comments',
    permission: 'tickets.update',
    params: idParams,
    body: ticketCommentBody,
    summary: 'Append a comment or an internal note to the work record',
    responses: { 201: { description: 'The new entry', schema: dataOf(ticketCommentRead) }, ...notFound },
    async handler(ctx) {
      const data = await addComment(ctx.state.scope!, actorOf(ctx), ctx.state.params.id, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data };
    },
  }),
  webRoute<{ id: number }>({
    ...base,
    method: 'post',
    path: '/api/tickets/:id/attachments',
    permission: 'tickets.update',
    demoAction: 'tickets.attachment.upload',
    params: idParams,
    upload: ticketAttachmentUpload,
    summary: 'Attach one file (multipart field file: JPG, PNG, WEBP or PDF by content, at most 10 MB)',
    responses: {
      201: { description: 'The stored attachment', schema: dataOf(ticketAttachmentRead) },
      ...notFound,
      413: { description: 'PAYLOAD_TOO_LARGE: the file is larger than 10 MB; nothing stored' },
      415: { description: 'UNSUPPORTED_FILE_TYPE: the content is not JPG, PNG, WEBP or PDF; nothing stored' },
    },
    async handler(ctx) {
      const data = await addAttachment(
        ctx.state.scope!,
        storageOf(ctx),
        actorOf(ctx),
        ctx.state.params.id,
        (store, discard) =>
          receiveFile(
            ctx,
            { field: 'file', maxBytes: ATTACHMENT_MAX_BYTES },
            (file, info) => store(file, info.filename),
            discard,
          ),
      );
      ctx.status = 201;
      ctx.body = { data };
    },
  }),
  webRoute<{ id: number; attachmentId: number }>({
    ...base,
    method: 'get',
    path: '/api/tickets/:id/attachments/:attachmentId',
    permission: 'tickets.view',
    params: attachmentParams,
    summary: 'Download an attachment (streamed, with its content type and Content-Disposition)',
    responses: {
      200: {
        description: 'The file',
        media: Object.fromEntries(ATTACHMENT_TYPES.map((t) => [t, { type: 'string', contentMediaType: t }])),
      },
      404: { description: 'Not an attachment of this ticket of the tenant' },
    },
    async handler(ctx) {
      const { id, attachmentId } = ctx.state.params;
      const a = await openAttachment(ctx.state.scope!, storageOf(ctx), id, attachmentId);
      ctx.type = a.mime_type;
      ctx.length = a.size_bytes;
      ctx.set('Content-Disposition', contentDisposition(a.file_name));
      // a stored file is never a page of this origin
      ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
      ctx.body = a.file.stream;
    },
  }),
  webRoute<{ id: number }, Record<string, never>, CheckInInput>({
    ...base,
    method: 'post',
    path: '/api/tickets/:id/check-ins',
    permission: 'tickets.update',
    params: idParams,
    body: ticketCheckInBody,
    summary: 'Record a field check-in (latitude, longitude in degrees; accuracy in metres; note)',
    responses: { 201: { description: 'The new check-in', schema: dataOf(ticketCheckInRead) }, ...notFound },
    async handler(ctx) {
      const data = await addCheckIn(ctx.state.scope!, actorOf(ctx), ctx.state.params.id, ctx.state.body);
      ctx.status = 201;
      ctx.body = { data };
    },
  }),
];
