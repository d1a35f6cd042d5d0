import { bodyObject, falsy, pick, permanent, refusal, shortText, truthy } from './classify.js';
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
