import crypto from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import type { MailParser, AddressObject, StreamAttachment, StreamText } from 'mailparser';
import type * as Mailparser from 'mailparser';
import { lazyRequire } from '../../lib/lazy-require.js';
import type { Knex } from 'knex';
import { TenantScope } from '../../db/tenant-scope.js';
import { CommunicationAttachment, CommunicationMessage } from '../../db/models/index.js';
import { StorageLimitError, type Storage } from '../../lib/storage/index.js';
import { formatAddress, messageIds } from '../adapters/mailbox-client/parse.js';
import { sanitizeEmailHtml } from './sanitize.js';

const mailparser = lazyRequire<typeof Mailparser>('mailparser');

/**
 * Storing one received e-mail into the inbox (issue 9 items 3, 4): the raw message is streamed
 * through mailparser's MailParser (never buffered whole), attachments are streamed to the storage
 * driver (type by magic bytes; over ATTACHMENT_MAX_BYTES metadata only), the HTML body is
 * sanitised, the sender matched to a customer, and the row inserted idempotently: the unique
 * indexes on (account, external_key) and (account, Message-ID) make a second import a no-op
 * (its stored files are removed again).
 */

/** Largest attachment kept, in bytes (25 MB); a larger one is recorded as metadata only. */
export const ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024;
/** Longest text body kept, in characters (the rest is cut). */
const MAX_TEXT = 1_000_000;

/** Where a message comes from. */
export interface InboundMeta {
  tenantId: number;
  /** the account's address, lower case (communication_messages.account_ref) */
  accountRef: string;
  source: 'imap' | 'pop3';
  /** `imap:<uidvalidity>:<uid>` or `pop3:<uidl>` */
  externalKey: string;
  /** the server's arrival time (IMAP INTERNALDATE), else the Date header, else now */
  receivedAt: Date | null;
  now: Date;
}

/** What storing one message did. */
export interface StoreResult {
  /** imported: a new row; duplicate: the keys were already there (a tombstone counts) */
  outcome: 'imported' | 'duplicate';
  id: number | null;
}

/** The first address of a parsed address header. */
function firstAddress(v: AddressObject | AddressObject[] | undefined) {
  const list = ([] as AddressObject[]).concat(v ?? []).flatMap((o) => o.value.flatMap((a) => a.group ?? [a]));
  const a = list.find((x) => x.address);
  return a ? { address: a.address!.toLowerCase(), name: a.name || null } : null;
}

/** An address header as one string. */
function addressText(v: AddressObject | AddressObject[] | undefined): string | null {
  const s = ([] as AddressObject[])
    .concat(v ?? [])
    .flatMap((o) => o.value)
    .map((a) => formatAddress({ name: a.name, address: a.address }))
    .join(', ');
  return s || null;
}

/** A short plain-text preview (whitespace collapsed, 200 characters). */
export function snippetOf(text: string | null | undefined): string | null {
  const s = (text ?? '').replace(/\s+/g, ' ').trim();
  return s ? s.slice(0, 200) : null;
}

/** Stored attachment, before its row exists. */
interface Stored {
  filename: string | null;
  declared: string;
  contentId: string | null;
  size: number;
  key: string | null;
  mime: string;
  sha256: string | null;
}

/**
 * Streams one attachment to storage, counting its size; over the limit (or when no storage is
 * configured) it is drained and kept as metadata only.
 */
async function storeAttachment(storage: Storage | undefined, tenantId: number, a: StreamAttachment): Promise<Stored> {
  let size = 0;
  let key: string | null = storage ? `tenants/${tenantId}/communications/${crypto.randomUUID()}` : null;
  const sink = new PassThrough();
  const putting = storage && key ? storage.put(key, sink, { maxBytes: ATTACHMENT_MAX_BYTES }) : null;
  const settled = putting?.then(
    (r) => ({ ok: r }) as const,
    (e: unknown) => ({ err: e }) as const,
  );
  for await (const chunk of a.content) {
    size += chunk.length;
    if (putting && !sink.destroyed && !sink.writableEnded) {
      if (!sink.write(chunk)) {
        await Promise.race([
          new Promise((r) => sink.once('drain', r)),
          new Promise((r) => sink.once('close', r)),
          settled,
        ]);
      }
    }
  }
  sink.end();
  const res = settled ? await settled : null;
  let mime = a.contentType || 'application/octet-stream';
  let sha256: string | null = null;
  if (res && 'ok' in res) {
    mime = res.ok.mime;
    sha256 = res.ok.sha256;
  } else {
    if (res && !(res.err instanceof StorageLimitError)) throw res.err;
    key = null;
  }
  return {
    filename: a.filename ?? null,
    declared: a.contentType,
    contentId: a.cid ?? null,
    size,
    key,
    mime,
    sha256,
  };
}

/** Parsed message: headers, bodies and stored attachments. */
interface Parsed {
  parser: MailParser;
  text: string | null;
  html: string | null;
  attachments: Stored[];
}

/** Runs the streaming parser over the source. Attachments are stored as they arrive. */
function parse(source: Readable, storage: Storage | undefined, tenantId: number): Promise<Parsed> {
  return new Promise((resolve, reject) => {
    const parser = new (mailparser().MailParser)({ keepCidLinks: true, skipImageLinks: true, skipTextLinks: true });
    const out: Parsed = { parser, text: null, html: null, attachments: [] };
    const pending: Promise<void>[] = [];
    let failed = false;
    const fail = (e: unknown) => {
      if (failed) return;
      failed = true;
      source.unpipe(parser);
      reject(e);
    };
    parser.on('data', (d: StreamAttachment | StreamText) => {
      if (d.type === 'attachment') {
        pending.push(
          storeAttachment(storage, tenantId, d).then(
            (s) => {
              out.attachments.push(s);
              d.release();
            },
            (e) => {
              d.release();
              fail(e);
            },
          ),
        );
      } else {
        out.text = d.text ?? null;
        out.html = d.html ?? null;
      }
    });
    parser.on('error', fail);
    source.on('error', fail);
    parser.on('end', () => {
      Promise.all(pending).then(() => !failed && resolve(out), fail);
    });
    source.pipe(parser);
  });
}

/**
 * The customer whose e-mail is exactly the sender's (case-insensitive), when exactly one matches.
 */
async function matchCustomer(scope: TenantScope, address: string | null): Promise<number | null> {
  if (!address) return null;
  const rows = await scope.table('customers').whereRaw('lower(email) = ?', [address]).limit(2).select('id');
  return rows.length === 1 ? (rows[0].id as number) : null;
}

/** Removes stored files of a message that was not inserted (best effort). */
async function dropFiles(storage: Storage | undefined, files: Stored[]) {
  for (const f of files) if (f.key && storage) await storage.delete(f.key).catch(() => undefined);
}

/**
 * Parses and stores one received e-mail (see the module comment).
 * @param knex the process knex
 * @param storage the storage driver (absent: attachments metadata only)
 * @param source the raw RFC 5322 message as a stream (read to the end)
 * @param meta the account, key and arrival time
 * @param parseFallback called when the message cannot be parsed: returns its raw text (bounded), kept text-only
 *   with error_code parse_error
 * @returns imported (new row id) or duplicate
 */
export async function storeInbound(
  knex: Knex,
  storage: Storage | undefined,
  source: Readable,
  meta: InboundMeta,
  parseFallback: () => Promise<string>,
): Promise<StoreResult> {
  const scope = new TenantScope(knex, meta.tenantId);
  let parsed: Parsed | null = null;
  let parseError: string | null = null;
  try {
    parsed = await parse(source, storage, meta.tenantId);
  } catch (e) {
    source.destroy();
    parseError = (e as Error).message?.slice(0, 300) || 'unparseable message';
  }
  const p = parsed?.parser;
  const from = firstAddress(p?.from);
  const text = parsed ? (parsed.text ?? null) : (await parseFallback()).slice(0, MAX_TEXT);
  const messageId = messageIds(p?.messageId)[0] ?? null;
  const files = parsed?.attachments ?? [];
  const row = {
    channel: 'email' as const,
    direction: 'in' as const,
    status: 'received' as const,
    source: meta.source,
    account_ref: meta.accountRef,
    customer_id: await matchCustomer(scope, from?.address ?? null),
    counterpart: from?.address ?? null,
    is_group: false,
    from_address: from?.address ?? null,
    from_name: from?.name ?? null,
    to_addresses: addressText(p?.to),
    cc_addresses: addressText(p?.cc),
    reply_to_address: firstAddress(p?.replyTo)?.address ?? null,
    subject: p?.subject ?? null,
    snippet: snippetOf(text),
    body_text: text ? text.slice(0, MAX_TEXT) : null,
    body_html: parsed?.html ? sanitizeEmailHtml(parsed.html) : null,
    message_id: messageId,
    in_reply_to: messageIds(p?.inReplyTo).join(' ') || null,
    references: messageIds(p?.references).join(' ') || null,
    external_key: meta.externalKey,
    error_code: parseError ? 'parse_error' : null,
    error_message: parseError,
    occurred_at: meta.receivedAt ?? p?.date ?? meta.now,
    received_at: meta.now,
    created_at: meta.now,
    updated_at: meta.now,
  };
  const id = await knex.transaction(async (trx) => {
    const inserted = await trx('communication_messages')
      .insert({ ...row, tenant_id: meta.tenantId })
      .onConflict()
      .ignore()
      .returning('id');
    if (!inserted.length) return null;
    const messageRowId = Number(inserted[0].id);
    if (files.length) {
      await CommunicationAttachment.query(trx).insert(
        files.map((f) => ({
          tenant_id: meta.tenantId,
          message_id: messageRowId,
          filename: f.filename,
          content_type: f.mime,
          declared_type: f.declared,
          size_bytes: f.size,
          content_id: f.contentId,
          sha256: f.sha256,
          storage_key: f.key,
          created_at: meta.now,
        })),
      );
    }
    return messageRowId;
  });
  if (id === null) {
    await dropFiles(storage, files);
    return { outcome: 'duplicate', id: null };
  }
  return { outcome: 'imported', id };
}

/**
 * Whether a message is already in the inbox of the account (alive or as a tombstone), by its
 * external key or its Message-ID: the sync skips it without downloading.
 */
export async function alreadyStored(
  knex: Knex,
  tenantId: number,
  accountRef: string,
  externalKey: string,
  messageId: string | null,
): Promise<boolean> {
  const q = new TenantScope(knex, tenantId)
    .query(CommunicationMessage)
    .where({ channel: 'email', account_ref: accountRef })
    .where((w) => {
      w.where('external_key', externalKey);
      if (messageId) w.orWhere((m) => m.where({ direction: 'in', message_id: messageId }));
    })
    .select('id')
    .first();
  return !!(await q);
}
