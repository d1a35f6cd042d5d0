import { bodyObject, falsy, pick, refusal, truthy } from './classify.js';
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
