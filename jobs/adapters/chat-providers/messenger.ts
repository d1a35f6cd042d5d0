import { bodyObject, permanent, pick, rateLimited, shortText } from './classify.js';
import { flag, obj, str, textOf, timeOf as inboundTime, type InboundItem } from './inbound.js';
import type { Classification } from './types.js';
import { defineProvider, endpoint, present } from './define.js';
import type { ResponseOutcome } from './classify.js';

/**
 * Facebook Messenger (<provider_5>) through the Graph API Send API. Sources: Meta "Send API"
 * reference, https://developers.facebook.com/docs/messenger-platform/reference/send-api
 * (POST /{PAGE-ID}/messages with recipient {id: PSID}, messaging_type, message {text}; answer
 * `{recipient_id, message_id}`), and "Graph API error handling",
 * https://developers.facebook.com/docs/graph-api/guides/error-handling (`{error: {code,
 * error_subcode, message}}`; 190 token, 4/17/32/613 rate limits, 1/2 temporary).
 * - Credentials (spec): wa_token = page access token, wa_secret_key = page id, both required.
 *   The token travels as `Authorization: Bearer` (the Graph API accepts OAuth bearer tokens), so
 *   it never appears in a URL.
 * - Base URL (decision): fixed root https://graph.facebook.com/v21.0, replaced by a given one.
 * - Recipients: conversation (PSID) only. messaging_type RESPONSE (replies inside the 24 h window).
 * - Check: GET /{page-id}?fields=id,name.
 */
const RATE_CODES = new Set([4, 17, 32, 613, 80006]);
const TEMPORARY_CODES = new Set([1, 2]);
const RECIPIENT_CODES = new Set([551]);
const RECIPIENT_SUBCODES = new Set([2018001, 2018108, 1545041]);

function graphError(res: ResponseOutcome): Classification | null {
  const body = bodyObject(res);
  const err = body?.error && typeof body.error === 'object' ? (body.error as Record<string, unknown>) : null;
  if (!err) return null;
  const code = Number(err.code);
  const sub = Number(err.error_subcode);
  const detail = `messenger: ${shortText(err.message) || 'Graph API error'} (code ${code}${Number.isFinite(sub) ? `/${sub}` : ''})`;
  if (RATE_CODES.has(code)) return rateLimited(res, detail);
  if (TEMPORARY_CODES.has(code)) return { kind: 'ambiguous', detail };
  if (code === 190 || code === 102 || (err.type === 'OAuthException' && res.status === 401))
    return permanent('auth_failed', detail);
  if (RECIPIENT_CODES.has(code) || RECIPIENT_SUBCODES.has(sub)) return permanent('invalid_recipient', detail);
  if (code === 10 || code === 200 || code === 230 || code === 368) return permanent('provider_refused', detail);
  if (code === 100) return permanent('request_rejected', detail);
  if (res.status >= 500) return null;
  return permanent('provider_refused', detail);
}

export const messenger = defineProvider({
  name: 'messenger',
  baseUrlRule: 'replaceable',
  defaultBaseUrl: 'https://graph.facebook.com/v21.0',
  recipientKinds: ['conversation'],
  checkAccount: (a) =>
    present(a.token) && present(a.secret_key) ? null : 'messenger needs the page access token and the page id.',
  sendRequest: ({ account, root }, address, _kind, message) => ({
    method: 'POST',
    url: endpoint(root, `/${encodeURIComponent(account.secret_key!.trim())}/messages`),
    headers: { authorization: `Bearer ${account.token}` },
    json: { recipient: { id: address }, messaging_type: 'RESPONSE', message: { text: message } },
  }),
  checkRequest: ({ account, root }) => ({
    method: 'GET',
    url: endpoint(root, `/${encodeURIComponent(account.secret_key!.trim())}`, { fields: 'id,name' }),
    headers: { authorization: `Bearer ${account.token}` },
  }),
  read(res) {
    const failure = graphError(res);
    if (failure) return failure;
    if (res.status < 200 || res.status >= 300) return null;
    const body = bodyObject(res);
    if (res.call === 'check') {
      const id = pick(body, ['id']);
      return id ? { kind: 'sent', messageId: null, state: 'sent', detail: `messenger: page ${id}` } : null;
    }
    const mid = pick(body, ['message_id']);
    return mid ? { kind: 'sent', messageId: mid, state: 'sent', detail: 'messenger: sent' } : null;
  },
});

/**
 * Reads a Messenger Platform webhook (issue 11 item 1). Sources: Meta "Webhook Events Reference"
 * and its pages "messages", "message_echoes", "message_deliveries", "message_reads",
 * https://developers.facebook.com/docs/messenger-platform/reference/webhook-events: `{object:
 * 'page', entry: [{id: <page id>, time, messaging: [...]}]}`; a messaging item `{sender: {id:
 * PSID}, recipient: {id: page id}, timestamp (ms), message: {mid, text, attachments, is_echo}}`,
 * or `delivery: {mids, watermark}`, or `read: {watermark}`. Echoes (`is_echo`, the page's own
 * messages) and other items (postbacks, reactions, `standby`) are ignored.
 * @returns the items (one per messaging item), or null when the body is not Messenger's shape
 */
export function parseInbound(body: Record<string, unknown>): InboundItem[] | null {
  if (body.object !== 'page' || !Array.isArray(body.entry)) return null;
  const items: InboundItem[] = [];
  for (const e of body.entry) {
    const entry = obj(e);
    const list = entry && Array.isArray(entry.messaging) ? entry.messaging : [];
    for (const m of list) {
      const ev = obj(m);
      const psid = str(obj(ev?.sender)?.id);
      const page = str(obj(ev?.recipient)?.id) ?? str(entry?.id);
      const message = obj(ev?.message);
      const delivery = obj(ev?.delivery);
      const read = obj(ev?.read);
      if (message && flag(message.is_echo)) items.push({ kind: 'ignored', reason: 'messenger: echo' });
      else if (message && psid) {
        const attachments = Array.isArray(message.attachments) ? message.attachments : [];
        items.push({
          kind: 'message',
          messageId: str(message.mid),
          chat: psid,
          chatKind: 'conversation',
          member: null,
          senderName: null,
          text: textOf(message.text, str(obj(attachments[0])?.type) ?? 'attachment'),
          fromMe: false,
          at: inboundTime(ev?.timestamp),
          accountRef: page,
        });
      } else if (delivery && Array.isArray(delivery.mids)) {
        for (const mid of delivery.mids) {
          const id = str(mid);
          if (id)
            items.push({
              kind: 'receipt',
              messageId: id,
              status: 'delivered',
              at: inboundTime(delivery.watermark),
              error: null,
              accountRef: page,
            });
        }
      } else if (read && psid && inboundTime(read.watermark)) {
        items.push({ kind: 'read_watermark', chat: psid, watermark: inboundTime(read.watermark)!, accountRef: page });
      } else items.push({ kind: 'ignored', reason: 'messenger: not a message, delivery or read' });
    }
  }
  return items;
}
