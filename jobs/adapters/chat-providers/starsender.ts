import { bodyObject, falsy, pick, refusal, truthy } from './classify.js';
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
