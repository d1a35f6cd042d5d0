import { bodyObject, falsy, pick, permanent, refusal, shortText, truthy } from './classify.js';
import { chatOf, flag, isGroupJid, obj, receiptStatus, str, textOf, timeOf, type InboundItem } from './inbound.js';
import { defineProvider, endpoint, present } from './define.js';

/**
 * Wablas (<provider_1>). Source: Wablas "Documentation API Gateway",
 * https://wablas.com/documentation/api (sections "Single Send Text", "Send Message to Group",
 * "Device Info"; a copy of the page is in the public index as "Documentation API Wablas").
 * - Base URL: the account's Wablas server (e.g. https://bdg.wablas.com), manual and required.
 * - Auth: `Authorization: <token>` or `Authorization: <token>.<secret_key>` when a secret key is set.
 * - Send: POST {base}/api/send-message, form fields phone, message, isGroup ('true' for a group
 *   id, else 'false'; Wablas documents it as a string).
 * - Answer: `{status: true, message, data: {messages: [{id, phone, message, status: 'pending'}]}}`
 *   (or `data.message[...]` with `device_id`, `quota`); a refusal is `{status: false, message}`
 *   with HTTP 200 or 4xx. Accepted messages are queued: state 'pending' with the id (the realtime
 *   report of sync-status follows them).
 * - Check: GET {base}/api/device/info?token=<token> (the documented form) answers
 *   `{status: true, data: {status: 'connected'|'disconnected', ...}}`.
 */
export const wablas = defineProvider({
  name: 'wablas',
  baseUrlRule: 'required',
  defaultBaseUrl: null,
  recipientKinds: ['phone', 'group'],
  checkAccount: (a) => (present(a.token) ? null : 'wablas needs the device token.'),
  sendRequest: ({ account, root }, address, kind, message) => ({
    method: 'POST',
    url: endpoint(root, '/api/send-message'),
    headers: {
      authorization: present(account.secret_key) ? `${account.token}.${account.secret_key}` : account.token!,
    },
    form: new URLSearchParams({ phone: address, message, isGroup: kind === 'group' ? 'true' : 'false' }),
  }),
  checkRequest: ({ account, root }) => ({
    method: 'GET',
    url: endpoint(root, '/api/device/info', { token: account.token! }),
    headers: {},
  }),
  read(res) {
    const body = bodyObject(res);
    if (!body || !('status' in body)) return null;
    const text = typeof body.message === 'string' ? body.message : shortText(res.text);
    if (falsy(body.status)) return refusal(res, text);
    if (!truthy(body.status) || res.status < 200 || res.status >= 300) return null;
    if (res.call === 'check') {
      const device = pick(body, ['data', 'status']);
      if (device && /disconnect/i.test(device))
        return permanent('device_disconnected', 'wablas: the device is disconnected');
      return { kind: 'sent', messageId: null, state: 'sent', detail: `wablas: device ${device ?? 'answered'}` };
    }
    const id = pick(body, ['data', 'messages', 0, 'id'], ['data', 'message', 0, 'id'], ['data', 'id']);
    const state = pick(body, ['data', 'messages', 0, 'status'], ['data', 'message', 0, 'status']);
    if (state && /fail|invalid|reject/i.test(state)) return refusal(res, `${state} ${text}`);
    return {
      kind: 'sent',
      messageId: id,
      state: id && (!state || /pending|queue|process/i.test(state)) ? 'pending' : 'sent',
      detail: `wablas: ${text || 'accepted'}`,
    };
  },
});

/**
 * Reads a Wablas webhook (issue 11 item 1). Source: Wablas "Documentation API Gateway",
 * https://wablas.com/documentation/api, section "Webhook" (as read by public integrations, e.g. a
 * CodeIgniter `WablasIntegration` module indexed from GitHub): an incoming message is
 * `{id, phone, message, pushName, isGroup, group: {group_id, sender, subject}, messageType, file,
 * deviceId, sender, isFromMe, timestamp}` (JSON or form), where `phone` is the sender or, when
 * isGroup, the group and `group.sender` the member, `sender` the device's own number; a status report
 * ("tracking message") is `{id, phone, status, note, deviceId, sender}` without `message`.
 * @returns the items, or null when the body is not Wablas's shape
 */
export function parseInbound(body: Record<string, unknown>): InboundItem[] | null {
  const phone = str(body.phone);
  const accountRef = str(body.sender) ?? str(body.deviceId);
  if (phone && 'message' in body) {
    const group = obj(body.group);
    const isGroup = flag(body.isGroup) || isGroupJid(phone);
    const { chat, chatKind } = chatOf(str(group?.group_id) ?? phone, isGroup);
    return [
      {
        kind: 'message',
        messageId: str(body.id),
        chat,
        chatKind,
        member: isGroup ? (str(group?.sender) ?? str(body.participant)) : null,
        senderName: str(body.pushName) ?? str(body.pushname),
        text: textOf(body.message, body.messageType),
        fromMe: flag(body.isFromMe) || flag(body.fromMe),
        at: timeOf(body.timestamp),
        accountRef,
      },
    ];
  }
  const id = str(body.id);
  if (id && 'status' in body && (phone || str(body.deviceId))) {
    const status = receiptStatus(body.status);
    if (!status) return [{ kind: 'ignored', reason: `wablas: status ${str(body.status) ?? '?'}` }];
    return [
      {
        kind: 'receipt',
        messageId: id,
        status,
        at: timeOf(body.timestamp),
        error: status === 'failed' ? (str(body.note) ?? str(body.status)) : null,
        accountRef,
      },
    ];
  }
  return null;
}
