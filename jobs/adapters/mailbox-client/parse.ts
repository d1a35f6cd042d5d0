import type { AddressObject } from 'mailparser';
import type * as Mailparser from 'mailparser';
import { lazyRequire } from '../../../lib/lazy-require.js';
import type { FetchMessageObject, MessageAddressObject } from 'imapflow';
import type { EmailDetail, EmailSummary } from './types.js';

const mailparser = lazyRequire<typeof Mailparser>('mailparser');

/**
 * Pure parsing and header-building helpers of the mailbox client: summaries from IMAP envelopes,
 * details from the raw source (mailparser), and the reply threading rules of RFC 5322 §3.6.4.
 */

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * Formats a date as an RFC 2822 date-time in UTC, e.g. `Sat, 21 Nov 2026 10:04:05 +0000`; '' when invalid or
 * missing.
 */
export function formatRfc2822(d: Date | string | undefined | null): string {
  const date = d instanceof Date ? d : d ? new Date(d) : null;
  if (!date || Number.isNaN(date.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return (
    `${DAYS[date.getUTCDay()]}, ${p(date.getUTCDate())} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()} ` +
    `${p(date.getUTCHours())}:${p(date.getUTCMinutes())}:${p(date.getUTCSeconds())} +0000`
  );
}

/** One address as `Name <addr>` (name quoted when it holds specials), or the bare address. */
export function formatAddress(a: { name?: string; address?: string }): string {
  const addr = a.address ?? '';
  const name = (a.name ?? '').trim();
  if (!name || name === addr) return addr;
  const shown = /[()<>[\]:;@\\,."]/.test(name) ? `"${name.replace(/(["\\])/g, '\\$1')}"` : name;
  return addr ? `${shown} <${addr}>` : shown;
}

/** An address list as one comma-separated string. */
export function formatAddressList(list: MessageAddressObject[] | undefined): string {
  return (list ?? []).map(formatAddress).join(', ');
}

/** Maps an envelope fetch (uid, envelope, flags) to the document's e-mail summary. */
export function toSummary(m: FetchMessageObject): EmailSummary {
  const env = m.envelope ?? {};
  return {
    id: String(m.uid),
    from: formatAddressList(env.from),
    to: formatAddressList(env.to),
    subject: env.subject ?? '',
    date: formatRfc2822(env.date ?? m.internalDate),
    message_id: env.messageId ?? '',
    seen: m.flags?.has('\\Seen') ?? false,
  };
}

function addressText(v: AddressObject | AddressObject[] | undefined): string {
  return ([] as AddressObject[])
    .concat(v ?? [])
    .flatMap((o) => o.value)
    .map((a) => formatAddress({ name: a.name, address: a.address }))
    .join(', ');
}

/** The message-ids of a References / In-Reply-To value, in order (`<...>` tokens). */
export function messageIds(v: string | string[] | undefined | null): string[] {
  return (
    ([] as string[])
      .concat(v ?? [])
      .join(' ')
      .match(/<[^<>\s]+>/g) ?? []
  );
}

/**
 * Parses a raw RFC 5322 message into the document's e-mail detail (plus parsed text, html, to,
 * cc, date and attachment metadata). `body_raw` is the source as received (decoded as UTF-8).
 */
export async function toDetail(uid: number | string, source: Buffer): Promise<EmailDetail> {
  const p = await mailparser().simpleParser(source, {
    keepCidLinks: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
  });
  return {
    id: String(uid),
    from: addressText(p.from),
    to: addressText(p.to),
    cc: addressText(p.cc),
    subject: p.subject ?? '',
    date: p.headers.has('date') ? formatRfc2822(p.date) : '',
    message_id: p.messageId ?? '',
    references: messageIds(p.references).join(' '),
    in_reply_to: p.inReplyTo ?? '',
    reply_to: addressText(p.replyTo),
    body_raw: source.toString('utf8'),
    text: p.text ?? null,
    html: p.html || null,
    attachments: p.attachments.map((a) => ({
      filename: a.filename ?? null,
      content_type: a.contentType,
      size: a.size ?? a.content?.length ?? 0,
      content_id: a.cid ?? null,
    })),
  };
}

/** What a reply needs from the original message's headers. */
export interface ReplyOriginal {
  from: { name: string; address: string }[];
  replyTo: { name: string; address: string }[];
  subject: string;
  messageId: string;
  references: string[];
  inReplyTo: string[];
}

/** Reads the header fields a reply needs from a raw header block (or full source). */
export async function parseReplyOriginal(headers: Buffer): Promise<ReplyOriginal> {
  const p = await mailparser().simpleParser(headers, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
    keepCidLinks: true,
  });
  const addrs = (o: AddressObject | undefined) =>
    (o?.value ?? [])
      .flatMap((a) => a.group ?? [a])
      .filter((a) => a.address)
      .map((a) => ({ name: a.name, address: a.address! }));
  return {
    from: addrs(p.from),
    replyTo: addrs(p.replyTo),
    subject: p.subject ?? '',
    messageId: messageIds(p.messageId)[0] ?? '',
    references: messageIds(p.references),
    inReplyTo: messageIds(p.inReplyTo),
  };
}

/**
 * `Re: <subject>` without stacking: leading reply prefixes (`Re:`, `RE:`, `re :`, `Re[2]:`,
 * `Re(3):`, repeated) are removed before one `Re: ` is put in front.
 */
export function replySubject(subject: string): string {
  const stripped = (subject ?? '').replace(/^(\s*re\s*(\[\d+\]|\(\d+\))?\s*:\s*)+/i, '');
  return `Re: ${stripped}`.trimEnd();
}

/**
 * Threading headers of a reply (RFC 5322 §3.6.4): In-Reply-To = the parent's Message-ID;
 * References = the parent's References followed by its Message-ID, or, when the parent has no
 * References but a single-id In-Reply-To, that id followed by the Message-ID. Without a parent
 * Message-ID there is no In-Reply-To, and References is the parent's own (if any).
 */
export function threadHeaders(o: Pick<ReplyOriginal, 'messageId' | 'references' | 'inReplyTo'>): {
  inReplyTo: string | null;
  references: string[];
} {
  const base = o.references.length ? o.references : o.inReplyTo.length === 1 ? o.inReplyTo : [];
  const references = o.messageId ? [...base, o.messageId] : [...base];
  return { inReplyTo: o.messageId || null, references };
}

/** Where a reply goes: Reply-To when present, else From. */
export function replyRecipients(o: Pick<ReplyOriginal, 'from' | 'replyTo'>): { name: string; address: string }[] {
  return o.replyTo.length ? o.replyTo : o.from;
}
