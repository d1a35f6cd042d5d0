import { bodyObject, falsy, pick, refusal, truthy } from './classify.js';
import { chatOf, flag, isGroupJid, jidUser, receiptStatus, str, textOf, timeOf, type InboundItem } from './inbound.js';
import { defineProvider, endpoint, present } from './define.js';

/**
 * RuangWA (<provider_3>). Sources: the spec ("<provider_3> sends with POST /send_message and
 * payload api_key, number, message"; its wa_token is the API key, wa_secret_key empty), and public
 * integrations of https://app.ruangwa.id/api/send_message (form-encoded POST; group ids such as
 * `62812xxxxxx-xxxxx` go in `number`), e.g. the PHP samples indexed from GitHub. Spec shapes win
 * over those samples (which name the key `token`).
 * - Base URL: manual; empty means the documented root https://app.ruangwa.id/api (decision).
 * - Send: POST {base}/send_message, form fields api_key, number, message.
 * - Answer: read generously (`result`/`status`/`success` true or false, `message`, an `id`);
 *   a 2xx that says neither is `ambiguous`, never `sent`.
 * - Check: RuangWA documents no read-only call, so checkConnection verifies the configuration
 *   only (`not_checked`).
 */
export const ruangwa = defineProvider({
  name: 'ruangwa',
  baseUrlRule: 'optional',
  defaultBaseUrl: 'https://app.ruangwa.id/api',
  recipientKinds: ['phone', 'group'],
  checkAccount: (a) => (present(a.token) ? null : 'ruangwa needs the API key.'),
  sendRequest: ({ account, root }, address, _kind, message) => ({
    method: 'POST',
    url: endpoint(root, '/send_message'),
    headers: {},
    form: new URLSearchParams({ api_key: account.token!, number: address, message }),
  }),
  checkRequest: () => null,
  read(res) {
    const body = bodyObject(res);
    if (!body) return null;
    const flag = 'result' in body ? body.result : 'status' in body ? body.status : body.success;
    const text = pick(body, ['message'], ['reason'], ['error']) ?? '';
    if (falsy(flag)) return refusal(res, text);
    if (!truthy(flag) || res.status < 200 || res.status >= 300) return null;
    return {
      kind: 'sent',
      messageId: pick(body, ['id'], ['message_id'], ['data', 'id']),
      state: 'sent',
      detail: `ruangwa: ${text || 'accepted'}`,
    };
  },
});

/**
 * Reads a RuangWA webhook (issue 11 item 1). RuangWA's webhook payload is not in the material we
 * could consult (decision, docs/decisions.md issue 11): it is read in the spec's own vocabulary of
 * RuangWA (`number`, `message`, as its send API names them), JSON or form, with the optional
 * fields gateways of its kind send: `id` / `message_id`, `is_group` / `isGroup`, `participant` /
 * `member`, `from_me` / `fromMe`, `pushname` / `name`, `device`, `timestamp`; and a status report
 * `{id, status}` with `number`.
 * @returns the items, or null when the body has no `number`
 */
export function parseInbound(body: Record<string, unknown>): InboundItem[] | null {
  const number = str(body.number);
  if (!number) return null;
  const accountRef = str(body.device);
  if ('message' in body) {
    const isGroup = flag(body.is_group) || flag(body.isGroup) || isGroupJid(number);
    const { chat, chatKind } = chatOf(number, isGroup);
    const member = str(body.participant) ?? str(body.member);
    return [
      {
        kind: 'message',
        messageId: str(body.id) ?? str(body.message_id),
        chat,
        chatKind,
        member: isGroup && member ? jidUser(member) : null,
        senderName: str(body.pushname) ?? str(body.name),
        text: textOf(body.message, body.type),
        fromMe: flag(body.from_me) || flag(body.fromMe),
        at: timeOf(body.timestamp),
        accountRef,
      },
    ];
  }
  const id = str(body.id) ?? str(body.message_id);
  const status = receiptStatus(body.status);
  if (id && status)
    return [{ kind: 'receipt', messageId: id, status, at: timeOf(body.timestamp), error: null, accountRef }];
  return [{ kind: 'ignored', reason: 'ruangwa: neither a message nor a delivery status' }];
}
