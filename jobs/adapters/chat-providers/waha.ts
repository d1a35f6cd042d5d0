import { bodyObject, permanent, pick, refusal, shortText } from './classify.js';
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
