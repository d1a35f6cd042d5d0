import { bodyObject, falsy, pick, refusal, truthy } from './classify.js';
import { chatOf, flag, jidUser, str, textOf, timeOf, type InboundItem } from './inbound.js';
import { defineProvider, present } from './define.js';

/**
 * StarSender (<provider_7>), API v3. Source: StarSender API documentation,
 * https://starsender.online/documentation ("Send Message": POST https://api.starsender.online/api/send
 * with `Authorization: <device API key>` and JSON {messageType: 'text', to, body}; "WhatsApp
 * groups": GET /api/whatsapp/groups with the device key; answers `{success, message, data}`),
 * as used by the public integrations indexed from GitHub.
 * - Base URL: fixed https://api.starsender.online/api.
 * - Credentials (spec): device key = wa_token.
 * - Send: POST /send {messageType: 'text', to, body}; a group id goes in `to` untouched.
 * - Answer: `{success: true, message: 'Success sent message', data: {...}}`; a refusal
 *   `{success: false, message}`.
 * - Check: GET /whatsapp/groups (read-only, authenticated by the device key).
 */
export const starsender = defineProvider({
  name: 'starsender',
  baseUrlRule: 'fixed',
  defaultBaseUrl: 'https://api.starsender.online/api',
  recipientKinds: ['phone', 'group'],
  checkAccount: (a) => (present(a.token) ? null : 'starsender needs the device API key.'),
  sendRequest: ({ account, root }, address, _kind, message) => ({
    method: 'POST',
    url: new URL(`${root}/send`),
    headers: { authorization: account.token! },
    json: { messageType: 'text', to: address, body: message },
  }),
  checkRequest: ({ account, root }) => ({
    method: 'GET',
    url: new URL(`${root}/whatsapp/groups`),
    headers: { authorization: account.token! },
  }),
  read(res) {
    const body = bodyObject(res);
    if (!body || !('success' in body)) return null;
    const text = pick(body, ['message']) ?? '';
    if (falsy(body.success)) return refusal(res, text);
    if (!truthy(body.success) || res.status < 200 || res.status >= 300) return null;
    if (res.call === 'check') return { kind: 'sent', messageId: null, state: 'sent', detail: 'starsender: key valid' };
    return {
      kind: 'sent',
      messageId: pick(body, ['data', 'id'], ['data', 'message_id'], ['data', 'messageId']),
      state: 'sent',
      detail: `starsender: ${text || 'accepted'}`,
    };
  },
});

/**
 * Reads a StarSender webhook (issue 11 item 1). StarSender's webhook payload is not in the
 * material we could consult (decision, docs/decisions.md issue 11); it is read in StarSender's
 * send vocabulary: `{from, message | body, id | message_id, isGroup | is_group, participant,
 * pushName | name, fromMe, device, timestamp}`, JSON or form, `from` a number or a jid.
 * @returns the items, or null when the body has no `from` with a message
 */
export function parseInbound(body: Record<string, unknown>): InboundItem[] | null {
  const from = str(body.from);
  if (!from || !('message' in body || 'body' in body) || 'event' in body || 'payload' in body) return null;
  const { chat, chatKind } = chatOf(from, flag(body.isGroup) || flag(body.is_group));
  const member = str(body.participant) ?? str(body.member);
  return [
    {
      kind: 'message',
      messageId: str(body.id) ?? str(body.message_id),
      chat,
      chatKind,
      member: chatKind === 'group' && member ? jidUser(member) : null,
      senderName: str(body.pushName) ?? str(body.name),
      text: textOf(body.message ?? body.body, body.type),
      fromMe: flag(body.fromMe) || flag(body.from_me),
      at: timeOf(body.timestamp),
      accountRef: str(body.device),
    },
  ];
}
