import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { TenantScope } from '../../db/tenant-scope.js';
import {
  Ticket,
  TicketAttachment,
  TicketCheckIn,
  TicketComment,
  type TicketCommentKind,
} from '../../db/models/index.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import type { GetResult, Storage } from '../../lib/storage/index.js';
import { recordAudit } from '../audit-logs/service.js';
import { NotFound, ValidationFailed } from '../errors.js';
import { iso } from '../shared/schemas.js';
import { ticketById, type Actor } from './service.js';

/**
 * The append-only work record of a ticket (issue 8 item 6): comments and notes, attachments (files
 * in the storage driver) and field check-ins; rows are only inserted, every insert audited in its
 * transaction. The admin detail shows the record and `resolution_requirements`, which the later
 * resolve-all (document 2 "Tickets": "ticket meets processing and handling-documentation
 * requirements") and the technician portal use.
 */

/** Largest attachment: 10 MB = 10 × 1024 × 1024 bytes (issue 8 item 6). */
export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;

/** Attachment types, decided from the content (magic bytes): JPG, PNG, WEBP, PDF (issue 8 item 6). */
export const ATTACHMENT_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'application/pdf'] as const;

/** Extensions that name each accepted type (the first is the one a download name gets). */
const EXTENSIONS: Record<string, string[]> = {
  'image/jpeg': ['jpg', 'jpeg'],
  'image/png': ['png'],
  'image/webp': ['webp'],
  'application/pdf': ['pdf'],
};

/** What resolve-all needs of a ticket (decision in docs/decisions.md, issue 8 item 6). */
export interface ResolutionRequirements {
  /** Somebody started working on it: responded_at is set (PATCH to inprogress sets it). */
  processed: boolean;
  /** At least one comment, note, attachment or check-in. */
  documented: boolean;
  /** processed && documented. */
  met: boolean;
}

/** Body of POST /api/tickets/{id}/comments after validation (kind defaulted to comment). */
export interface CommentInput {
  body: string;
  kind?: TicketCommentKind;
}

/** Body of POST /api/tickets/{id}/check-ins after validation: degrees, degrees, metres. */
export interface CheckInInput {
  latitude: number;
  longitude: number;
  accuracy: number;
  note?: string | null;
}

/**
 * Receives the upload of one file: calls `store` with the file stream and the client's file name
 * while the request arrives, and `discard` when the request turns out bad after `store` succeeded
 * (api/http/multipart.ts receiveFile, bound to the request by the route).
 */
export type ReceiveUpload = <T>(
  store: (file: Readable, filename: string | null) => Promise<T>,
  discard: (stored: T) => Promise<void>,
) => Promise<T>;

/** Options of the work-record writes. */
export interface WorkOptions {
  /** Time source of created_at (default the system clock). */
  clock?: Clock;
}

type UserRow = { user_id: number | null; u_name?: string | null };
const userOf = (r: UserRow) => (r.user_id && r.u_name != null ? { id: r.user_id, name: r.u_name } : null);

function commentShape(r: TicketComment & UserRow) {
  return { id: r.id, kind: r.kind, body: r.body, user: userOf(r), created_at: iso(r.created_at) };
}

function attachmentShape(r: TicketAttachment & UserRow) {
  return {
    id: r.id,
    file_name: r.file_name,
    mime_type: r.mime_type,
    size_bytes: Number(r.size_bytes),
    sha256: r.sha256,
    download_url: `/api/tickets/${r.ticket_id}/attachments/${r.id}`,
    user: userOf(r),
    created_at: iso(r.created_at),
  };
}

function checkInShape(r: TicketCheckIn & UserRow) {
  return {
    id: r.id,
    latitude: Number(r.latitude),
    longitude: Number(r.longitude),
    accuracy: Number(r.accuracy),
    note: r.note,
    user: userOf(r),
    created_at: iso(r.created_at),
  };
}

/** Checks that `id` is a ticket of the scope's tenant. @throws NotFound */
async function ticketOf(s: TenantScope, id: number): Promise<void> {
  if (!(await s.query(Ticket).findById(id).select('id'))) throw new NotFound('Ticket');
}

/** Rows of a work-record table for one ticket, oldest first, with the author's name. */
function entriesOf<M extends TicketComment | TicketAttachment | TicketCheckIn>(
  scope: TenantScope,
  model: typeof TicketComment | typeof TicketAttachment | typeof TicketCheckIn,
  ticketId: number,
) {
  return scope
    .query(model as typeof TicketComment, { alias: 'w' })
    .leftJoin('users as u', 'u.id', 'w.user_id')
    .where('w.ticket_id', ticketId)
    .select('w.*', 'u.name as u_name')
    .orderBy([
      { column: 'w.created_at', order: 'asc' },
      { column: 'w.id', order: 'asc' },
    ])
    .castTo<(M & UserRow)[]>();
}

/**
 * resolution_requirements of a ticket from its responded_at and the sizes of its work record.
 * @param respondedAt tickets.responded_at
 * @param entries how many comments, notes, attachments and check-ins it has
 */
export function resolutionRequirements(respondedAt: Date | string | null, entries: number): ResolutionRequirements {
  const processed = respondedAt !== null && respondedAt !== undefined;
  const documented = entries > 0;
  return { processed, documented, met: processed && documented };
}

/**
 * GET /api/tickets/{id}: the ticket read shape (document 1) + `comments`, `attachments` (metadata)
 * and `check_ins`, each oldest first, and `resolution_requirements`.
 * @throws NotFound when the id is not a ticket of the scope's tenant
 */
export async function ticketDetail(scope: TenantScope, id: number) {
  const ticket = await ticketById(scope, id);
  const [comments, attachments, checkIns] = await Promise.all([
    entriesOf<TicketComment>(scope, TicketComment, id),
    entriesOf<TicketAttachment>(scope, TicketAttachment, id),
    entriesOf<TicketCheckIn>(scope, TicketCheckIn, id),
  ]);
  const entries = comments.length + attachments.length + checkIns.length;
  return {
    ...ticket,
    comments: comments.map(commentShape),
    attachments: attachments.map(attachmentShape),
    check_ins: checkIns.map(checkInShape),
    resolution_requirements: resolutionRequirements(ticket.responded_at, entries),
  };
}

/** A one-entry read with the author's name (after an insert). */
async function entryById<M extends TicketComment | TicketAttachment | TicketCheckIn>(
  scope: TenantScope,
  model: typeof TicketComment | typeof TicketAttachment | typeof TicketCheckIn,
  ticketId: number,
  id: number,
): Promise<M & UserRow> {
  const [row] = await entriesOf<M>(scope, model, ticketId).where('w.id', id);
  return row;
}

/**
 * POST /api/tickets/{id}/comments: appends a comment (part of the conversation) or a note (internal),
 * audited as `tickets.comment_added`. Allowed in every status (the record is history).
 * @returns the new entry's read shape
 * @throws NotFound for a ticket outside the tenant; ValidationFailed for a blank body
 */
export async function addComment(
  scope: TenantScope,
  actor: Actor,
  ticketId: number,
  input: CommentInput,
  opts: WorkOptions = {},
) {
  const body = input.body.trim();
  if (!body) throw new ValidationFailed({ body: ['The body field must not be blank.'] });
  const kind = input.kind ?? 'comment';
  const id = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await ticketOf(s, ticketId);
    const row = await s.create(
      TicketComment,
      { ticket_id: ticketId, user_id: actor.userId, kind, body, created_at: (opts.clock ?? systemClock).now() },
      trx,
    );
    await recordAudit(s, {
      userId: actor.userId,
      action: 'tickets.comment_added',
      subject: { type: 'tickets', id: ticketId },
      after: { comment_id: row.id, kind },
      ip: actor.ip ?? null,
    });
    return row.id;
  });
  return commentShape(await entryById<TicketComment>(scope, TicketComment, ticketId, id));
}

/**
 * POST /api/tickets/{id}/check-ins: appends a field check-in (WGS 84 degrees, accuracy in metres; any
 * accuracy is kept and shown, none refused), audited as `tickets.checked_in`.
 * @returns the new entry's read shape
 * @throws NotFound for a ticket outside the tenant
 */
export async function addCheckIn(
  scope: TenantScope,
  actor: Actor,
  ticketId: number,
  input: CheckInInput,
  opts: WorkOptions = {},
) {
  const id = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    await ticketOf(s, ticketId);
    const row = await s.create(
      TicketCheckIn,
      {
        ticket_id: ticketId,
        user_id: actor.userId,
        latitude: input.latitude,
        longitude: input.longitude,
        accuracy: input.accuracy,
        note: input.note?.trim() || null,
        created_at: (opts.clock ?? systemClock).now(),
      },
      trx,
    );
    await recordAudit(s, {
      userId: actor.userId,
      action: 'tickets.checked_in',
      subject: { type: 'tickets', id: ticketId },
      after: { check_in_id: row.id, accuracy: input.accuracy },
      ip: actor.ip ?? null,
    });
    return row.id;
  });
  return checkInShape(await entryById<TicketCheckIn>(scope, TicketCheckIn, ticketId, id));
}

/**
 * The name a stored attachment is downloaded as: the client's base name without control characters
 * (at most 200 characters), with the extension of the detected type when the client's extension
 * does not name that type (`report.png` holding a PDF becomes `report.png.pdf`); `attachment.<ext>`
 * when the client sent none.
 * @param mime the type detected from the content
 */
export function attachmentName(clientName: string | null, mime: string): string {
  const exts = EXTENSIONS[mime] ?? ['bin'];
  const base = path.posix
    .basename((clientName ?? '').replace(/\\/g, '/'))
    .split('')
    .filter((ch) => ch > '\u001f' && ch !== '\u007f')
    .join('')
    .trim()
    .slice(0, 200);
  if (!base || base === '.' || base === '..') return `attachment.${exts[0]}`;
  const ext = base.includes('.') ? base.slice(base.lastIndexOf('.') + 1).toLowerCase() : '';
  return exts.includes(ext) ? base : `${base}.${exts[0]}`;
}

/**
 * POST /api/tickets/{id}/attachments: streams one file into storage (type by content: JPG, PNG,
 * WEBP, PDF; at most ATTACHMENT_MAX_BYTES, enforced while streaming), then records its metadata and
 * the audit entry `tickets.attachment_added` in one transaction. A refused or failed write leaves
 * no row; a row that cannot be written removes the stored file again.
 * The key is `tenants/<tenant>/tickets/<ticket>/<uuid>` (no client text in it).
 * @param receive reads the upload (the route binds api/http/multipart.ts receiveFile to the request)
 * @returns the attachment's read shape
 * @throws NotFound for a ticket outside the tenant (before the body is read); the storage driver's
 *   StorageTypeError (415) and StorageLimitError (413); ValidationFailed from `receive`
 */
export async function addAttachment(
  scope: TenantScope,
  storage: Storage,
  actor: Actor,
  ticketId: number,
  receive: ReceiveUpload,
  opts: WorkOptions = {},
) {
  await ticketOf(scope, ticketId);
  const key = `tenants/${scope.tenantId}/tickets/${ticketId}/${randomUUID()}`;
  const stored = await receive(
    async (file, filename) => {
      const put = await storage.put(key, file, { maxBytes: ATTACHMENT_MAX_BYTES, allowedTypes: ATTACHMENT_TYPES });
      return { ...put, file_name: attachmentName(filename, put.mime) };
    },
    (put) => storage.delete(put.key),
  );
  let id: number;
  try {
    id = await scope.knex.transaction(async (trx) => {
      const s = scope.withTransaction(trx);
      await ticketOf(s, ticketId);
      const row = await s.create(
        TicketAttachment,
        {
          ticket_id: ticketId,
          user_id: actor.userId,
          file_name: stored.file_name,
          mime_type: stored.mime,
          size_bytes: stored.size,
          sha256: stored.sha256,
          storage_key: stored.key,
          created_at: (opts.clock ?? systemClock).now(),
        },
        trx,
      );
      await recordAudit(s, {
        userId: actor.userId,
        action: 'tickets.attachment_added',
        subject: { type: 'tickets', id: ticketId },
        after: {
          attachment_id: row.id,
          file_name: stored.file_name,
          mime_type: stored.mime,
          size_bytes: stored.size,
          sha256: stored.sha256,
        },
        ip: actor.ip ?? null,
      });
      return row.id;
    });
  } catch (e) {
    await storage.delete(stored.key).catch(() => undefined);
    throw e;
  }
  return attachmentShape(await entryById<TicketAttachment>(scope, TicketAttachment, ticketId, id));
}

/**
 * GET /api/tickets/{id}/attachments/{attachmentId}: the attachment's metadata and its content as a
 * stream (the caller must read it to the end or destroy it).
 * @throws NotFound when the ticket or the attachment is not of the tenant, or the attachment belongs
 *   to another ticket; StorageNotFoundError (404) when the file is gone from storage
 */
export async function openAttachment(
  scope: TenantScope,
  storage: Storage,
  ticketId: number,
  attachmentId: number,
): Promise<{ file_name: string; mime_type: string; size_bytes: number; file: GetResult }> {
  const row = await scope
    .query(TicketAttachment)
    .findById(attachmentId)
    .where('ticket_id', ticketId)
    .select('file_name', 'mime_type', 'size_bytes', 'storage_key');
  if (!row) throw new NotFound('Attachment');
  const file = await storage.get(row.storage_key);
  return { file_name: row.file_name, mime_type: row.mime_type, size_bytes: Number(row.size_bytes), file };
}
