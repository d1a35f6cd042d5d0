import type { TenantScope } from '../../db/tenant-scope.js';
import { CommunicationAttachment, CommunicationMessage, type CommunicationChannel } from '../../db/models/index.js';
import type { Storage } from '../../lib/storage/index.js';
import { rewriteCidLinks } from '../../jobs/email/sanitize.js';
import { recordAudit } from '../audit-logs/service.js';
import { Forbidden, ModuleDisabled, NotFound } from '../errors.js';
import { paginate, whereContains, type PageParams } from '../shared/list.js';
import { iso } from '../shared/schemas.js';

/**
 * The inbox and outbox of every channel (issue 9 item 4; DESIGN.md §10 "communications"). A caller
 * sees the channels whose module is on and whose permission it holds: email (module email,
 * email.manage), whatsapp and messenger (module wabot, wabot.manage). Deleted rows are tombstones:
 * never listed or shown, kept so that no sync imports them again.
 */

/** Validated query of GET /api/communications. */
export interface CommunicationListQuery extends PageParams {
  channel?: CommunicationChannel;
  direction?: 'in' | 'out';
  status?: string;
  customer_id?: number;
  account_ref?: string;
  search?: string;
  date_from?: string;
  date_to?: string;
}

/** Who acts, for the audit log. */
export interface Actor {
  userId: number | null;
  ip?: string | null;
}

const CHANNEL_ACCESS: Record<CommunicationChannel, { module: string; permission: string }> = {
  email: { module: 'email', permission: 'email.manage' },
  whatsapp: { module: 'wabot', permission: 'wabot.manage' },
  messenger: { module: 'wabot', permission: 'wabot.manage' },
};

/**
 * The channels a caller may see.
 * @param permissions the login user's permissions
 * @param modules the tenant's modules switched on
 * @throws Forbidden (403 FORBIDDEN) when the caller holds neither email.manage nor wabot.manage;
 *   ModuleDisabled (403 module_disabled) when it does, but every such module is off
 */
export function allowedChannels(permissions: readonly string[], modules: readonly string[]): CommunicationChannel[] {
  const held = (Object.keys(CHANNEL_ACCESS) as CommunicationChannel[]).filter((c) =>
    permissions.includes(CHANNEL_ACCESS[c].permission),
  );
  if (!held.length) throw new Forbidden('Missing permission email.manage or wabot.manage.');
  const on = held.filter((c) => modules.includes(CHANNEL_ACCESS[c].module));
  if (!on.length) throw new ModuleDisabled(CHANNEL_ACCESS[held[0]].module);
  return on;
}

/** The URL of an attachment download. */
const attachmentUrl = (messageId: number, attachmentId: number) =>
  `/api/communications/${messageId}/attachments/${attachmentId}`;

/** List shape: no bodies. */
function summaryShape(r: CommunicationMessage, attachments?: number) {
  // list rows carry the attachment_count column of withAttachmentCount (a bigint count, as text)
  const count = attachments ?? Number((r as unknown as { attachment_count?: string }).attachment_count ?? 0);
  return {
    id: Number(r.id),
    channel: r.channel,
    direction: r.direction,
    status: r.status,
    source: r.source,
    account_ref: r.account_ref,
    customer_id: r.customer_id,
    counterpart: r.counterpart,
    is_group: r.is_group,
    from_address: r.from_address,
    from_name: r.from_name,
    to_addresses: r.to_addresses,
    subject: r.subject,
    snippet: r.snippet,
    has_attachments: count > 0,
    reply_to_id: r.reply_to_id == null ? null : Number(r.reply_to_id),
    resent_from_id: r.resent_from_id == null ? null : Number(r.resent_from_id),
    error_code: r.error_code,
    available_at: iso(r.available_at),
    occurred_at: iso(r.occurred_at)!,
    sent_at: iso(r.sent_at),
    deleted_at: iso(r.deleted_at),
  };
}

const SUMMARY_COLUMNS = [
  'm.id',
  'm.channel',
  'm.direction',
  'm.status',
  'm.source',
  'm.account_ref',
  'm.customer_id',
  'm.counterpart',
  'm.is_group',
  'm.from_address',
  'm.from_name',
  'm.to_addresses',
  'm.subject',
  'm.snippet',
  'm.reply_to_id',
  'm.resent_from_id',
  'm.error_code',
  'm.available_at',
  'm.occurred_at',
  'm.sent_at',
  'm.deleted_at',
];

/** Live (not deleted) messages `m` of the allowed channels. */
function live(scope: TenantScope, channels: CommunicationChannel[]) {
  return scope.query(CommunicationMessage, { alias: 'm' }).whereNull('m.deleted_at').whereIn('m.channel', channels);
}

/** The attachment count column of a summary. */
function withAttachmentCount(scope: TenantScope) {
  return scope.knex.raw(
    '(SELECT count(*) FROM communication_attachments a WHERE a.message_id = m.id AND a.tenant_id = m.tenant_id) AS attachment_count',
  );
}

/**
 * GET /api/communications: newest first (occurred_at, id), per_page 20; filters channel,
 * direction, status, customer_id, account_ref, search (subject, addresses, body text), date_from
 * and date_to (days in the tenant's zone, inclusive).
 * @returns the list envelope
 */
export async function listCommunications(
  scope: TenantScope,
  q: CommunicationListQuery,
  timeZone: string,
  channels: CommunicationChannel[],
) {
  const base = live(scope, q.channel ? channels.filter((c) => c === q.channel) : channels);
  if (q.direction) base.where('m.direction', q.direction);
  if (q.status) base.where('m.status', q.status);
  if (q.customer_id) base.where('m.customer_id', q.customer_id);
  if (q.account_ref) base.where('m.account_ref', q.account_ref.toLowerCase());
  whereContains(base, ['m.subject', 'm.from_address', 'm.from_name', 'm.to_addresses', 'm.body_text'], q.search);
  if (q.date_from) base.whereRaw(`m.occurred_at >= (?::date)::timestamp AT TIME ZONE ?`, [q.date_from, timeZone]);
  if (q.date_to) base.whereRaw(`m.occurred_at < ((?::date) + 1)::timestamp AT TIME ZONE ?`, [q.date_to, timeZone]);
  return paginate(
    base,
    [...SUMMARY_COLUMNS, withAttachmentCount(scope)] as string[],
    ['m.occurred_at', 'm.id'],
    q,
    (r) => summaryShape(r as CommunicationMessage),
  );
}

/** A live message of the allowed channels. @throws NotFound */
async function findLive(scope: TenantScope, id: number, channels: CommunicationChannel[]) {
  const row = await scope.query(CommunicationMessage).findById(id).whereNull('deleted_at');
  if (!row) throw new NotFound('Communication');
  if (!channels.includes(row.channel)) throw new Forbidden(`Missing permission for the ${row.channel} channel.`);
  return row;
}

/**
 * GET /api/communications/{id}: bodies (HTML sanitised, `cid:` images pointing at the attachment
 * URLs), headers, attachments and the replies to it.
 * @throws NotFound for a foreign, unknown or deleted id; Forbidden for a channel the caller may not see
 */
export async function communicationById(scope: TenantScope, id: number, channels: CommunicationChannel[]) {
  const row = await findLive(scope, id, channels);
  const attachments = await scope.query(CommunicationAttachment).where('message_id', id).orderBy('id');
  const replies = await live(scope, channels)
    .where('m.reply_to_id', id)
    .select([...SUMMARY_COLUMNS, withAttachmentCount(scope)] as string[])
    .orderBy([{ column: 'm.occurred_at' }, { column: 'm.id' }]);
  const byCid = new Map(attachments.filter((a) => a.content_id && a.storage_key).map((a) => [a.content_id!, a]));
  const html = row.body_html
    ? rewriteCidLinks(row.body_html, (cid) => {
        const a = byCid.get(cid);
        return a ? attachmentUrl(id, Number(a.id)) : null;
      })
    : null;
  return {
    ...summaryShape(row, attachments.length),
    cc_addresses: row.cc_addresses,
    reply_to_address: row.reply_to_address,
    body_text: row.body_text,
    body_html: html,
    message_id: row.message_id,
    in_reply_to: row.in_reply_to,
    references: row.references,
    error_message: row.error_message,
    received_at: iso(row.received_at),
    queued_at: iso(row.queued_at),
    send_started_at: iso(row.send_started_at),
    delivered_at: iso(row.delivered_at),
    read_at: iso(row.read_at),
    failed_at: iso(row.failed_at),
    attachments: attachments.map((a) => ({
      id: Number(a.id),
      filename: a.filename,
      content_type: a.content_type,
      size_bytes: Number(a.size_bytes),
      content_id: a.content_id,
      available: a.storage_key != null,
      url: a.storage_key ? attachmentUrl(id, Number(a.id)) : null,
    })),
    replies: replies.map((r) => summaryShape(r as CommunicationMessage)),
  };
}

/**
 * GET /api/communications/{id}/attachments/{attachment_id}: opens the stored file.
 * @returns the stream, its size, type and file name
 * @throws NotFound for a foreign or unknown id, a deleted message, or a file kept as metadata only
 */
export async function openCommunicationAttachment(
  scope: TenantScope,
  storage: Storage,
  id: number,
  attachmentId: number,
  channels: CommunicationChannel[],
) {
  await findLive(scope, id, channels);
  const a = await scope.query(CommunicationAttachment).findById(attachmentId).where('message_id', id);
  if (!a || !a.storage_key) throw new NotFound('Attachment');
  const file = await storage.get(a.storage_key);
  return { stream: file.stream, size: file.size, type: a.content_type, filename: a.filename || `attachment-${a.id}` };
}

/**
 * DELETE /api/communications/{id}: drops the local copy (bodies, snippet, attachment files) and keeps a
 * tombstone (deleted_at; external_key and Message-ID stay) so no sync imports it again; a deleted
 * `queued` message is never sent. Nothing changes on the mail server. Audited as `communications.deleted`.
 * @throws NotFound for a foreign, unknown or already deleted id; Forbidden for a channel the caller may not see
 */
export async function deleteCommunication(
  scope: TenantScope,
  storage: Storage | undefined,
  actor: Actor,
  id: number,
  channels: CommunicationChannel[],
) {
  const keys = await scope.knex.transaction(async (trx) => {
    const s = scope.withTransaction(trx);
    const row = await findLive(s, id, channels);
    const files = await s.query(CommunicationAttachment).where('message_id', id).whereNotNull('storage_key');
    const now = new Date();
    await s
      .query(CommunicationMessage)
      .findById(id)
      .patch({ body_text: null, body_html: null, snippet: null, deleted_at: now, updated_at: now });
    await s.query(CommunicationAttachment).where('message_id', id).patch({ storage_key: null });
    await recordAudit(s, {
      userId: actor.userId,
      action: 'communications.deleted',
      subject: { type: 'communication_messages', id },
      before: { channel: row.channel, direction: row.direction, status: row.status, subject: row.subject },
      after: { deleted: true },
      ip: actor.ip ?? null,
    });
    return files.map((f) => f.storage_key!);
  });
  if (storage) for (const k of keys) await storage.delete(k).catch(() => undefined);
  return { id, deleted: true };
}
