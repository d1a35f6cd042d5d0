import { bodyObject, falsy, permanent, pick, refusal, truthy } from './classify.js';
import { chatOf, flag, jidUser, obj, str, textOf, timeOf, type InboundItem } from './inbound.js';
import { defineProvider, present } from './define.js';

/**
 * WatZap (<provider_6>). Source: WatZap API documentation (https://api.watzap.id/v1, "Dokumentasi
 * API Watzap.id"; copies indexed from public repositories): JSON bodies, response codes 200
 * success, 1002 invalid API key, 1003 invalid number key, 1004 pairing failed / access denied,
 * 1005 fatal error with a dynamic message, 1006 other error (given in the body's `status`).
 * - Base URL: fixed https://api.watzap.id/v1.
 * - Credentials (spec): api_key = wa_token, number_key = wa_secret_key, both required.
 * - Send: POST /send_message {api_key, number_key, phone_no, message}; a group:
 *   POST /send_message_group {api_key, number_key, group_id, message}.
 * - Answer: `{status: '200', message: 'Successfully', ack: 'successfully'}` (no message id).
 * - Check: POST /checking_key {api_key}: `{status: true, data: {licenses_key: [{key,
 *   is_connected}]}}`; the account's number_key must be listed and connected.
 */
const REDACTED = '[redacted]';

function codeOf(v: unknown): number | null {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^[0-9]+$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
}

export const watzap = defineProvider({
  name: 'watzap',
  baseUrlRule: 'fixed',
  defaultBaseUrl: 'https://api.watzap.id/v1',
  recipientKinds: ['phone', 'group'],
  checkAccount: (a) =>
    present(a.token) && present(a.secret_key) ? null : 'watzap needs the API key and the number key.',
  sendRequest: ({ account, root }, address, kind, message) =>
    kind === 'group'
      ? {
          method: 'POST',
          url: new URL(`${root}/send_message_group`),
          headers: {},
          json: { api_key: account.token, number_key: account.secret_key, group_id: address, message },
        }
      : {
          method: 'POST',
          url: new URL(`${root}/send_message`),
          headers: {},
          json: { api_key: account.token, number_key: account.secret_key, phone_no: address, message },
        },
  checkRequest: ({ account, root }) => ({
    method: 'POST',
    url: new URL(`${root}/checking_key`),
    headers: {},
    json: { api_key: account.token },
  }),
  read(res) {
    const body = bodyObject(res);
    if (!body || !('status' in body)) return null;
    const text = pick(body, ['message'], ['ack']) ?? '';
    const code = codeOf(body.status);
    if (code === 1002 || code === 1003) return permanent('auth_failed', `watzap: ${text || 'invalid key'} (${code})`);
    if (code === 1004) return permanent('device_disconnected', `watzap: ${text || 'pairing failed'} (${code})`);
    if (code === 1005) return { kind: 'ambiguous', detail: `watzap: ${text || 'fatal error'} (${code})` };
    if (code !== null && code !== 200) return refusal(res, `${text} (${code})`);
    if (falsy(body.status)) return refusal(res, text);
    if (res.status < 200 || res.status >= 300 || !(code === 200 || truthy(body.status))) return null;
    if (res.call === 'check') {
      // secrets are redacted from every outcome, so the account's own number key is the entry whose
      // key reads [redacted] (classify is pure and never sees the key itself)
      const data = body.data && typeof body.data === 'object' ? (body.data as { licenses_key?: unknown }) : {};
      const list = Array.isArray(data.licenses_key) ? (data.licenses_key as Array<Record<string, unknown>>) : [];
      const mine = list.find((k) => k && typeof k === 'object' && k.key === REDACTED);
      if (!mine) return permanent('auth_failed', "watzap: the number key is not among the API key's numbers");
      if (!truthy(mine.is_connected)) return permanent('device_disconnected', 'watzap: the number is not connected');
      return { kind: 'sent', messageId: null, state: 'sent', detail: 'watzap: key valid, number connected' };
    }
    return {
      kind: 'sent',
      messageId: pick(body, ['id'], ['message_id']),
      state: 'sent',
      detail: `watzap: ${text || 'accepted'}`,
    };
  },
});

/**
 * Reads a WatZap webhook (issue 11 item 1). WatZap's webhook payload is not in the material we
 * could consult (decision, docs/decisions.md issue 11); it is read as WatZap-style gateways post
 * it: `{type: 'incoming_chat', data: {chat_id: <digits>@c.us | <id>@g.us, message_id, name,
 * message_body, is_from_me, is_group, timestamp, participant}}`, flat bodies with the same names
 * accepted too. Another `type` is recognised and ignored.
 * @returns the items, or null when the body has neither `chat_id` nor `message_body`
 */
export function parseInbound(body: Record<string, unknown>): InboundItem[] | null {
  const data = obj(body.data) ?? body;
  const chatId = str(data.chat_id) ?? str(data.phone_no);
  if (!chatId || !('message_body' in data || 'message' in data)) return null;
  const type = str(body.type);
  if (type && !/incoming|message|chat/i.test(type))
    return [{ kind: 'ignored', reason: `watzap: ${type.slice(0, 40)}` }];
  const { chat, chatKind } = chatOf(chatId, flag(data.is_group));
  const member = str(data.participant) ?? str(data.sender);
  return [
    {
      kind: 'message',
      messageId: str(data.message_id) ?? str(data.id),
      chat,
      chatKind,
      member: chatKind === 'group' && member ? jidUser(member) : null,
      senderName: str(data.name),
      text: textOf(data.message_body ?? data.message, data.message_type),
      fromMe: flag(data.is_from_me) || flag(data.from_me),
      at: timeOf(data.timestamp),
      accountRef: str(data.number_key) ?? str(body.number_key),
    },
  ];
}
