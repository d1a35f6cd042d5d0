import { bodyObject, falsy, pick, permanent, refusal, truthy } from './classify.js';
import {
  chatOf,
  flag,
  isGroupJid,
  jidUser,
  obj,
  receiptStatus,
  str,
  textOf,
  timeOf,
  type InboundItem,
} from './inbound.js';
import { defineProvider, present } from './define.js';

/**
 * Fonnte (<provider_2>). Source: Fonnte docs, https://docs.fonnte.com/api-send-message/ ("API Send
 * Message") and https://docs.fonnte.com/ ("API get device profile", POST /device).
 * - Base URL: fixed https://api.fonnte.com (a configured base URL is refused).
 * - Auth: `Authorization: <token>` (the device token).
 * - Send: POST /send, form fields target, message, countryCode='0' (the number is already
 *   normalised; Fonnte documents 0 as "disable replacement"). A group id goes in target as is.
 * - Answer: `{status: true, detail: 'success! message in queue', id: ['80367170'], process:
 *   'pending', target: [...]}`; a refusal `{status: false, reason: 'token invalid' | 'target
 *   invalid' | ...}` with HTTP 200. Queued: state 'pending' with the first id.
 * - Check: POST /device answers `{status: true, device_status: 'connect'|'disconnect', ...}` or
 *   `{status: false, reason: 'token invalid'}`.
 */
export const fonnte = defineProvider({
  name: 'fonnte',
  baseUrlRule: 'fixed',
  defaultBaseUrl: 'https://api.fonnte.com',
  recipientKinds: ['phone', 'group'],
  checkAccount: (a) => (present(a.token) ? null : 'fonnte needs the device token.'),
  sendRequest: ({ account, root }, address, _kind, message) => ({
    method: 'POST',
    url: new URL(`${root}/send`),
    headers: { authorization: account.token! },
    form: new URLSearchParams({ target: address, message, countryCode: '0' }),
  }),
  checkRequest: ({ account, root }) => ({
    method: 'POST',
    url: new URL(`${root}/device`),
    headers: { authorization: account.token! },
    form: new URLSearchParams(),
  }),
  read(res) {
    const body = bodyObject(res);
    if (!body || !('status' in body)) return null;
    if (falsy(body.status)) return refusal(res, pick(body, ['reason'], ['detail'], ['message']) ?? '');
    if (!truthy(body.status) || res.status < 200 || res.status >= 300) return null;
    if (res.call === 'check') {
      const device = pick(body, ['device_status']);
      if (device && /disconnect/i.test(device))
        return permanent('device_disconnected', 'fonnte: the device is disconnected');
      return { kind: 'sent', messageId: null, state: 'sent', detail: `fonnte: device ${device ?? 'answered'}` };
    }
    const id = pick(body, ['id', 0], ['id']);
    const process = pick(body, ['process']);
    return {
      kind: 'sent',
      messageId: id,
      state: id && (!process || /pending|process|queue|wait/i.test(process)) ? 'pending' : 'sent',
      detail: `fonnte: ${pick(body, ['detail']) ?? 'accepted'}`,
    };
  },
});

/**
 * Reads a Fonnte webhook (issue 11 item 1). Source: Fonnte docs "Webhook get message" and
 * "Webhook update status", https://docs.fonnte.com/ (as read by public integrations indexed from
 * GitHub): an incoming message is `{device, sender, message, member, name, isgroup, inboxid,
 * timestamp, type, ...}` (older names `pengirim`, `pesan`), `device` the account's own number,
 * `sender` the phone or, in a group, the group jid and `member` the member (a number, or
 * `{jid, name}`); a status update is `{device, id, stateid, status|state}` without `sender`.
 * Fonnte has no own-message flag: a message whose sender is the device itself is the account's own.
 * `inboxid` (0 when none) is its message id.
 * @returns the items, or null when the body is not Fonnte's shape
 */
export function parseInbound(body: Record<string, unknown>): InboundItem[] | null {
  const device = str(body.device);
  const sender = str(body.sender) ?? str(body.pengirim);
  const hasText = 'message' in body || 'pesan' in body;
  if (sender && hasText && (device || 'member' in body || 'inboxid' in body)) {
    const memberObj = obj(body.member);
    const memberRaw = memberObj ? str(memberObj.jid) : str(body.member);
    const isGroup = flag(body.isgroup) || isGroupJid(sender);
    const { chat, chatKind } = chatOf(sender, isGroup);
    const inbox = str(body.inboxid);
    return [
      {
        kind: 'message',
        messageId: inbox && inbox !== '0' ? inbox : str(body.id),
        chat,
        chatKind,
        member: isGroup && memberRaw ? jidUser(memberRaw) : null,
        senderName: str(body.name) ?? str(memberObj?.name) ?? str(body.pushname),
        text: textOf(body.message ?? body.pesan ?? body.text, body.type),
        fromMe: !!device && !isGroup && digitsOf(device) === digitsOf(chat),
        at: timeOf(body.timestamp),
        accountRef: device,
      },
    ];
  }
  const id = str(body.id);
  if (!sender && id && ('status' in body || 'state' in body) && (device || 'stateid' in body)) {
    const status = receiptStatus(body.state) ?? receiptStatus(body.status);
    if (!status) return [{ kind: 'ignored', reason: 'fonnte: status without a delivery state' }];
    return [{ kind: 'receipt', messageId: id, status, at: timeOf(body.timestamp), error: null, accountRef: device }];
  }
  return null;
}

/** Digits of a number as written, a leading 0 read as Indonesia's trunk prefix (own-message check only). */
function digitsOf(v: string): string {
  const d = v.replace(/\D/g, '');
  return d.startsWith('0') ? `62${d.slice(1)}` : d;
}
