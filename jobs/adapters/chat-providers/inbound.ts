import type { ProviderName } from './types.js';

/**
 * What a provider's webhook says, read by the adapters' pure `parseInbound(body)` (issue 11 item 1;
 * document 2 "Chat bot": `POST /api/wabot/inbound/{tenant_slug}`). A parser receives the parsed
 * JSON or form body and returns null when the body is not its provider's shape, else the items it
 * carries (possibly none): incoming messages, delivery receipts of our own messages, a Messenger
 * read watermark, or something deliberately ignored (another event kind, an echo). Parsers never
 * throw, never log, and keep everything as the provider wrote it; the inbound service normalises
 * phones, matches customers and stores. Fixtures of each shape: test/fixtures/wabot/.
 */

/** A message someone wrote to (or, fromMe, from) the account. */
export interface InboundMessage {
  kind: 'message';
  /** the provider's id of the message; null when the payload carries none */
  messageId: string | null;
  /** the chat: the sender's phone as written, a group id, or a Messenger PSID */
  chat: string;
  chatKind: 'phone' | 'group' | 'conversation';
  /** in a group: the member who wrote (phone as written), else null */
  member: string | null;
  /** the sender's display name when given (push name, profile name) */
  senderName: string | null;
  /** the text, or `[<type>]` for a message without text (image, sticker, ...) */
  text: string;
  /** the account's own message (sent from its phone or echoed): never stored */
  fromMe: boolean;
  /** when the provider says it was sent, null without a time */
  at: Date | null;
  /** identifies the receiving account when the payload says so (device number, page id, session) */
  accountRef: string | null;
}

/** A delivery report of a message the account sent. */
export interface InboundReceipt {
  kind: 'receipt';
  messageId: string;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  at: Date | null;
  /** the provider's reason of a failure, else null */
  error: string | null;
  accountRef: string | null;
}

/** Messenger's `read`: every message to `chat` sent before the watermark was read. */
export interface InboundReadWatermark {
  kind: 'read_watermark';
  chat: string;
  watermark: Date;
  accountRef: string | null;
}

/** Something recognised and deliberately dropped (another event kind, an echo). */
export interface InboundIgnored {
  kind: 'ignored';
  reason: string;
}

/** One item of a webhook call. */
export type InboundItem = InboundMessage | InboundReceipt | InboundReadWatermark | InboundIgnored;

/**
 * A provider's webhook reader: the items of a body of its shape, or null when the body is not its
 * shape. Pure.
 */
export type InboundParser = (body: Record<string, unknown>) => InboundItem[] | null;

/** Which provider read a body, and what it found. */
export interface InboundParse {
  provider: ProviderName;
  items: InboundItem[];
}

/** Largest text kept of one message, in characters (a webhook body is at most 1 MB anyway). */
export const INBOUND_TEXT_MAX = 8000;

/** A plain object, or null. */
export function obj(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** A non-empty trimmed string of a string or finite number, else null. */
export function str(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return null;
  const s = v.trim();
  return s === '' ? null : s;
}

/** true for true, 1, '1', 'true', 'yes' (any case); false otherwise. Form bodies carry strings. */
export function flag(v: unknown): boolean {
  if (v === true || v === 1) return true;
  return typeof v === 'string' && /^(1|true|yes)$/i.test(v.trim());
}

/** The text of a message, cut at INBOUND_TEXT_MAX; `[<type>]` when it has none. */
export function textOf(v: unknown, type?: unknown): string {
  const s = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
  if (s.trim() !== '') return s.slice(0, INBOUND_TEXT_MAX);
  const t = str(type);
  return `[${t && /^[A-Za-z_.-]{1,40}$/.test(t) ? t : 'message'}]`;
}

/**
 * A time of a webhook: Unix seconds, Unix milliseconds (> 10^11), a numeric string of either, or
 * an ISO 8601 text; null when absent or unreadable.
 */
export function timeOf(v: unknown): Date | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{9,14}$/.test(v.trim()) ? Number(v) : NaN;
  if (Number.isFinite(n) && n > 0) {
    const d = new Date(n > 1e11 ? n : n * 1000);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(v.trim())) {
    const d = new Date(v.trim().replace(' ', 'T'));
    return Number.isNaN(d.getTime()) ? null : d;
  }
  return null;
}

/** WhatsApp jids: `<digits>@c.us` / `@s.whatsapp.net` are people, `<id>@g.us` groups. */
export function isGroupJid(v: string): boolean {
  return /@g\.us$/i.test(v);
}

/** A person's jid without its server part (`6281...@c.us` -> `6281...`; `628..:2@s.whatsapp.net` too). */
export function jidUser(v: string): string {
  const m = /^([^@:]+)(?::\d+)?@(c\.us|s\.whatsapp\.net)$/i.exec(v);
  return m ? m[1] : v;
}

/** A chat field as a message's chat and kind: groups by their jid (or the group flag), else a phone. */
export function chatOf(raw: string, group: boolean): { chat: string; chatKind: 'phone' | 'group' } {
  if (group || isGroupJid(raw)) return { chat: raw, chatKind: 'group' };
  return { chat: jidUser(raw), chatKind: 'phone' };
}

/**
 * A receipt status of a provider's word: read/played -> read, deliver -> delivered,
 * fail/reject/cancel/invalid/error -> failed, sent/server/success -> sent; else null (pending,
 * unknown: nothing to record).
 */
export function receiptStatus(v: unknown): InboundReceipt['status'] | null {
  const s = str(v)?.toLowerCase() ?? '';
  if (/read|play/.test(s)) return 'read';
  if (/deliver/.test(s)) return 'delivered';
  if (/fail|reject|cancel|invalid|error/.test(s)) return 'failed';
  if (/sent|server|success/.test(s)) return 'sent';
  return null;
}
