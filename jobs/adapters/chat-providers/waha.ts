import { bodyObject, permanent, pick, refusal, shortText } from './classify.js';
import {
  chatOf,
  flag,
  jidUser,
  obj,
  receiptStatus,
  str,
  textOf,
  timeOf,
  type InboundItem,
  type InboundReceipt,
} from './inbound.js';
import { defineProvider, endpoint, present } from './define.js';

/**
 * WAHA, WhatsApp HTTP API (<provider_4>), self-hosted. Source: WAHA docs "Send messages",
 * https://waha.devlike.pro/docs/how-to/send-messages/ (POST /api/sendText with session, chatId,
 * text; chat ids `<digits>@c.us`, groups `<id>@g.us`) and "Sessions" / "Security"
 * (GET /api/sessions/{session}; the `X-Api-Key` header), https://waha.devlike.pro/docs/how-to/.
 * - Base URL: the WAHA server, manual and required.
 * - Credentials (decision): token = X-Api-Key (omitted when empty), secret_key = session name
 *   (default `default`).
 * - Send: POST {base}/api/sendText JSON {session, chatId, text}; a phone becomes `<digits>@c.us`,
 *   a group id passes untouched.
 * - Answer: 200/201 with the message (`id` as a string, `id._serialized` or `key.id` by engine):
 *   state 'sent'. 401 bad key; 404 unknown session (invalid_config); 422 session not WORKING
 *   (device_disconnected); 500 ambiguous.
 * - Check: GET {base}/api/sessions/{session}: `status: 'WORKING'` is connected.
 */
const session = (secret: string | null | undefined) => (present(secret) ? secret.trim() : 'default');
const apiKey = (token: string | null | undefined): Record<string, string> =>
  present(token) ? { 'x-api-key': token } : {};

export const waha = defineProvider({
  name: 'waha',
  baseUrlRule: 'required',
  defaultBaseUrl: null,
  recipientKinds: ['phone', 'group'],
  checkAccount: () => null,
  sendRequest: ({ account, root }, address, _kind, message) => ({
    method: 'POST',
    url: endpoint(root, '/api/sendText'),
    headers: apiKey(account.token),
    json: { session: session(account.secret_key), chatId: address, text: message },
  }),
  checkRequest: ({ account, root }) => ({
    method: 'GET',
    url: endpoint(root, `/api/sessions/${encodeURIComponent(session(account.secret_key))}`),
    headers: apiKey(account.token),
  }),
  read(res) {
    const body = bodyObject(res);
    const text = pick(body, ['message'], ['error'], ['exception', 'message']) ?? shortText(res.text);
    if (res.status === 404)
      return permanent('invalid_config', `waha: unknown session or path (HTTP 404)${text ? `: ${text}` : ''}`);
    if (res.status === 422)
      return permanent('device_disconnected', `waha: the session is not working${text ? `: ${text}` : ''}`);
    if (res.status === 400) return refusal(res, text);
    if (res.status < 200 || res.status >= 300 || !body) return null;
    if (res.call === 'check') {
      const status = pick(body, ['status']);
      if (status === 'WORKING')
        return { kind: 'sent', messageId: null, state: 'sent', detail: 'waha: session WORKING' };
      return status ? permanent('device_disconnected', `waha: session ${status}`) : null;
    }
    const id = pick(body, ['id'], ['id', '_serialized'], ['key', 'id'], ['id', 'id']);
    return id ? { kind: 'sent', messageId: id, state: 'sent', detail: 'waha: sent' } : null;
  },
});

/** WAHA's message.ack values (WAHA "Events": ack -1 ERROR, 0 PENDING, 1 SERVER, 2 DEVICE, 3 READ, 4 PLAYED). */
const WAHA_ACK: Record<string, InboundReceipt['status'] | null> = {
  '-1': 'failed',
  '0': null,
  '1': 'sent',
  '2': 'delivered',
  '3': 'read',
  '4': 'read',
};

/**
 * Reads a WAHA webhook (issue 11 item 1). Source: WAHA docs "Webhooks",
 * https://waha.devlike.pro/docs/how-to/webhooks/ ("Webhook payload": `{event, session, payload,
 * me, engine, ...}`; event `message`: payload {id, timestamp (s), from `<digits>@c.us` or
 * `<id>@g.us`, fromMe, to, participant (the member in a group), body, hasMedia, _data.notifyName};
 * `message.any` also carries our own; `message.ack`: payload {id, from, ack, ackName}). Other
 * events are recognised and ignored; `session` identifies the account (its secret key).
 * @returns the items, or null when the body is not WAHA's shape
 */
export function parseInbound(body: Record<string, unknown>): InboundItem[] | null {
  const event = str(body.event);
  const payload = obj(body.payload);
  if (!event || !payload || !('session' in body || 'engine' in body || 'me' in body)) return null;
  const accountRef = str(body.session);
  if (event === 'message' || event === 'message.any') {
    const from = str(payload.from);
    if (!from) return [{ kind: 'ignored', reason: 'waha: message without from' }];
    const fromMe = flag(payload.fromMe);
    const { chat, chatKind } = chatOf(fromMe ? (str(payload.to) ?? from) : from, false);
    const data = obj(payload._data);
    const participant = str(payload.participant) ?? str(payload.author);
    return [
      {
        kind: 'message',
        messageId: str(payload.id) ?? str(obj(payload.id)?._serialized),
        chat,
        chatKind,
        member: chatKind === 'group' && participant ? jidUser(participant) : null,
        senderName: str(data?.notifyName) ?? str(data?.pushName),
        text: textOf(payload.body, payload.hasMedia ? 'media' : payload.type),
        fromMe,
        at: timeOf(payload.timestamp),
        accountRef,
      },
    ];
  }
  if (event === 'message.ack') {
    const id = str(payload.id) ?? str(obj(payload.id)?._serialized);
    const ack = str(payload.ack);
    const status = (ack !== null ? WAHA_ACK[ack] : undefined) ?? receiptStatus(payload.ackName);
    if (!id || !status) return [{ kind: 'ignored', reason: `waha: ack ${ack ?? '?'}` }];
    return [{ kind: 'receipt', messageId: id, status, at: timeOf(payload.timestamp), error: null, accountRef }];
  }
  return [{ kind: 'ignored', reason: `waha: event ${event.slice(0, 40)}` }];
}
